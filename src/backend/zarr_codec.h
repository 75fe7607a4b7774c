/* Zstandard for Zarr chunks (format=zarr, backend/zarr.c): zarr_zstd.c over
 * libzstd when CMake found it, else zarr_zstd_off.c, which answers that it is
 * not built (CMake picks the file; no #ifdef in the backend). */
#ifndef TSR_BACKEND_ZARR_CODEC_H
#define TSR_BACKEND_ZARR_CODEC_H

#include <stddef.h>

/* 1 when zstd= can be served. */
int tsr__zarr_zstd_built(void);

/* Compress @p n bytes at @p src at @p level into *out (grown as needed, *cap
 * its size); *outlen the compressed bytes. 0, or -1 with the library's reason
 * in @p why. A frame without checksum, as Zarr's zstd codec writes by default. */
int tsr__zarr_zstd(const void *src, size_t n, int level, unsigned char **out, size_t *cap,
                   size_t *outlen, char *why, size_t whylen);

/* Decompress the zstd frame of @p n bytes at @p src into exactly @p dstlen
 * bytes at @p dst. 0, or -1 with the reason in @p why (also when the frame
 * holds another number of bytes). */
int tsr__zarr_unzstd(const void *src, size_t n, void *dst, size_t dstlen, char *why,
                     size_t whylen);

#endif
