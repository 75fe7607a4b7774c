/* Zarr read-back (format=zarr, tsr_open): every value of a store equals the
 * same run's NetCDF file, read through a read strategy.
 *
 *   mpiexec -n N test_zarr_read STORE REF.nc HINTS
 *
 * HINTS are tsr_open's (backend=zarr and strategy=serial / aggregate /
 * direct). Each rank reads its box (the last two dimensions cut by a process
 * grid; variables with fewer dimensions whole, as replicated data) of every
 * frame of every variable of REF.nc from the store with tsr_get and from
 * REF.nc with NetCDF-C, and compares the bytes; names, types, dimensions,
 * frame counts and the attributes' names and values are compared as well. */
#include <math.h>
#include <mpi.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

static int rank, nbad;

#define BAD(...)                                                                                   \
  do {                                                                                             \
    if (nbad++ < 10) {                                                                             \
      fprintf(stderr, "rank %d: ", rank);                                                          \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

static tsr_type from_nc(nc_type t) {
  switch (t) {
  case NC_BYTE: return TSR_BYTE;
  case NC_CHAR: return TSR_CHAR;
  case NC_SHORT: return TSR_SHORT;
  case NC_INT: return TSR_INT;
  case NC_FLOAT: return TSR_FLOAT;
  case NC_DOUBLE: return TSR_DOUBLE;
  default: return (tsr_type)-1;
  }
}

/* Attributes: same names; text equal; numbers equal as doubles (a Zarr store
 * keeps numbers as JSON, so a float attribute reads back as a double). */
static void compare_atts(const tsr_file *f, int tvar, int ncid, int nvar, const char *what) {
  int n = 0, tn = 0;
  nc_inq_varnatts(ncid, nvar, &n);
  tsr_inq_natts(f, tvar, &tn);
  if (n != tn) BAD("%s: %d attributes, NetCDF has %d", what, tn, n);
  for (int a = 0; a < n; a++) {
    char name[NC_MAX_NAME + 1];
    nc_type xt;
    size_t len;
    nc_inq_attname(ncid, nvar, a, name);
    nc_inq_att(ncid, nvar, name, &xt, &len);
    tsr_type t;
    size_t tl;
    if (tsr_inq_att(f, tvar, name, &t, &tl)) {
      BAD("%s: attribute %s missing", what, name);
      continue;
    }
    if (xt == NC_CHAR) {
      char *x = calloc(len + 1, 1), *y = calloc(tl + 1, 1);
      nc_get_att_text(ncid, nvar, name, x);
      if (t == TSR_CHAR) tsr_get_att(f, tvar, name, y);
      while (len > 0 && x[len - 1] == '\0') len--;
      if (t != TSR_CHAR || tl != len || memcmp(x, y, len)) BAD("%s: %s differs", what, name);
      free(x), free(y);
      continue;
    }
    double *x = calloc(len + 1, sizeof *x);
    unsigned char *y = calloc(tl + 1, 8);
    nc_get_att_double(ncid, nvar, name, x);
    tsr_get_att(f, tvar, name, y);
    for (size_t i = 0; i < len && tl == len; i++) {
      double g = t == TSR_DOUBLE ? ((double *)y)[i] : t == TSR_FLOAT ? ((float *)y)[i]
                 : t == TSR_INT ? ((int *)y)[i] : t == TSR_INT64 ? (double)((long long *)y)[i]
                 : t == TSR_SHORT ? ((short *)y)[i] : t == TSR_BYTE ? ((signed char *)y)[i] : NAN;
      if (!(g == x[i] || (isnan(g) && isnan(x[i])))) BAD("%s: %s[%zu] %g, expected %g", what, name, i, g, x[i]);
    }
    if (tl != len) BAD("%s: %s has %zu values, expected %zu", what, name, tl, len);
    free(x), free(y);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: test_zarr_read STORE REF.nc HINTS\n");
    MPI_Finalize();
    return 2;
  }
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  tsr_file *f = NULL;
  int ncid = -1, rc = tsr_init(MPI_COMM_WORLD, "", &ctx, &model);
  if (!rc) rc = tsr_open(ctx, argv[1], argv[3], &f);
  if (rc) {
    fprintf(stderr, "rank %d: tsr_open(%s, %s): %s\n", rank, argv[1], argv[3], tsr_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (nc_open(argv[2], NC_NOWRITE, &ncid) != NC_NOERR) {
    fprintf(stderr, "rank %d: cannot open %s\n", rank, argv[2]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int dims[2] = {0, 0}, nvars, unlim, tunlim, tnd, tnv, tng;
  MPI_Dims_create(size, 2, dims);
  nc_inq_nvars(ncid, &nvars);
  nc_inq_unlimdim(ncid, &unlim);
  tsr_inq(f, &tnd, &tnv, &tng, &tunlim);
  size_t nrec = 0;
  if (unlim >= 0) nc_inq_dimlen(ncid, unlim, &nrec);
  if (tnv != nvars) BAD("%d variables, NetCDF has %d", tnv, nvars);
  compare_atts(f, TSR_GLOBAL, ncid, NC_GLOBAL, "global");
  long long values = 0;
  for (int v = 0; v < nvars; v++) {
    char name[NC_MAX_NAME + 1], tname[TSR_MAX_NAME];
    nc_type xt;
    int nd, dimids[NC_MAX_VAR_DIMS], tv, tdims[TSR_MAX_DIMS], tndims;
    tsr_type tt;
    nc_inq_var(ncid, v, name, &xt, &nd, dimids, NULL);
    if (tsr_inq_varid(f, name, &tv) || tsr_inq_var(f, tv, tname, &tt, &tndims, tdims, NULL)) {
      BAD("%s: missing", name);
      continue;
    }
    if (tt != from_nc(xt) || tndims != nd) {
      BAD("%s: type %d, %d dims; expected %d, %d", name, (int)tt, tndims, (int)from_nc(xt), nd);
      continue;
    }
    int rec = nd > 0 && dimids[0] == unlim, bad = 0;
    int64_t shape[TSR_MAX_DIMS], st[TSR_MAX_DIMS] = {0}, ct[TSR_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
      char dn[NC_MAX_NAME + 1], tdn[TSR_MAX_NAME];
      size_t len;
      int64_t tlen;
      nc_inq_dim(ncid, dimids[i], dn, &len);
      tsr_inq_dim(f, tdims[i], tdn, &tlen);
      if (strcmp(dn, tdn) || (i == 0 && rec ? tdims[0] != tunlim : (int64_t)len != tlen)) bad = 1;
      shape[i] = ct[i] = (int64_t)len;
    }
    compare_atts(f, tv, ncid, v, name);
    if (bad) {
      BAD("%s: dimensions differ", name);
      continue;
    }
    int nnr = nd - rec; /* my box of the non-record dims */
    const int64_t *sh = shape + rec;
    int64_t *bs = st + rec, *bc = ct + rec, elems = 1;
    tsr_decomp *d = NULL;
    if (nnr >= 2) {
      int cut[2] = {rank / dims[1], rank % dims[1]};
      for (int k = 0; k < 2; k++) {
        int i = nnr - 2 + k;
        bs[i] = sh[i] * cut[k] / dims[k];
        bc[i] = sh[i] * (cut[k] + 1) / dims[k] - bs[i];
      }
      if (tsr_decomp_box(ctx, nnr, sh, bs, bc, NULL, NULL, &d)) BAD("%s: no decomposition", name);
    }
    for (int i = 0; i < nnr; i++) elems *= bc[i];
    size_t es = tsr_type_size(tt);
    unsigned char *a = calloc((size_t)elems + 1, es), *b = calloc((size_t)elems + 1, es);
    size_t nst[NC_MAX_VAR_DIMS], nct[NC_MAX_VAR_DIMS];
    for (int i = 0; i < nd; i++) nst[i] = (size_t)st[i], nct[i] = (size_t)ct[i];
    for (size_t t = 0; t < (rec ? nrec : 1); t++) {
      if (rec) nst[0] = t, nct[0] = 1;
      int g = tsr_get(f, tv, (int64_t)t, d, a);
      if (g) {
        BAD("%s frame %zu: tsr_get: %s", name, t, tsr_strerror(g));
        break;
      }
      if (elems > 0 && nc_get_vara(ncid, v, nst, nct, b) != NC_NOERR) BAD("%s: NetCDF read", name);
      if (memcmp(a, b, (size_t)elems * es)) BAD("%s frame %zu: values differ", name, t);
      values += elems;
    }
    free(a), free(b);
    tsr_decomp_free(&d);
  }
  long long all = 0;
  int anybad = 0;
  MPI_Allreduce(&values, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&nbad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("zarr read (%s): %s: %lld values of %d variables, %zu frames\n", argv[3],
           anybad ? "FAILED" : "every value equal", all, nvars, nrec);
  nc_close(ncid);
  tsr_close(&f);
  tsr_finalize(&ctx);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
