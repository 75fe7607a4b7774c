/* Boxes in index space and the arithmetic the write plans are made of:
 * intersection, splitting a flat (row-major) range into boxes, and copying a
 * box between two C-ordered arrays that each cover a larger box. */
#ifndef TSR_PLAN_BOX_H
#define TSR_PLAN_BOX_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

typedef struct {
  int64_t start[TSR_MAX_DIMS];
  int64_t count[TSR_MAX_DIMS];
} tsr__box;

int64_t tsr__box_elems(int nd, const tsr__box *b);
/* 1 and the intersection in *out when a and b share at least one point. */
int tsr__box_intersect(int nd, const tsr__box *a, const tsr__box *b, tsr__box *out);
/* Row-major flat index range [lo, hi) of an array of @p shape as at most
 * 2*nd-1 boxes, written to out; returns their number. */
int tsr__flat_range_boxes(int nd, const int64_t shape[], int64_t lo, int64_t hi, tsr__box *out);
/* Copy the elements of @p region (global indices) from array src, which holds
 * the box (src_origin, src_shape) C-ordered, into array dst holding
 * (dst_origin, dst_shape). Innermost rows move with memcpy, trailing
 * dimensions held whole by all three folded into one row. */
void tsr__copy_box(int nd, const tsr__box *region, size_t esize, const void *src,
                   const int64_t src_origin[], const int64_t src_shape[], void *dst,
                   const int64_t dst_origin[], const int64_t dst_shape[]);
/* tsr__copy_box from an array C-ordered over the box (src_origin, src_shape)
 * (both in file order) with its dimensions stored in the order order[]
 * (slowest first). Rows stay whole memcpy calls when the fastest file
 * dimension is also the fastest in memory (WRF's XZY). */
void tsr__copy_box_ordered(int nd, const tsr__box *region, size_t esize, const void *src,
                           const int64_t src_origin[], const int64_t src_shape[],
                           const int order[], void *dst, const int64_t dst_origin[],
                           const int64_t dst_shape[]);
/* tsr__copy_box from a permuted array: the element at C-order offset o of
 * the box (src_origin, src_shape) is src[perm[o]] (a shuffled index map). */
void tsr__copy_box_perm(int nd, const tsr__box *region, size_t esize, const void *src,
                        const int32_t *perm, const int64_t src_origin[],
                        const int64_t src_shape[], void *dst, const int64_t dst_origin[],
                        const int64_t dst_shape[]);
/* dst[k] = src[perm[k]] for k < n elements of esize bytes. */
void tsr__gather(void *dst, const void *src, const int32_t *perm, int64_t n, size_t esize);
/* Set n elements of esize bytes to the value at fill. */
void tsr__fill_elems(void *dst, const void *fill, size_t esize, int64_t n);

#endif
