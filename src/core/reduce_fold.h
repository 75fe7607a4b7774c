/* reduce=: the arithmetic of one statistic over runs of elements, shared by
 * the model ranks (api/reduce.c, api/reduce_write.c) and the I/O servers
 * (server/server_reduce.c), so that both fold and finish every element the
 * same way and the derived files are bit-identical whoever computed them
 * (docs/reductions.md, "Where and in which order it is computed"). */
#ifndef TSR_CORE_REDUCE_FOLD_H
#define TSR_CORE_REDUCE_FOLD_H

#include <stdint.h>

#include "tessera.h"

/* One statistic's accumulators over n elements. */
typedef struct {
  int op;         /* tsr__reduce_op */
  tsr_type type;  /* the source variable's type */
  double *sum;    /* mean, sum: the running sum; std: Welford's mean */
  double *m2;     /* std: Welford's sum of squared deviations */
  void *ext;      /* min, max: in the variable's type */
} tsr__rfold;

/* Bytes of accumulator per element of @p op for a variable of @p type. */
int64_t tsr__rfold_elem_bytes(int op, tsr_type type);
/* The type a statistic is written in: min and max keep the variable's;
 * count is an int; mean, sum and std are float for float variables and
 * double otherwise (double accumulation, cast once at the end). */
tsr_type tsr__rfold_out_type(int op, tsr_type type);
/* Allocate @p a's arrays for @p n elements (a->op, a->type set): 0 or
 * TSR_ENOMEM (nothing left allocated). */
int tsr__rfold_alloc(tsr__rfold *a, int64_t n);
void tsr__rfold_free(tsr__rfold *a);
/* Fold @p n values at @p x (the variable's type) into elements
 * [at, at+n), as the frame that follows @p before frames of the period
 * (0: the first, which starts the accumulators afresh). */
void tsr__rfold_run(tsr__rfold *a, int64_t before, const void *x, int64_t at, int64_t n);
/* The statistic over @p frames frames of elements [at, at+n), in its
 * output type, into @p out. */
void tsr__rfold_result(const tsr__rfold *a, int64_t frames, void *out, int64_t at, int64_t n);

#endif
