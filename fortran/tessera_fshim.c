/* C side of the Fortran module: converts Fortran MPI handles and gives each
 * element type its own entry point, so Fortran interfaces never share a C
 * binding label. Fortran order (fastest dimension first, 1-based starts) is
 * converted here, once. */
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

int tsr_f_init(MPI_Fint comm, const char *hints, tsr_ctx **ctx, MPI_Fint *model) {
  MPI_Comm mc = MPI_COMM_NULL;
  int rc = tsr_init(MPI_Comm_f2c(comm), hints, ctx, &mc);
  *model = mc == MPI_COMM_NULL ? MPI_Comm_c2f(MPI_COMM_NULL) : MPI_Comm_c2f(mc);
  return rc;
}

/* Reverse a Fortran-ordered array into C order, shifting by @p shift. */
static void reverse(int n, const int64_t *in, int64_t *out, int64_t shift) {
  for (int i = 0; i < n; i++) out[i] = in[n - 1 - i] + shift;
}

int tsr_f_decomp_box(tsr_ctx *ctx, int ndims, const int64_t *gsize, const int64_t *start,
                     const int64_t *count, const int64_t *mstart, const int64_t *mcount,
                     int have_mem, tsr_decomp **d) {
  int64_t g[TSR_MAX_DIMS] = {0}, s[TSR_MAX_DIMS] = {0}, c[TSR_MAX_DIMS] = {0};
  int64_t ms[TSR_MAX_DIMS] = {0}, mc[TSR_MAX_DIMS] = {0};
  if (ndims < 1 || ndims > TSR_MAX_DIMS) return tsr_decomp_box(ctx, ndims, g, s, c, NULL, NULL, d);
  reverse(ndims, gsize, g, 0);
  reverse(ndims, start, s, -1);
  reverse(ndims, count, c, 0);
  if (have_mem) {
    reverse(ndims, mstart, ms, -1);
    reverse(ndims, mcount, mc, 0);
  }
  return tsr_decomp_box(ctx, ndims, g, s, c, have_mem ? ms : NULL, have_mem ? mc : NULL, d);
}

int tsr_f_def_var(tsr_file *f, const char *name, int type, int ndims, const int *dimids,
                  int *varid) {
  int ids[TSR_MAX_DIMS];
  for (int i = 0; i < ndims && i < TSR_MAX_DIMS; i++) ids[i] = dimids[ndims - 1 - i];
  return tsr_def_var(f, name, (tsr_type)type, ndims, ids, varid);
}

/* Frames are 1-based in Fortran, as in NetCDF-Fortran. */
int tsr_f_put_float(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const float *b) {
  return tsr_put(f, varid, frame - 1, d, b);
}
int tsr_f_put_double(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const double *b) {
  return tsr_put(f, varid, frame - 1, d, b);
}
int tsr_f_put_int(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const int *b) {
  return tsr_put(f, varid, frame - 1, d, b);
}
int tsr_f_put_global_text(tsr_file *f, int varid, int64_t frame, const char *b) {
  return tsr_put_global(f, varid, frame - 1, b);
}
int tsr_f_put_global_float(tsr_file *f, int varid, int64_t frame, const float *b) {
  return tsr_put_global(f, varid, frame - 1, b);
}
int tsr_f_put_att(tsr_file *f, int varid, const char *name, int type, int64_t n, const void *v) {
  return tsr_put_att(f, varid, name, (tsr_type)type, (size_t)n, v);
}
int tsr_f_get_float(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, float *b) {
  return tsr_get(f, varid, frame - 1, d, b);
}

/* The other element kinds of tsr_put / tsr_get (tessera_kinds_body.inc). */
#define TSR_F_PUTGET(suffix, ctype)                                                         \
  int tsr_f_put_##suffix(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,        \
                         const ctype *b) {                                                  \
    return tsr_put(f, varid, frame - 1, d, b);                                              \
  }                                                                                         \
  int tsr_f_get_##suffix(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, ctype *b) { \
    return tsr_get(f, varid, frame - 1, d, b);                                              \
  }
TSR_F_PUTGET(int8, int8_t)
TSR_F_PUTGET(int16, int16_t)
TSR_F_PUTGET(int64, int64_t)
int tsr_f_get_int(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, int *b) {
  return tsr_get(f, varid, frame - 1, d, b);
}
int tsr_f_get_double(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, double *b) {
  return tsr_get(f, varid, frame - 1, d, b);
}

/* Inquiry in Fortran order: dimensions fastest first. */
int tsr_f_inq_var(const tsr_file *f, int varid, char *name, int *type, int *ndims, int *dimids,
                  int64_t *shape) {
  tsr_type t = TSR_CHAR;
  int nd = 0, ids[TSR_MAX_DIMS];
  int64_t sh[TSR_MAX_DIMS];
  int rc = tsr_inq_var(f, varid, name, &t, &nd, ids, sh);
  *type = rc ? 0 : (int)t;
  *ndims = rc ? 0 : nd;
  for (int i = 0; !rc && i < nd; i++) {
    dimids[i] = ids[nd - 1 - i];
    shape[i] = sh[nd - 1 - i];
  }
  return rc;
}
int tsr_f_inq_att(const tsr_file *f, int varid, const char *name, int *type, int64_t *n) {
  tsr_type t = TSR_CHAR;
  size_t len = 0;
  int rc = tsr_inq_att(f, varid, name, &t, &len);
  *type = rc ? 0 : (int)t;
  *n = rc ? 0 : (int64_t)len;
  return rc;
}

/* PIO's compdof: 1-based, fastest dimension first, 0 = position not
 * written. Its value minus one is exactly the C row-major flat index over
 * the reversed shape, so only the skip marker changes. */
int tsr_f_decomp_map(tsr_ctx *ctx, int ndims, const int64_t *gsize, int64_t n,
                     const int64_t *compdof, tsr_decomp **d) {
  int64_t g[TSR_MAX_DIMS] = {0};
  if (ndims >= 1 && ndims <= TSR_MAX_DIMS) reverse(ndims, gsize, g, 0);
  int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
  if (!idx) n = -1; /* tsr_decomp_map still runs, so every rank agrees on the error */
  for (int64_t k = 0; k < n; k++) idx[k] = compdof[k] > 0 ? compdof[k] - 1 : (compdof[k] == 0 ? -1 : -2);
  int rc = tsr_decomp_map(ctx, ndims, g, n, idx, d);
  free(idx);
  return rc;
}

/* Boxes as Fortran arrays start(ndims, nboxes), count(ndims, nboxes). */
int tsr_f_decomp_boxes(tsr_ctx *ctx, int ndims, const int64_t *gsize, int nboxes,
                       const int64_t *start, const int64_t *count, tsr_decomp **d) {
  int64_t g[TSR_MAX_DIMS] = {0};
  if (ndims < 1 || ndims > TSR_MAX_DIMS || nboxes < 0)
    return tsr_decomp_boxes(ctx, ndims, g, nboxes, NULL, NULL, d);
  reverse(ndims, gsize, g, 0);
  size_t nb = (size_t)(nboxes > 0 ? nboxes : 1) * (size_t)ndims;
  int64_t *s = malloc(nb * sizeof *s), *c = malloc(nb * sizeof *c);
  for (int b = 0; s && c && b < nboxes; b++) {
    reverse(ndims, start + (size_t)b * ndims, s + (size_t)b * ndims, -1);
    reverse(ndims, count + (size_t)b * ndims, c + (size_t)b * ndims, 0);
  }
  int rc = tsr_decomp_boxes(ctx, ndims, g, s && c ? nboxes : -1, s, c, d);
  free(s);
  free(c);
  return rc;
}

/* A box in another memory order: forder(m) is the file dimension (1-based,
 * fastest first) of memory dimension m (fastest first). */
int tsr_f_decomp_box_ordered(tsr_ctx *ctx, int ndims, const int64_t *gsize, const int64_t *start,
                             const int64_t *count, const int64_t *mstart, const int64_t *mcount,
                             const int *forder, tsr_decomp **d) {
  int64_t g[TSR_MAX_DIMS] = {0}, s[TSR_MAX_DIMS] = {0}, c[TSR_MAX_DIMS] = {0};
  int64_t ms[TSR_MAX_DIMS] = {0}, mc[TSR_MAX_DIMS] = {0};
  int order[TSR_MAX_DIMS] = {0};
  if (ndims < 1 || ndims > TSR_MAX_DIMS)
    return tsr_decomp_box_ordered(ctx, ndims, g, s, c, NULL, NULL, NULL, d);
  reverse(ndims, gsize, g, 0);
  reverse(ndims, start, s, -1);
  reverse(ndims, count, c, 0);
  reverse(ndims, mstart, ms, -1);
  reverse(ndims, mcount, mc, 0);
  for (int m = 0; m < ndims; m++) order[ndims - 1 - m] = ndims - forder[m];
  return tsr_decomp_box_ordered(ctx, ndims, g, s, c, ms, mc, order, d);
}
