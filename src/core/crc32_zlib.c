/* tsr__crc32 with zlib (core/crc32.h), when CMake did not find ISA-L. */
#include "core/crc32.h"

#include <zlib.h>

uint32_t tsr__crc32(const void *p, size_t n) { return (uint32_t)crc32_z(0, p, n); }

const char *tsr__crc32_library(void) { return "zlib"; }
