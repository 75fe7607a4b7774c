/* The CRC-32 of a byte range: zlib's polynomial and value (the one Python's
 * zlib.crc32 computes), from ISA-L where CMake found it (crc32_gzip_refl,
 * with the carry-less multiply of modern x86 and Arm: 11 GB/s here against
 * zlib's 2), else from zlib. CMake compiles one of crc32_isal.c and
 * crc32_zlib.c; both give the same value, which checksum=crc32 records. */
#ifndef TSR_CORE_CRC32_H
#define TSR_CORE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32 of @p n bytes at @p p. */
uint32_t tsr__crc32(const void *p, size_t n);
/* Which library computes it ("isa-l" or "zlib"), for messages and docs. */
const char *tsr__crc32_library(void);

#endif
