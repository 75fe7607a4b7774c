/* Built without libzstd: zstd= answers TSR_ENOTBUILT (backend/zarr_codec.h). */
#include "backend/zarr_codec.h"

#include <stdio.h>

int tsr__zarr_zstd_built(void) { return 0; }

int tsr__zarr_zstd(const void *src, size_t n, int level, unsigned char **out, size_t *cap,
                   size_t *outlen, char *why, size_t whylen) {
  (void)src, (void)n, (void)level, (void)out, (void)cap, (void)outlen;
  snprintf(why, whylen, "libzstd was not found when Tessera was built");
  return -1;
}

int tsr__zarr_unzstd(const void *src, size_t n, void *dst, size_t dstlen, char *why,
                     size_t whylen) {
  (void)src, (void)n, (void)dst, (void)dstlen;
  snprintf(why, whylen, "libzstd was not found when Tessera was built");
  return -1;
}
