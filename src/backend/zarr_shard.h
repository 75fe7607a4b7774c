/* The Zarr v3 `sharding_indexed` codec (format=zarr with shards=): one file
 * per shard holds many inner chunks, each encoded with the array's codecs
 * (`bytes`, then zstd or gzip), then the shard index at the end: for every
 * inner chunk in C order its offset and length in the file, little-endian
 * uint64, both 2^64-1 for a chunk with no data. The index is encoded with
 * `bytes` (little-endian) alone: no crc32c (the specification makes it
 * optional, and no crc32c library is at hand); the reader takes indexes
 * with a crc32c too (other writers' default) but does not verify it. */
#ifndef TSR_BACKEND_ZARR_SHARD_H
#define TSR_BACKEND_ZARR_SHARD_H

#include <stddef.h>
#include <stdint.h>

/* Encodes one inner chunk of @p n bytes at @p chunk (which it may change in
 * place): *bytes and *len are the encoded bytes, valid until the next call.
 * 0 or a TSR_E* code (the callback says why on its own handle). */
typedef int (*tsr__zarr_encode_fn)(void *ctx, unsigned char *chunk, size_t n,
                                   const void **bytes, size_t *len);

/* A growing byte buffer for the shard's file. */
typedef struct {
  unsigned char *p;
  size_t len, cap;
} tsr__zbuf;

/* Shard @p shard (C order, @p nd dimensions of @p slen elements of @p esize
 * bytes) as its file in @p out: every inner chunk of shape @p inner that has
 * a point inside the array (@p inside[i]: the points of the shard inside the
 * array along i) encoded by @p enc, then the index. 0, TSR_ENOMEM, or the
 * encoder's code. */
int tsr__zarr_shard_encode(const unsigned char *shard, size_t esize, int nd, const int64_t slen[],
                           const int64_t inner[], const int64_t inside[], tsr__zarr_encode_fn enc,
                           void *ctx, tsr__zbuf *out);

/* Inner chunk @p pos (C order among @p ninner) of the shard file of
 * @p len bytes at @p file, whose index of @p ninner entries sits at the end
 * (@p at_end) or the start, followed by a crc32c when @p crc. 0 with *off
 * and *n; 1 when the chunk has no data (the fill value); -1 when the index
 * or the entry does not fit the file. */
int tsr__zarr_shard_find(const unsigned char *file, size_t len, int64_t ninner, int64_t pos,
                         int at_end, int crc, uint64_t *off, uint64_t *n);

#endif
