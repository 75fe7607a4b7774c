#include "plan/box.h"

#include <string.h>

int64_t tsr__box_elems(int nd, const tsr__box *b) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= b->count[i];
  return n;
}

int tsr__box_intersect(int nd, const tsr__box *a, const tsr__box *b, tsr__box *out) {
  for (int i = 0; i < nd; i++) {
    int64_t lo = a->start[i] > b->start[i] ? a->start[i] : b->start[i];
    int64_t ahi = a->start[i] + a->count[i], bhi = b->start[i] + b->count[i];
    int64_t hi = ahi < bhi ? ahi : bhi;
    if (hi <= lo) return 0;
    out->start[i] = lo;
    out->count[i] = hi - lo;
  }
  return 1;
}

/* Boxes for the flat range [lo, hi) over dimensions depth..nd-1, with the
 * indices of the dimensions before depth fixed to prefix[]. Three parts: a
 * partial first row, a block of whole rows, a partial last row. */
static int range_boxes(int nd, const int64_t shape[], int64_t lo, int64_t hi, tsr__box *out,
                       int depth, const int64_t prefix[]) {
  if (hi <= lo) return 0;
  int64_t inner = 1;
  for (int i = depth + 1; i < nd; i++) inner *= shape[i];
  int64_t pre[TSR_MAX_DIMS];
  for (int i = 0; i < depth; i++) pre[i] = prefix[i];
  int64_t a = lo / inner, b = hi / inner, alo = lo % inner, bhi = hi % inner;
  if (a == b) { /* inside one row (only possible when inner > 1) */
    pre[depth] = a;
    return range_boxes(nd, shape, alo, bhi, out, depth + 1, pre);
  }
  int n = 0;
  if (alo != 0) {
    pre[depth] = a;
    n += range_boxes(nd, shape, alo, inner, out + n, depth + 1, pre);
    a++;
  }
  if (b > a) {
    tsr__box *bx = &out[n++];
    for (int i = 0; i < depth; i++) {
      bx->start[i] = pre[i];
      bx->count[i] = 1;
    }
    bx->start[depth] = a;
    bx->count[depth] = b - a;
    for (int i = depth + 1; i < nd; i++) {
      bx->start[i] = 0;
      bx->count[i] = shape[i];
    }
  }
  if (bhi != 0) {
    pre[depth] = b;
    n += range_boxes(nd, shape, 0, bhi, out + n, depth + 1, pre);
  }
  return n;
}

int tsr__flat_range_boxes(int nd, const int64_t shape[], int64_t lo, int64_t hi, tsr__box *out) {
  if (nd == 0) {
    if (hi <= lo) return 0;
    return 1; /* a scalar: one empty-shaped box */
  }
  return range_boxes(nd, shape, lo, hi, out, 0, NULL);
}

void tsr__copy_box(int nd, const tsr__box *region, size_t esize, const void *src,
                   const int64_t src_origin[], const int64_t src_shape[], void *dst,
                   const int64_t dst_origin[], const int64_t dst_shape[]) {
  if (nd == 0) {
    memcpy(dst, src, esize);
    return;
  }
  int64_t sstride[TSR_MAX_DIMS], dstride[TSR_MAX_DIMS];
  sstride[nd - 1] = dstride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) {
    sstride[i] = sstride[i + 1] * src_shape[i + 1];
    dstride[i] = dstride[i + 1] * dst_shape[i + 1];
  }
  /* A row is dimensions [inner, nd): the trailing dimensions that the
   * region, the source and the destination all hold whole are contiguous in
   * both, so a whole tile is one memcpy, not one per row of its fastest
   * dimension (the I/O servers' hand-off copies tiles this way). */
  int inner = nd - 1;
  int64_t rowelems = region->count[nd - 1];
  while (inner > 0 && region->count[inner] == src_shape[inner] &&
         region->count[inner] == dst_shape[inner]) {
    inner--;
    rowelems *= region->count[inner];
  }
  int64_t rows = 1;
  for (int i = 0; i < inner; i++) rows *= region->count[i];
  if (rows == 0 || rowelems == 0) return;
  size_t rowbytes = (size_t)rowelems * esize;
  int64_t idx[TSR_MAX_DIMS] = {0}; /* odometer over the dimensions before inner */
  const char *s = src;
  char *d = dst;
  for (int64_t r = 0; r < rows; r++) {
    int64_t so = 0, doff = 0;
    for (int i = 0; i < nd; i++) {
      int64_t g = region->start[i] + (i < inner ? idx[i] : 0);
      so += (g - src_origin[i]) * sstride[i];
      doff += (g - dst_origin[i]) * dstride[i];
    }
    memcpy(d + doff * (int64_t)esize, s + so * (int64_t)esize, rowbytes);
    for (int i = inner - 1; i >= 0; i--) {
      if (++idx[i] < region->count[i]) break;
      idx[i] = 0;
    }
  }
}

void tsr__copy_box_ordered(int nd, const tsr__box *region, size_t esize, const void *src,
                           const int64_t src_origin[], const int64_t src_shape[],
                           const int order[], void *dst, const int64_t dst_origin[],
                           const int64_t dst_shape[]) {
  int64_t sstride[TSR_MAX_DIMS], dstride[TSR_MAX_DIMS], s = 1;
  for (int k = nd - 1; k >= 0; k--) { /* memory position k holds file dimension order[k] */
    sstride[order[k]] = s;
    s *= src_shape[order[k]];
  }
  dstride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) dstride[i] = dstride[i + 1] * dst_shape[i + 1];
  int64_t rows = 1, row = region->count[nd - 1];
  for (int i = 0; i < nd - 1; i++) rows *= region->count[i];
  if (rows == 0 || row == 0) return;
  int64_t es = (int64_t)esize, idx[TSR_MAX_DIMS] = {0};
  const char *sp = src;
  char *dp = dst;
  for (int64_t r = 0; r < rows; r++) {
    int64_t so = 0, doff = 0;
    for (int i = 0; i < nd; i++) {
      int64_t g = region->start[i] + (i < nd - 1 ? idx[i] : 0);
      so += (g - src_origin[i]) * sstride[i];
      doff += (g - dst_origin[i]) * dstride[i];
    }
    if (sstride[nd - 1] == 1) {
      memcpy(dp + doff * es, sp + so * es, (size_t)(row * es));
    } else {
      for (int64_t x = 0; x < row; x++)
        memcpy(dp + (doff + x) * es, sp + (so + x * sstride[nd - 1]) * es, esize);
    }
    for (int i = nd - 2; i >= 0; i--) {
      if (++idx[i] < region->count[i]) break;
      idx[i] = 0;
    }
  }
}

/* By element size, so the compiler moves each element as one load and store. */
#define GATHER(T)                                                                               \
  do {                                                                                          \
    T *d_ = dst;                                                                                \
    const T *s_ = src;                                                                          \
    for (int64_t k = 0; k < n; k++) d_[k] = s_[perm[k]];                                        \
  } while (0)
void tsr__gather(void *dst, const void *src, const int32_t *perm, int64_t n, size_t esize) {
  if (esize == 4) GATHER(int32_t);
  else if (esize == 8) GATHER(int64_t);
  else if (esize == 2) GATHER(int16_t);
  else if (esize == 1) GATHER(char);
  else
    for (int64_t k = 0; k < n; k++)
      memcpy((char *)dst + k * (int64_t)esize, (const char *)src + perm[k] * (int64_t)esize, esize);
}
#undef GATHER

void tsr__copy_box_perm(int nd, const tsr__box *region, size_t esize, const void *src,
                        const int32_t *perm, const int64_t src_origin[],
                        const int64_t src_shape[], void *dst, const int64_t dst_origin[],
                        const int64_t dst_shape[]) {
  if (nd == 0) {
    memcpy(dst, (const char *)src + perm[0] * (int64_t)esize, esize);
    return;
  }
  int64_t sstride[TSR_MAX_DIMS], dstride[TSR_MAX_DIMS];
  sstride[nd - 1] = dstride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) {
    sstride[i] = sstride[i + 1] * src_shape[i + 1];
    dstride[i] = dstride[i + 1] * dst_shape[i + 1];
  }
  int64_t rows = 1, row = region->count[nd - 1];
  for (int i = 0; i < nd - 1; i++) rows *= region->count[i];
  if (rows == 0 || row == 0) return;
  int64_t es = (int64_t)esize, idx[TSR_MAX_DIMS] = {0};
  char *dp = dst;
  for (int64_t r = 0; r < rows; r++) {
    int64_t so = 0, doff = 0;
    for (int i = 0; i < nd; i++) {
      int64_t g = region->start[i] + (i < nd - 1 ? idx[i] : 0);
      so += (g - src_origin[i]) * sstride[i];
      doff += (g - dst_origin[i]) * dstride[i];
    }
    tsr__gather(dp + doff * es, src, perm + so, row, esize);
    for (int i = nd - 2; i >= 0; i--) {
      if (++idx[i] < region->count[i]) break;
      idx[i] = 0;
    }
  }
}

void tsr__fill_elems(void *dst, const void *fill, size_t esize, int64_t n) {
  if (n <= 0) return;
  char *d = dst;
  memcpy(d, fill, esize);
  /* Doubling copies: log(n) memcpy calls instead of n. */
  int64_t done = 1;
  while (done < n) {
    int64_t m = done < n - done ? done : n - done;
    memcpy(d + done * (int64_t)esize, d, (size_t)(m * (int64_t)esize));
    done += m;
  }
}
