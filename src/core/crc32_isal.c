/* tsr__crc32 with ISA-L (core/crc32.h); CMake compiles it when it finds ISA-L. */
#include "core/crc32.h"

#include <isa-l/crc.h>

uint32_t tsr__crc32(const void *p, size_t n) {
  /* ISA-L takes a 64-bit length: a frame of any size in one call. */
  return crc32_gzip_refl(0, (const unsigned char *)p, (uint64_t)n);
}

const char *tsr__crc32_library(void) { return "isa-l"; }
