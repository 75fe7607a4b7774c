/* Zstandard through libzstd (contract in backend/zarr_codec.h). */
#include "backend/zarr_codec.h"

#include <stdio.h>
#include <stdlib.h>

#include <zstd.h>

int tsr__zarr_zstd_built(void) { return 1; }

int tsr__zarr_zstd(const void *src, size_t n, int level, unsigned char **out, size_t *cap,
                   size_t *outlen, char *why, size_t whylen) {
  size_t need = ZSTD_compressBound(n);
  if (need > *cap) {
    unsigned char *p = realloc(*out, need);
    if (!p) {
      snprintf(why, whylen, "out of memory");
      return -1;
    }
    *out = p;
    *cap = need;
  }
  /* ZSTD_compress writes the content size into the frame header and no
   * checksum: what numcodecs' Zstd (zarr-python's codec) writes and reads. */
  size_t r = ZSTD_compress(*out, *cap, src, n, level);
  if (ZSTD_isError(r)) {
    snprintf(why, whylen, "%s", ZSTD_getErrorName(r));
    return -1;
  }
  *outlen = r;
  return 0;
}

int tsr__zarr_unzstd(const void *src, size_t n, void *dst, size_t dstlen, char *why,
                     size_t whylen) {
  size_t r = ZSTD_decompress(dst, dstlen, src, n);
  if (ZSTD_isError(r)) {
    snprintf(why, whylen, "%s", ZSTD_getErrorName(r));
    return -1;
  }
  if (r != dstlen) {
    snprintf(why, whylen, "%zu bytes, expected %zu", r, dstlen);
    return -1;
  }
  return 0;
}
