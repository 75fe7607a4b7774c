/* reduce=: one statistic's arithmetic (core/reduce_fold.h). Summation
 * order: each element in frame order, in double, starting from the first
 * frame's value; min and max propagate NaN as NumPy's do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/reduce_fold.h"
#include "core/reduce_spec.h"
#include "core/schema.h"

int64_t tsr__rfold_elem_bytes(int op, tsr_type type) {
  switch (op) {
  case TSR__RED_MEAN: case TSR__RED_SUM: return 8;
  case TSR__RED_STD: return 16;
  case TSR__RED_MIN: case TSR__RED_MAX: return (int64_t)tsr__type_size(type);
  default: return 0; /* count: the frames, the same for every element */
  }
}

tsr_type tsr__rfold_out_type(int op, tsr_type type) {
  if (op == TSR__RED_MIN || op == TSR__RED_MAX) return type;
  if (op == TSR__RED_COUNT) return TSR_INT;
  return type == TSR_FLOAT ? TSR_FLOAT : TSR_DOUBLE;
}

void tsr__rfold_free(tsr__rfold *a) {
  free(a->sum), free(a->m2), free(a->ext);
  a->sum = a->m2 = NULL;
  a->ext = NULL;
}

int tsr__rfold_alloc(tsr__rfold *a, int64_t n) {
  size_t m = (size_t)(n > 0 ? n : 1);
  int op = a->op;
  if (op == TSR__RED_MEAN || op == TSR__RED_SUM || op == TSR__RED_STD) a->sum = malloc(m * sizeof(double));
  if (op == TSR__RED_STD) a->m2 = malloc(m * sizeof(double));
  if (op == TSR__RED_MIN || op == TSR__RED_MAX) a->ext = malloc(m * tsr__type_size(a->type));
  if ((tsr__rfold_elem_bytes(op, a->type) >= 8 && !a->sum) || (op == TSR__RED_STD && !a->m2) ||
      ((op == TSR__RED_MIN || op == TSR__RED_MAX) && !a->ext)) {
    tsr__rfold_free(a);
    return TSR_ENOMEM;
  }
  return 0;
}

#define FOLD_RUN(T, SUFFIX)                                                                    \
  static void fold_##SUFFIX(tsr__rfold *a, int64_t before, const T *x, int64_t at, int64_t n) { \
    int first = before == 0;                                                                   \
    double k = (double)(before + 1);                                                           \
    switch (a->op) {                                                                           \
    case TSR__RED_MEAN: case TSR__RED_SUM:                                                     \
      for (int64_t i = 0; i < n; i++)                                                          \
        a->sum[at + i] = first ? (double)x[i] : a->sum[at + i] + (double)x[i];                 \
      break;                                                                                   \
    case TSR__RED_STD:                                                                         \
      for (int64_t i = 0; i < n; i++) {                                                        \
        double v = (double)x[i], m = first ? 0.0 : a->sum[at + i];                             \
        double d = v - m;                                                                      \
        m += d / k;                                                                            \
        a->sum[at + i] = m;                                                                    \
        a->m2[at + i] = (first ? 0.0 : a->m2[at + i]) + d * (v - m);                           \
      }                                                                                        \
      break;                                                                                   \
    case TSR__RED_MIN: case TSR__RED_MAX: {                                                    \
      T *e = (T *)a->ext + at;                                                                 \
      int mx = a->op == TSR__RED_MAX;                                                          \
      for (int64_t i = 0; i < n; i++) {                                                        \
        T v = x[i];                                                                            \
        if (first || v != v || (mx ? v > e[i] : v < e[i])) e[i] = v;                           \
      }                                                                                        \
      break;                                                                                   \
    }                                                                                          \
    default: break;                                                                            \
    }                                                                                          \
  }
FOLD_RUN(int8_t, i8)
FOLD_RUN(int16_t, i16)
FOLD_RUN(int32_t, i32)
FOLD_RUN(float, f32)
FOLD_RUN(double, f64)
FOLD_RUN(uint8_t, u8)
FOLD_RUN(uint16_t, u16)
FOLD_RUN(uint32_t, u32)
FOLD_RUN(int64_t, i64)
FOLD_RUN(uint64_t, u64)

void tsr__rfold_run(tsr__rfold *a, int64_t before, const void *x, int64_t at, int64_t n) {
  switch (a->type) {
  case TSR_BYTE: fold_i8(a, before, x, at, n); break;
  case TSR_SHORT: fold_i16(a, before, x, at, n); break;
  case TSR_INT: fold_i32(a, before, x, at, n); break;
  case TSR_FLOAT: fold_f32(a, before, x, at, n); break;
  case TSR_DOUBLE: fold_f64(a, before, x, at, n); break;
  case TSR_UBYTE: fold_u8(a, before, x, at, n); break;
  case TSR_USHORT: fold_u16(a, before, x, at, n); break;
  case TSR_UINT: fold_u32(a, before, x, at, n); break;
  case TSR_INT64: fold_i64(a, before, x, at, n); break;
  case TSR_UINT64: fold_u64(a, before, x, at, n); break;
  default: break;
  }
}

void tsr__rfold_result(const tsr__rfold *a, int64_t frames, void *out, int64_t at, int64_t n) {
  tsr_type ot = tsr__rfold_out_type(a->op, a->type);
  size_t es = tsr__type_size(ot);
  if (a->op == TSR__RED_MIN || a->op == TSR__RED_MAX) {
    memcpy(out, (const char *)a->ext + at * (int64_t)es, (size_t)n * es);
    return;
  }
  double f = (double)frames;
  for (int64_t i = 0; i < n; i++) {
    double v = 0;
    switch (a->op) {
    case TSR__RED_MEAN: v = a->sum[at + i] / f; break;
    case TSR__RED_SUM: v = a->sum[at + i]; break;
    case TSR__RED_STD: v = sqrt(a->m2[at + i] / f); break;
    default: break;
    }
    if (ot == TSR_FLOAT) ((float *)out)[i] = (float)v;
    else if (ot == TSR_DOUBLE) ((double *)out)[i] = v;
    else ((int32_t *)out)[i] = (int32_t)frames;
  }
}
