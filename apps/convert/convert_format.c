/* tessera-convert --to FORMAT: copy a NetCDF file or a Zarr store into
 * another format through the public API alone (docs/zarr.md, "Converting").
 * tsr_open reads the input with the backend its first bytes call for,
 * tsr_create writes the output with `format=FORMAT`, and every dimension,
 * variable, attribute and record goes across: each frame of each variable is
 * read whole on every rank (tsr_get with no decomposition) and written once
 * (tsr_put_global). One rank, or any number under mpiexec. */
#include "convert_format.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mpi.h>

#include "tessera.h"

/* The tsr_open hint that reads @p path: a directory holding zarr.json is a
 * Zarr store, an HDF5 signature a netCDF-4 file; classic files take the
 * library's default reader. */
static const char *read_hints(const char *path) {
  struct stat st;
  char p[4096];
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(p, sizeof p, "%s/zarr.json", path);
    return stat(p, &st) == 0 ? "backend=zarr" : NULL;
  }
  unsigned char magic[4] = {0};
  FILE *fp = fopen(path, "rb");
  if (fp) {
    size_t n = fread(magic, 1, sizeof magic, fp);
    fclose(fp);
    if (n == 4 && !memcmp(magic, "\x89HDF", 4)) return "backend=netcdf4";
  }
  return NULL;
}

static int fail(const char *what, const char *name, int rc, const tsr_file *f) {
  const char *msg = NULL;
  if (f) tsr_backend_error(f, NULL, &msg);
  if (!msg || !*msg) msg = tsr_last_error();
  fprintf(stderr, "tessera-convert: %s%s%s: %s%s%s\n", what, name ? " " : "", name ? name : "",
          tsr_errname(rc), msg && *msg ? ": " : "", msg ? msg : "");
  return rc;
}

/* The schema of @p in defined in @p out (define mode). */
static int copy_schema(tsr_file *in, tsr_file *out) {
  int ndims, nvars, ngatts, unlim, rc;
  if ((rc = tsr_inq(in, &ndims, &nvars, &ngatts, &unlim))) return fail("inquire", NULL, rc, in);
  char name[TSR_MAX_NAME];
  for (int d = 0; d < ndims; d++) {
    int64_t len;
    int id;
    if ((rc = tsr_inq_dim(in, d, name, &len))) return fail("dimension", NULL, rc, in);
    if ((rc = tsr_def_dim(out, name, d == unlim ? TSR_UNLIMITED : len, &id)))
      return fail("define dimension", name, rc, out);
  }
  for (int v = -1; v < nvars; v++) {
    int id = TSR_GLOBAL, natts;
    if (v >= 0) {
      tsr_type t;
      int nd, dimids[TSR_MAX_DIMS];
      if ((rc = tsr_inq_var(in, v, name, &t, &nd, dimids, NULL)))
        return fail("variable", NULL, rc, in);
      if ((rc = tsr_def_var(out, name, t, nd, dimids, &id)))
        return fail("define variable", name, rc, out);
    }
    if ((rc = tsr_inq_natts(in, v, &natts))) return fail("attributes", NULL, rc, in);
    for (int a = 0; a < natts; a++) {
      char an[TSR_MAX_NAME];
      tsr_type at;
      size_t n;
      if ((rc = tsr_inq_attname(in, v, a, an)) || (rc = tsr_inq_att(in, v, an, &at, &n)))
        return fail("attribute", NULL, rc, in);
      void *vals = malloc(n * tsr_type_size(at) + 1);
      if (!vals) return fail("attribute", an, TSR_ENOMEM, NULL);
      rc = tsr_get_att(in, v, an, vals);
      if (!rc) rc = tsr_put_att(out, id, an, at, n, vals);
      free(vals);
      if (rc) return fail("copy attribute", an, rc, out);
    }
  }
  return 0;
}

/* Every frame of every variable of @p in written into @p out (data mode). */
static int copy_data(tsr_file *in, tsr_file *out) {
  int nvars, unlim, rc;
  int64_t nrec = 0;
  if ((rc = tsr_inq(in, NULL, &nvars, NULL, &unlim))) return fail("inquire", NULL, rc, in);
  if (unlim >= 0 && (rc = tsr_inq_dim(in, unlim, NULL, &nrec)))
    return fail("records", NULL, rc, in);
  for (int v = 0; v < nvars; v++) {
    char name[TSR_MAX_NAME];
    tsr_type t;
    int nd, dimids[TSR_MAX_DIMS];
    int64_t shape[TSR_MAX_DIMS];
    if ((rc = tsr_inq_var(in, v, name, &t, &nd, dimids, shape)))
      return fail("variable", NULL, rc, in);
    int rec = nd > 0 && dimids[0] == unlim;
    size_t n = 1;
    for (int i = rec; i < nd; i++) n *= (size_t)shape[i];
    void *buf = malloc(n * tsr_type_size(t) + 1);
    if (!buf) return fail("read", name, TSR_ENOMEM, NULL);
    for (int64_t fr = 0; fr < (rec ? nrec : 1) && !rc; fr++) {
      if (n > 0 && (rc = tsr_get(in, v, fr, NULL, buf))) fail("read", name, rc, in);
      else if ((rc = tsr_put_global(out, v, fr, buf))) fail("write", name, rc, out);
    }
    free(buf);
    if (rc) return rc;
  }
  return 0;
}

int convert_format(const char *input, const char *output, const char *format,
                   const char *hints) {
  tsr_ctx *ctx = NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = tsr_init(MPI_COMM_WORLD, NULL, &ctx, &comm);
  if (rc) return fail("init", NULL, rc, NULL);
  tsr_file *in = NULL, *out = NULL;
  /* One writer takes whole chunks and whole variables whatever the format;
   * the caller's hints come after, so they override it. */
  size_t hl = strlen(format) + (hints ? strlen(hints) : 0) + 64;
  char *wh = malloc(hl);
  if (!wh) rc = fail("hints", NULL, TSR_ENOMEM, NULL);
  else
    snprintf(wh, hl, "strategy=serial:format=%s%s%s", format, hints && *hints ? ":" : "",
             hints ? hints : "");
  if (!rc && (rc = tsr_open(ctx, input, read_hints(input), &in))) fail("open", input, rc, NULL);
  if (!rc && (rc = tsr_create(ctx, output, wh, &out))) fail("create", output, rc, NULL);
  if (!rc) rc = copy_schema(in, out);
  if (!rc && (rc = tsr_enddef(out))) fail("define", output, rc, out);
  if (!rc) rc = copy_data(in, out);
  if (out) {
    if (rc) tsr_abort(&out);
    else if ((rc = tsr_close(&out))) fail("close", output, rc, NULL);
  }
  if (in) tsr_close(&in);
  free(wh);
  int frc = tsr_finalize(&ctx);
  if (!rc && frc) rc = fail("finalize", NULL, frc, NULL);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  return rc;
}
