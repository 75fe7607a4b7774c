/* The Zarr v3 `sharding_indexed` codec (contract in backend/zarr_shard.h).
 *
 * The writer assembles a whole shard in memory (zarr.c treats it as its
 * chunk), so cutting it into inner chunks here is a copy per chunk and the
 * encoding is zarr.c's own, passed in; the index goes at the end because the
 * lengths are known only after the chunks are encoded. */
#include "backend/zarr_shard.h"

#include <stdlib.h>
#include <string.h>

#include "tessera.h"

#define EMPTY UINT64_MAX

static int grow(tsr__zbuf *b, size_t need) {
  if (b->len + need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 1 << 16;
  while (cap < b->len + need) cap *= 2;
  unsigned char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p, b->cap = cap;
  return 0;
}

static void put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

int tsr__zarr_shard_encode(const unsigned char *shard, size_t esize, int nd, const int64_t slen[],
                           const int64_t inner[], const int64_t inside[], tsr__zarr_encode_fn enc,
                           void *ctx, tsr__zbuf *out) {
  int64_t per[TSR_MAX_DIMS], ninner = 1, ielems = 1;
  for (int i = 0; i < nd; i++) {
    per[i] = slen[i] / inner[i];
    ninner *= per[i];
    ielems *= inner[i];
  }
  size_t isize = (size_t)ielems * esize, rowb = (size_t)inner[nd - 1] * esize;
  unsigned char *chunk = malloc(isize), *index = malloc((size_t)ninner * 16);
  int rc = chunk && index ? 0 : TSR_ENOMEM;
  out->len = 0;
  int64_t at[TSR_MAX_DIMS] = {0}; /* the inner chunk's coordinates in the shard */
  for (int64_t c = 0; c < ninner && !rc; c++) {
    int used = 1;
    for (int i = 0; i < nd; i++) used &= at[i] * inner[i] < inside[i];
    uint64_t off = EMPTY, len = EMPTY;
    if (used) {
      /* Gather the chunk's rows out of the shard, both in C order. */
      int64_t idx[TSR_MAX_DIMS] = {0}, rows = ielems / inner[nd - 1];
      for (int64_t r = 0; r < rows; r++) {
        int64_t o = 0;
        for (int i = 0; i < nd; i++) o = o * slen[i] + at[i] * inner[i] + (i < nd - 1 ? idx[i] : 0);
        memcpy(chunk + (size_t)r * rowb, shard + (size_t)o * esize, rowb);
        for (int i = nd - 2; i >= 0 && ++idx[i] == inner[i]; i--) idx[i] = 0;
      }
      const void *bytes;
      size_t n;
      rc = enc(ctx, chunk, isize, &bytes, &n);
      if (!rc && grow(out, n)) rc = TSR_ENOMEM;
      if (!rc) {
        memcpy(out->p + out->len, bytes, n);
        off = out->len, len = n;
        out->len += n;
      }
    }
    put_le64(index + 16 * c, off);
    put_le64(index + 16 * c + 8, len);
    for (int i = nd - 1; i >= 0 && ++at[i] == per[i]; i--) at[i] = 0;
  }
  if (!rc && grow(out, (size_t)ninner * 16)) rc = TSR_ENOMEM;
  if (!rc) {
    memcpy(out->p + out->len, index, (size_t)ninner * 16);
    out->len += (size_t)ninner * 16;
  }
  free(chunk);
  free(index);
  return rc;
}

int tsr__zarr_shard_find(const unsigned char *file, size_t len, int64_t ninner, int64_t pos,
                         int at_end, int crc, uint64_t *off, uint64_t *n) {
  size_t isz = (size_t)ninner * 16 + (crc ? 4 : 0);
  if (ninner < 1 || pos < 0 || pos >= ninner || isz > len) return -1;
  const unsigned char *e = file + (at_end ? len - isz : 0) + 16 * pos;
  *off = get_le64(e);
  *n = get_le64(e + 8);
  if (*off == EMPTY && *n == EMPTY) return 1;
  if (*off > len || *n > len - *off) return -1;
  return 0;
}
