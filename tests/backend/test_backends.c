/* White-box test of the block-level backends (netcdf, pnetcdf, null) and the
 * registry. A small WRF-like schema is written through each backend, read
 * back with the NetCDF C API and compared exactly; error mapping is checked
 * for an unwritable path and for a file size limit.
 *
 * Every rank runs the same sequence of collective calls whatever its checks
 * say, so a failure on one rank fails the test (the verdict of tsr_test.h,
 * agreed over MPI_COMM_WORLD at the end) instead of hanging it. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netcdf.h>

#include "backend/backend.h"
#include "core/schema.h"
#include "tsr_test.h"

enum { NF = 2, NY = 5, NX = 7, NZ = 3, NSTR = 19 };
enum { V_TIMES, V_T2, V_MASK, V_U }; /* variable ids, in definition order */

static int g_rank;
static char g_dir[256];

/* ---- assertions: tsr_test.h's, with the backend's message on failure ---- */

#define CHECK_RC(a, b, err)                                                                 \
  TSR_CHECKF((a) == (b), "got %s, expected %s [%s]", tsr_errname(a), tsr_errname(b),      \
             (err)->message)

/* One check per array: 1 when equal, else 0 with the first element that
 * differs described in @p d. */
static int array_equal(const void *got, const void *exp, size_t n, tsr_type t, char *d,
                       size_t dn) {
  size_t es = tsr__type_size(t);
  for (size_t i = 0; i < n; i++) {
    const char *g = (const char *)got + i * es, *e = (const char *)exp + i * es;
    if (memcmp(g, e, es) == 0) continue;
    double gv = 0, ev = 0;
    switch (t) {
    case TSR_CHAR: gv = *g, ev = *e; break;
    case TSR_INT: gv = *(const int *)g, ev = *(const int *)e; break;
    case TSR_FLOAT: gv = *(const float *)g, ev = *(const float *)e; break;
    case TSR_DOUBLE: gv = *(const double *)g, ev = *(const double *)e; break;
    default: break; /* the bytes differ; the message shows no values */
    }
    snprintf(d, dn, "element %zu: got %.17g, expected %.17g", i, gv, ev);
    return 0;
  }
  return 1;
}
#define CHECK_ARRAY(what, got, exp, n, t)                                                   \
  do {                                                                                      \
    char d_[160] = "";                                                                      \
    TSR_CHECKF(array_equal(got, exp, n, t, d_, sizeof d_), "%s: %s", what, d_);             \
  } while (0)

/* A collective step's success must be the same everywhere, or the next
 * collective call would hang: give up loudly rather than hang. */
static int all_ok(MPI_Comm comm, int ok) {
  int mine = ok ? 1 : 0, lo, hi;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, comm);
  if (lo != hi) {
    fprintf(stderr, "[rank %d] ranks disagree on a collective step; aborting\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return lo;
}

/* ---- the data: every value is a function of its indices ---- */

static float t2_val(int f, int y, int x) { return 100.0f * f + 10.0f * y + x + 0.25f; }
static int mask_val(int y, int x) { return y * 100 + x - 17; }
static double u_val(int f, int z, int y, int x) {
  return f * 1000.0 + z * 100.0 + y * 10.0 + x + 1.0 / 3.0;
}
static void times_val(int f, char out[NSTR + 1]) {
  snprintf(out, NSTR + 1, "2024-01-%02d_12:00:00", f % 9 + 1);
}

static const char title[] = "Tessera backend test";
static const float t2_fill = -999.0f;
static const double t2_scale[2] = {1.5, -2.0};
static const int mask_flags[3] = {0, 1, 2};
static const double ratios[3] = {0.5, 0.25, 0.125};
/* The format the backend under test writes (its registry row says). */
static int g_format = 2;

static void build_schema(tsr__schema *s, int format) {
  int dt, dy, dx, dz, ds, id;
  tsr__schema_init(s);
  s->format = format;
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(s, "Time", TSR_UNLIMITED, &dt), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(s, "y", NY, &dy), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(s, "x", NX, &dx), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(s, "z", NZ, &dz), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(s, "DateStrLen", NSTR, &ds), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(s, "Times", TSR_CHAR, 2, (int[]){dt, ds}, &id), 0);
  TSR_CHECK_EQ_INT(id, V_TIMES);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(s, "T2", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &id), 0);
  TSR_CHECK_EQ_INT(id, V_T2);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(s, "mask", TSR_INT, 2, (int[]){dy, dx}, &id), 0);
  TSR_CHECK_EQ_INT(id, V_MASK);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(s, "U", TSR_DOUBLE, 4, (int[]){dt, dz, dy, dx}, &id), 0);
  TSR_CHECK_EQ_INT(id, V_U);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, TSR_GLOBAL, "TITLE", TSR_CHAR, strlen(title), title), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, TSR_GLOBAL, "DX", TSR_FLOAT, 1, (float[]){3000.0f}), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, TSR_GLOBAL, "NUM_LEVELS", TSR_INT, 1, (int[]){NZ}), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, TSR_GLOBAL, "ratios", TSR_DOUBLE, 3, ratios), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, V_T2, "units", TSR_CHAR, 1, "K"), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, V_T2, "_FillValue", TSR_FLOAT, 1, &t2_fill), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, V_T2, "scale", TSR_DOUBLE, 2, t2_scale), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, V_MASK, "flag_values", TSR_INT, 3, mask_flags), 0);
  TSR_CHECK_EQ_INT(tsr__schema_put_att(s, V_U, "description", TSR_CHAR, 6, "x-wind"), 0);
}

/* ---- writing: rows [y0, y0+ny) of every field, through one backend ---- */

typedef struct {
  const tsr__backend_ops *ops;
  tsr__bfile *bf;
  int buffers;            /* the backend reports pending bytes (pnetcdf) */
  int64_t expect_pending; /* what pending_bytes should say now */
} writer;

static void put(writer *w, int line, int varid, int64_t frame, const int64_t *start,
                const int64_t *count, void *buf, size_t bufbytes, tsr__memview mem,
                int64_t blockbytes) {
  tsr__berr err = {0};
  int rc = w->ops->write_block(w->bf, varid, frame, start, count, buf, mem, &err);
  char what[64];
  snprintf(what, sizeof what, "write_block(var %d, frame %lld)", varid, (long long)frame);
  TSR_CHECKF(rc == 0, "%s (called at line %d): got %s [%s]", what, line, tsr_errname(rc),
             err.message);
  /* The contract lets the caller reuse its buffer at once: scribble on it,
   * so a backend that kept a pointer writes garbage and the read-back fails. */
  memset(buf, 0x5A, bufbytes);
  if (w->buffers && rc == 0) w->expect_pending += blockbytes;
}

static void write_frame(writer *w, int f, int y0, int ny, int me) {
  tsr__memview whole = {0};
  if (ny > 0) { /* T2: first row contiguous, the rest from inside a larger array */
    float row[NX];
    for (int x = 0; x < NX; x++) row[x] = t2_val(f, y0, x);
    put(w, __LINE__, V_T2, f, (int64_t[]){y0, 0}, (int64_t[]){1, NX}, row, sizeof row, whole,
        sizeof row);
  }
  if (ny > 1) {
    int64_t ms[2] = {ny - 1 + 3, NX + 4}, mo[2] = {2, 3};
    size_t n = (size_t)(ms[0] * ms[1]);
    float *arr = malloc(n * sizeof *arr);
    for (size_t i = 0; i < n; i++) arr[i] = -7777.0f; /* halo: must not reach the file */
    for (int r = 0; r < ny - 1; r++)
      for (int x = 0; x < NX; x++) arr[(mo[0] + r) * ms[1] + mo[1] + x] = t2_val(f, y0 + 1 + r, x);
    put(w, __LINE__, V_T2, f, (int64_t[]){y0 + 1, 0}, (int64_t[]){ny - 1, NX}, arr,
        n * sizeof *arr, (tsr__memview){ms, mo, 0}, (int64_t)(ny - 1) * NX * 4);
    free(arr);
  }
  { /* an empty block is accepted and adds nothing */
    float dummy = 0;
    put(w, __LINE__, V_T2, f, (int64_t[]){0, 0}, (int64_t[]){0, NX}, &dummy, sizeof dummy, whole,
        0);
  }
  if (ny > 0) { /* U: frame 0 from inside a larger array, frame 1 contiguous */
    int64_t cnt[3] = {NZ, ny, NX};
    int64_t ms[3] = {NZ + 1, ny + 2, NX + 2}, mo[3] = {1, 1, 2};
    int inside = f == 0;
    size_t n = inside ? (size_t)(ms[0] * ms[1] * ms[2]) : (size_t)(NZ * ny * NX);
    double *arr = malloc(n * sizeof *arr);
    for (size_t i = 0; i < n; i++) arr[i] = -5555.0;
    for (int z = 0; z < NZ; z++)
      for (int r = 0; r < ny; r++)
        for (int x = 0; x < NX; x++) {
          size_t i = inside ? (size_t)(((mo[0] + z) * ms[1] + mo[1] + r) * ms[2] + mo[2] + x)
                            : (size_t)((z * ny + r) * NX + x);
          arr[i] = u_val(f, z, y0 + r, x);
        }
    put(w, __LINE__, V_U, f, (int64_t[]){0, y0, 0}, cnt, arr, n * sizeof *arr,
        inside ? (tsr__memview){ms, mo, 0} : whole, (int64_t)NZ * ny * NX * 8);
    free(arr);
  }
  if (f == 0 && ny > 0) { /* mask: a fixed variable, written once */
    int *m = malloc((size_t)ny * NX * sizeof *m);
    for (int r = 0; r < ny; r++)
      for (int x = 0; x < NX; x++) m[r * NX + x] = mask_val(y0 + r, x);
    put(w, __LINE__, V_MASK, 0, (int64_t[]){y0, 0}, (int64_t[]){ny, NX}, m,
        (size_t)ny * NX * sizeof *m, whole, (int64_t)ny * NX * 4);
    free(m);
  }
  if (me == 0) { /* Times: replicated, written by one rank */
    char s[NSTR + 1];
    times_val(f, s);
    put(w, __LINE__, V_TIMES, f, (int64_t[]){0}, (int64_t[]){NSTR}, s, NSTR, whole, NSTR);
  }
}

/* ---- reading back with the NetCDF C API ---- */

static void check_att(int ncid, int varid, const char *name, nc_type t, size_t n,
                      const void *exp) {
  nc_type gt;
  size_t gn;
  char what[96], got[64];
  snprintf(what, sizeof what, "attribute %s", name);
  int st = nc_inq_att(ncid, varid, name, &gt, &gn);
  TSR_CHECKF(st == NC_NOERR && gt == t && gn == n, "%s: %s", what,
             st ? nc_strerror(st) : "type/len");
  if (st || gt != t || gn != n || n * tsr__type_size((tsr_type)t) > sizeof got) return;
  TSR_CHECK_EQ_INT(nc_get_att(ncid, varid, name, got), NC_NOERR);
  CHECK_ARRAY(what, got, exp, n, (tsr_type)t);
}

static void verify_file(const char *path, int format) {
  int ncid, id, fmt;
  size_t len;
  int st = nc_open(path, NC_NOWRITE, &ncid);
  TSR_CHECKF(st == NC_NOERR, "nc_open(path): %s", nc_strerror(st));
  if (st) return;
  TSR_CHECK_EQ_INT(nc_inq_format(ncid, &fmt), NC_NOERR);
  TSR_CHECK_EQ_INT(fmt, format == 5 ? NC_FORMAT_CDF5 : format == 3 ? NC_FORMAT_NETCDF4 : NC_FORMAT_64BIT_OFFSET);
  const char *dn[] = {"Time", "y", "x", "z", "DateStrLen"};
  const size_t dl[] = {NF, NY, NX, NZ, NSTR};
  for (int d = 0; d < 5; d++) {
    TSR_CHECK_EQ_INT(nc_inq_dimid(ncid, dn[d], &id), NC_NOERR);
    TSR_CHECK_EQ_INT(nc_inq_dimlen(ncid, id, &len), NC_NOERR);
    TSR_CHECK_EQ_INT(len, dl[d]);
  }
  static float t2[NF][NY][NX], t2e[NF][NY][NX];
  static double u[NF][NZ][NY][NX], ue[NF][NZ][NY][NX];
  static int mask[NY][NX], maske[NY][NX];
  char times[NF][NSTR], timese[NF][NSTR + 1];
  for (int f = 0; f < NF; f++) {
    times_val(f, timese[f]);
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) {
        t2e[f][y][x] = t2_val(f, y, x);
        maske[y][x] = mask_val(y, x);
        for (int z = 0; z < NZ; z++) ue[f][z][y][x] = u_val(f, z, y, x);
      }
  }
  TSR_CHECK_EQ_INT(nc_inq_varid(ncid, "T2", &id), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_vara_float(ncid, id, (size_t[]){0, 0, 0}, (size_t[]){NF, NY, NX}, &t2[0][0][0]), NC_NOERR);
  CHECK_ARRAY("T2 values", t2, t2e, NF * NY * NX, TSR_FLOAT);
  check_att(ncid, id, "units", NC_CHAR, 1, "K");
  check_att(ncid, id, "_FillValue", NC_FLOAT, 1, &t2_fill);
  check_att(ncid, id, "scale", NC_DOUBLE, 2, t2_scale);
  TSR_CHECK_EQ_INT(nc_inq_varid(ncid, "U", &id), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_vara_double(ncid, id, (size_t[]){0, 0, 0, 0}, (size_t[]){NF, NZ, NY, NX},
                              &u[0][0][0][0]), NC_NOERR);
  CHECK_ARRAY("U values", u, ue, NF * NZ * NY * NX, TSR_DOUBLE);
  check_att(ncid, id, "description", NC_CHAR, 6, "x-wind");
  TSR_CHECK_EQ_INT(nc_inq_varid(ncid, "mask", &id), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_vara_int(ncid, id, (size_t[]){0, 0}, (size_t[]){NY, NX}, &mask[0][0]), NC_NOERR);
  CHECK_ARRAY("mask values", mask, maske, NY * NX, TSR_INT);
  check_att(ncid, id, "flag_values", NC_INT, 3, mask_flags);
  TSR_CHECK_EQ_INT(nc_inq_varid(ncid, "Times", &id), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_vara_text(ncid, id, (size_t[]){0, 0}, (size_t[]){NF, NSTR}, &times[0][0]), NC_NOERR);
  for (int f = 0; f < NF; f++) CHECK_ARRAY("Times", times[f], timese[f], NSTR, TSR_CHAR);
  check_att(ncid, NC_GLOBAL, "TITLE", NC_CHAR, strlen(title), title);
  check_att(ncid, NC_GLOBAL, "DX", NC_FLOAT, 1, (float[]){3000.0f});
  check_att(ncid, NC_GLOBAL, "NUM_LEVELS", NC_INT, 1, (int[]){NZ});
  check_att(ncid, NC_GLOBAL, "ratios", NC_DOUBLE, 3, ratios);
  TSR_CHECK_EQ_INT(nc_close(ncid), NC_NOERR);
}

/* Read @p n big-endian bytes (the CDF byte order) at @p off, as host order. */
static int read_be(const char *path, int64_t off, void *out, size_t n) {
  unsigned char b[8];
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  int ok = fseek(fp, (long)off, SEEK_SET) == 0 && fread(b, 1, n, fp) == n;
  fclose(fp);
  for (size_t i = 0; i < n; i++) ((unsigned char *)out)[i] = b[n - 1 - i];
  return ok ? 0 : -1;
}

static void scratch_path(char *out, size_t len, const char *name) {
  snprintf(out, len, "%s/%s", g_dir, name);
}

/* ---- one full round: create, two frames, flush, close, read back ---- */

static void round_trip(const tsr__backend_ops *ops, MPI_Comm comm, const char *name, int format,
                       int64_t buffer_bytes, int align_hint) {
  int me, nr;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &nr);
  char path[512];
  scratch_path(path, sizeof path, name);
  tsr__schema s;
  build_schema(&s, format);
  tsr__hints h;
  memset(&h, 0, sizeof h);
  h.format = format;
  h.buffer_bytes = buffer_bytes;
  if (align_hint) {
    h.npass = 1;
    strcpy(h.pass[0].key, "nc_var_align_size");
    strcpy(h.pass[0].value, "512");
  }
  tsr__berr err = {0};
  /* netcdf4 holds blocks for its collective flush when several ranks write. */
  int buffers = strcmp(ops->name, "pnetcdf") == 0 || (strcmp(ops->name, "netcdf4") == 0 && nr > 1);
  writer w = {ops, NULL, buffers, 0};
  int rc = ops->create(comm, path, &s, &h, &w.bf, &err);
  CHECK_RC(rc, 0, &err);
  /* The backend must not need the schema after create. */
  tsr__schema_free(&s);
  if (!all_ok(comm, rc == 0 && w.bf)) return;

  int y0 = me * (NY / nr) + (me < NY % nr ? me : NY % nr), ny = NY / nr + (me < NY % nr);
  for (int f = 0; f < NF; f++) {
    write_frame(&w, f, y0, ny, me);
    if (f == 0) {
      TSR_CHECK_EQ_INT(ops->pending_bytes(w.bf), w.expect_pending);
      rc = ops->flush(w.bf, &err);
      CHECK_RC(rc, 0, &err);
      TSR_CHECK_EQ_INT(ops->pending_bytes(w.bf), 0);
      w.expect_pending = 0;
    }
  }
  int64_t off_t2 = -1, off_u = -1, off_mask = -1;
  if (ops->block_offset) {
    off_t2 = ops->block_offset(w.bf, V_T2, 1, (int64_t[]){1, 2});
    off_u = ops->block_offset(w.bf, V_U, 1, (int64_t[]){2, 3, 4});
    off_mask = ops->block_offset(w.bf, V_MASK, 0, (int64_t[]){0, 0});
  }
  if (ops->file_info) {
    MPI_Info info = ops->file_info(w.bf);
    TSR_CHECK(info != MPI_INFO_NULL);
    if (info != MPI_INFO_NULL) {
      char v[MPI_MAX_INFO_VAL + 1] = "";
      int flag = 0;
      MPI_Info_get(info, "nc_var_align_size", MPI_MAX_INFO_VAL, v, &flag);
      TSR_CHECK(flag);
      if (align_hint) TSR_CHECK_EQ_STR(v, "512");
      MPI_Info_free(&info);
    }
  }
  rc = ops->close(w.bf, &err);
  CHECK_RC(rc, 0, &err);
  MPI_Barrier(comm); /* every rank's bytes are in the file before rank 0 reads */
  if (me == 0) {
    verify_file(path, format);
    if (strcmp(ops->name, "pnetcdf") == 0) {
      /* block_offset must point at the very bytes of that element. */
      float fv = 0;
      double dv = 0;
      TSR_CHECK(off_t2 > 0 && off_u > 0 && off_mask > 0);
      TSR_CHECK(read_be(path, off_t2, &fv, 4) == 0 && fv == t2_val(1, 1, 2));
      TSR_CHECK(read_be(path, off_u, &dv, 8) == 0 && dv == u_val(1, 2, 3, 4));
      if (align_hint) TSR_CHECK_EQ_INT(off_mask % 512, 0);
    } else if (ops->block_offset) {
      TSR_CHECK_EQ_INT(off_t2, -1);
    }
    TSR_CHECK_EQ_INT(unlink(path), 0);
  }
  MPI_Barrier(comm);
}

/* ---- errors ---- */

static void test_bad_path(const tsr__backend_ops *ops, MPI_Comm comm, const char *prefix) {
  char path[512];
  scratch_path(path, sizeof path, "no_such_dir/x.nc");
  tsr__schema s;
  build_schema(&s, g_format);
  tsr__hints h;
  memset(&h, 0, sizeof h);
  h.buffer_bytes = 1024;
  tsr__berr err = {0};
  tsr__bfile *bf = (tsr__bfile *)&err; /* must come back NULL */
  int rc = ops->create(comm, path, &s, &h, &bf, &err);
  CHECK_RC(rc, TSR_EACCES, &err);
  TSR_CHECK(bf == NULL);
  TSR_CHECK(err.code != 0);
  TSR_CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0);
  TSR_CHECK(strstr(err.message, "no_such_dir/x.nc") != NULL);
  if (strcmp(ops->name, "netcdf") == 0) TSR_CHECK_EQ_INT(err.code, ENOENT);
  tsr__schema_free(&s);
  all_ok(comm, bf == NULL);
}

/* Invalid blocks are refused with the right code and no collective harm. */
static void test_bad_blocks(const tsr__backend_ops *ops, MPI_Comm comm, const char *name) {
  char path[512];
  scratch_path(path, sizeof path, name);
  tsr__schema s;
  build_schema(&s, g_format);
  tsr__hints h;
  memset(&h, 0, sizeof h);
  tsr__berr err = {0};
  tsr__bfile *bf = NULL;
  int rc = ops->create(comm, path, &s, &h, &bf, &err);
  tsr__schema_free(&s);
  CHECK_RC(rc, 0, &err);
  if (!all_ok(comm, rc == 0)) return;
  float buf[NY * NX] = {0};
  tsr__memview whole = {0};
  rc = ops->write_block(bf, 99, 0, (int64_t[]){0, 0}, (int64_t[]){1, 1}, buf, whole, &err);
  CHECK_RC(rc, TSR_EBADID, &err);
  rc = ops->write_block(bf, V_T2, 0, (int64_t[]){4, 0}, (int64_t[]){2, NX}, buf, whole, &err);
  CHECK_RC(rc, TSR_ERANGE, &err);
  rc = ops->write_block(bf, V_T2, -1, (int64_t[]){0, 0}, (int64_t[]){1, NX}, buf, whole, &err);
  CHECK_RC(rc, TSR_ERANGE, &err);
  rc = ops->write_block(bf, V_T2, 0, (int64_t[]){0, 0}, (int64_t[]){2, NX}, buf,
                        (tsr__memview){(int64_t[]){2, NX}, (int64_t[]){1, 0}, 0}, &err);
  CHECK_RC(rc, TSR_EINVAL, &err);
  TSR_CHECK_EQ_INT(ops->pending_bytes(bf), 0);
  /* A good block, then abort: the file must be gone on return. */
  rc = ops->write_block(bf, V_T2, 0, (int64_t[]){0, 0}, (int64_t[]){1, NX}, buf, whole, &err);
  CHECK_RC(rc, 0, &err);
  ops->abort(bf, path);
  TSR_CHECK(access(path, F_OK) != 0);
  MPI_Barrier(comm);
}

/* A write past RLIMIT_FSIZE (SIGXFSZ ignored, so write() fails with EFBIG)
 * must come back as TSR_ENOSPC from write, flush or close: not a crash. */
static void test_file_size_limit(const tsr__backend_ops *ops, const char *name,
                                 const char *prefix) {
  enum { BIG = 1 << 17 }; /* doubles: 1 MiB */
  char path[512];
  scratch_path(path, sizeof path, name);
  tsr__schema s;
  int d, v;
  tsr__schema_init(&s);
  s.format = g_format;
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(&s, "n", BIG, &d), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(&s, "big", TSR_DOUBLE, 1, &d, &v), 0);
  tsr__hints h;
  memset(&h, 0, sizeof h);
  h.buffer_bytes = 4096; /* pnetcdf: the block takes the private-copy path */
  tsr__berr err = {0};
  tsr__bfile *bf = NULL;
  int rc = ops->create(MPI_COMM_SELF, path, &s, &h, &bf, &err);
  tsr__schema_free(&s);
  CHECK_RC(rc, 0, &err);
  if (rc) return;
  double *data = malloc(BIG * sizeof *data);
  for (int i = 0; i < BIG; i++) data[i] = i;

  struct rlimit old, lim;
  getrlimit(RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = 16 * 1024;
  void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
  TSR_CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);

  int first = ops->write_block(bf, v, 0, (int64_t[]){0}, (int64_t[]){BIG}, data,
                               (tsr__memview){0}, &err);
  tsr__berr first_err = err;
  if (first == 0) {
    first = ops->flush(bf, &err);
    first_err = err;
  }
  rc = ops->close(bf, &err);
  if (first == 0) {
    first = rc;
    first_err = err;
  }

  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, oldsig);
  free(data);
  CHECK_RC(first, TSR_ENOSPC, &first_err);
  TSR_CHECK(strncmp(first_err.message, prefix, strlen(prefix)) == 0);
  if (strcmp(ops->name, "netcdf") == 0) TSR_CHECK_EQ_INT(first_err.code, EFBIG);
  unlink(path);
}

static void test_null(void) {
  const tsr__backend_ops *ops = NULL;
  TSR_CHECK_EQ_INT(tsr__backend_find("null", &ops), 0);
  if (!ops) return;
  char path[512];
  scratch_path(path, sizeof path, "null.nc");
  tsr__schema s;
  build_schema(&s, 2);
  tsr__berr err = {0};
  tsr__bfile *bf = NULL;
  TSR_CHECK_EQ_INT(ops->create(MPI_COMM_WORLD, path, &s, NULL, &bf, &err), 0);
  tsr__schema_free(&s);
  TSR_CHECK(bf != NULL);
  float row[NX] = {0};
  TSR_CHECK_EQ_INT(ops->write_block(bf, V_T2, 0, (int64_t[]){0, 0}, (int64_t[]){1, NX}, row,
                            (tsr__memview){0}, &err),
           0);
  TSR_CHECK_EQ_INT(ops->pending_bytes(bf), 0);
  TSR_CHECK_EQ_INT(ops->flush(bf, &err), 0);
  TSR_CHECK_EQ_INT(ops->close(bf, &err), 0);
  TSR_CHECK(access(path, F_OK) != 0); /* no file, ever */
}

/* How each backend's messages start ("PnetCDF: No space left on device"). */
static const char *message_prefix(const char *backend) {
  if (strcmp(backend, "netcdf") == 0) return "NetCDF: ";
  if (strcmp(backend, "pnetcdf") == 0) return "PnetCDF: ";
  if (strcmp(backend, "netcdf4") == 0) return "NetCDF: ";
  return "";
}

static void test_registry(void) {
  const tsr__backend_ops *ops = (const tsr__backend_ops *)&ops;
  TSR_CHECK_EQ_INT(tsr__backend_find("netcdf", &ops), 0);
  TSR_CHECK(ops && ops->parallel == 0 && strcmp(ops->name, "netcdf") == 0 &&
        ops->version == TSR__BACKEND_VERSION);
  int rc = tsr__backend_find("pnetcdf", &ops);
  if (TSR_TEST_HAVE_PNETCDF) { /* what CMake found, passed by tests/backend/CMakeLists.txt */
    TSR_CHECK_EQ_INT(rc, 0);
    TSR_CHECK(ops && ops->parallel == 1 && strcmp(ops->name, "pnetcdf") == 0);
  } else {
    TSR_CHECK_EQ_INT(rc, TSR_ENOTBUILT);
    TSR_CHECK(ops == NULL);
  }
  TSR_CHECK_EQ_INT(tsr__backend_find("null", &ops), 0);
  TSR_CHECK(ops && ops->parallel == 1 && strcmp(ops->name, "null") == 0);
  ops = (const tsr__backend_ops *)&ops;
  TSR_CHECK_EQ_INT(tsr__backend_find("bogus", &ops), TSR_EHINT);
  TSR_CHECK(ops == NULL);
  TSR_CHECK_EQ_INT(tsr__backend_find("", &ops), TSR_EHINT);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  /* What tsr_test_main sets up (this program takes no scenario argument). */
  tsr_test_.program = "test_backends";
  tsr_test_.rank = g_rank;
  MPI_Comm_size(MPI_COMM_WORLD, &tsr_test_.nranks);
  /* A scratch directory in the working directory (the build tree), unique
   * per run so concurrent runs at several rank counts never collide. */
  if (g_rank == 0) {
    snprintf(g_dir, sizeof g_dir, "backend_scratch_%ld", (long)getpid());
    if (mkdir(g_dir, 0755) != 0) perror("mkdir scratch");
  }
  MPI_Bcast(g_dir, sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);

  test_registry();
  test_null();

  /* The same conformance checks over every built backend of the registry
   * that writes files: a serial one with every rank owning a file of its own
   * (MPI_COMM_SELF), as serial and split use it; a parallel one with one file
   * over MPI_COMM_WORLD, each rank writing a slab of rows. For buffering
   * backends, 256 bytes of buffer sends the larger blocks to the private-copy
   * path; 0 sends everything there. */
  int checked = 0;
  for (int i = 0; i < tsr__backend_count(); i++) {
    const char *bname = tsr__backend_name_at(i);
    const tsr__backend_ops *ops = NULL;
    if (tsr__backend_find(bname, &ops) != 0 || !ops->open) continue; /* not built, or no files */
    const char *prefix = message_prefix(bname);
    char name[64];
    g_format = 2;
    TSR_CHECK_EQ_INT(tsr__backend_write_format(bname, 0, &g_format), 0);
    /* The checks read files back with the NetCDF C API: formats that are no
     * NetCDF (GRIB2 16, Zarr 17) have their own read-back tests
     * (tests/formats, tests/python/test_grib2_*, test_zarr_*). */
    if (g_format > 5) continue;
    if (g_format == 3) {
      /* netCDF-4: serial with one rank per file (serial, split), then
       * collective over every rank (direct, aggregate), compressed or not. */
      snprintf(name, sizeof name, "%s_self_r%d.nc", bname, g_rank);
      round_trip(ops, MPI_COMM_SELF, name, 3, 0, 0);
      snprintf(name, sizeof name, "%s_world.nc", bname);
      round_trip(ops, MPI_COMM_WORLD, name, 3, 0, 0);
      test_bad_path(ops, MPI_COMM_WORLD, prefix);
      snprintf(name, sizeof name, "%s_bad.nc", bname);
      test_bad_blocks(ops, MPI_COMM_WORLD, name);
    } else if (!ops->parallel) {
      for (int format = 2; format <= 5; format += 3) {
        snprintf(name, sizeof name, "%s_cdf%d_r%d.nc", bname, format, g_rank);
        round_trip(ops, MPI_COMM_SELF, name, format, 0, 0);
      }
      test_bad_path(ops, MPI_COMM_SELF, prefix);
      snprintf(name, sizeof name, "%s_bad_r%d.nc", bname, g_rank);
      test_bad_blocks(ops, MPI_COMM_SELF, name);
    } else {
      snprintf(name, sizeof name, "%s_cdf2_buf256.nc", bname);
      round_trip(ops, MPI_COMM_WORLD, name, 2, 256, 1);
      snprintf(name, sizeof name, "%s_cdf5_buf0.nc", bname);
      round_trip(ops, MPI_COMM_WORLD, name, 5, 0, 0);
      snprintf(name, sizeof name, "%s_cdf5_buf1m.nc", bname);
      round_trip(ops, MPI_COMM_WORLD, name, 5, 1 << 20, 1);
      test_bad_path(ops, MPI_COMM_WORLD, prefix);
      snprintf(name, sizeof name, "%s_bad.nc", bname);
      test_bad_blocks(ops, MPI_COMM_WORLD, name);
    }
    snprintf(name, sizeof name, "%s_fsize.nc", bname);
    if (g_rank == 0) test_file_size_limit(ops, name, prefix);
    checked++;
  }
  TSR_CHECK(checked >= 1 + TSR_TEST_HAVE_PNETCDF);

  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0)
    TSR_CHECKF(rmdir(g_dir) == 0, "scratch directory %s not empty or not removable", g_dir);
  int code = tsr_test_verdict("backends"); /* agreed over MPI_COMM_WORLD */
  MPI_Finalize();
  return code;
}
