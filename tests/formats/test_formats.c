/* Formats and types: one scenario "<format>-<strategy>" writes a variable of
 * every type the format has (3-D record and 2-D fixed, halo'd memory, two
 * frames) through one strategy, then checks every value exactly: with the
 * NetCDF C API on rank 0 (each rank its own piece for split), and through
 * tsr_open/tsr_get with another decomposition (row slabs). Formats: cdf2,
 * cdf5, nc4 (netCDF-4), nc4z (deflate + shuffle, small chunks), nc4q
 * (bitround quantization: floats within the kept bits). cdf2 scenarios also
 * check that the types CDF-2 lacks are refused with TSR_ETYPE.
 *
 * Two more scenarios: "zstd" (Zstandard works when NetCDF finds the HDF5
 * plugin, else TSR_ENOTBUILT naming zstd) and "choice" (format and backend
 * choose each other; a backend asked for a format it lacks is TSR_EHINT).
 *
 * Usage: test_formats <dir> <scenario>. Exit 77 (skipped) when the strategy
 * or backend is not built. Files stay in <dir> as fmt_<scenario>_np<N>.nc, so
 * the filter test (check_filters.sh) and the Python tests can look at them. */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { NZ = 3, NY = 9, NX = 10, NT = 2, HALO = 1 };

typedef struct {
  const char *name;
  tsr_type type;
  int classic; /* in CDF-2 */
} typespec;

static const typespec TYPES[] = {
    {"v_byte", TSR_BYTE, 1},     {"v_char", TSR_CHAR, 1},     {"v_short", TSR_SHORT, 1},
    {"v_int", TSR_INT, 1},       {"v_float", TSR_FLOAT, 1},   {"v_double", TSR_DOUBLE, 1},
    {"v_ubyte", TSR_UBYTE, 0},   {"v_ushort", TSR_USHORT, 0}, {"v_uint", TSR_UINT, 0},
    {"v_int64", TSR_INT64, 0},   {"v_uint64", TSR_UINT64, 0},
};
enum { NTYPES = sizeof TYPES / sizeof TYPES[0] };

static int nranks, model_rank;
static int quant_bits; /* nc4q: bits bitround keeps */

/* A value of the check function, spread over the type's range so that a
 * lost high byte or sign shows: unsigned types above the signed maximum,
 * 64-bit ones beyond 32 bits. */
static void value(tsr_type t, int v, int64_t tt, int64_t k, int64_t j, int64_t i, void *out) {
  int64_t c = tu_value(v, tt, k, j, i);
  switch (t) {
  case TSR_BYTE: *(int8_t *)out = (int8_t)(c % 251 - 125); break;
  case TSR_CHAR: *(char *)out = (char)('A' + c % 26); break;
  case TSR_SHORT: *(int16_t *)out = (int16_t)(c % 65521 - 32760); break;
  case TSR_INT: *(int32_t *)out = (int32_t)(c - 8000000); break;
  case TSR_FLOAT: *(float *)out = (float)c * 0.25f; break;
  case TSR_DOUBLE: *(double *)out = (double)c + 0.125; break;
  case TSR_UBYTE: *(uint8_t *)out = (uint8_t)(200 + c % 55); break;
  case TSR_USHORT: *(uint16_t *)out = (uint16_t)(40000 + c % 25000); break;
  case TSR_UINT: *(uint32_t *)out = (uint32_t)(3000000000u + (uint32_t)c); break;
  case TSR_INT64: *(int64_t *)out = -(c * 1000003LL + 5000000000LL); break;
  case TSR_UINT64: *(uint64_t *)out = 10000000000000000000ULL + (uint64_t)c; break;
  }
}

/* Equal, or (quantized floats) within half a unit of the last kept bit. */
static int same(tsr_type t, const void *got, const void *want) {
  size_t es = tsr_type_size(t);
  if (memcmp(got, want, es) == 0) return 1;
  if (!quant_bits) return 0;
  double g = t == TSR_FLOAT ? *(const float *)got : t == TSR_DOUBLE ? *(const double *)got : NAN;
  double w = t == TSR_FLOAT ? *(const float *)want : t == TSR_DOUBLE ? *(const double *)want : NAN;
  return fabs(g - w) <= fabs(w) * ldexp(1.0, -quant_bits);
}

typedef struct {
  const char *format;
  const char *strategy;
  char init_hints[128], hints[256];
  int split, servers;
  int ntypes;
  const typespec *types[NTYPES];
} scenario;

static int parse_scenario(const char *name, scenario *S) {
  memset(S, 0, sizeof *S);
  char fmt[32];
  const char *dash = strchr(name, '-');
  if (!dash || (size_t)(dash - name) >= sizeof fmt) return -1;
  memcpy(fmt, name, (size_t)(dash - name));
  fmt[dash - name] = '\0';
  S->strategy = dash + 1;
  const char *fh;
  if (strcmp(fmt, "cdf2") == 0) fh = "format=cdf2";
  else if (strcmp(fmt, "cdf5") == 0) fh = "format=cdf5";
  else if (strcmp(fmt, "nc4") == 0) fh = "format=netcdf4";
  else if (strcmp(fmt, "nc4z") == 0) fh = "format=netcdf4:deflate=1:shuffle=1:chunks=1x4x8";
  else if (strcmp(fmt, "nc4q") == 0) fh = "format=netcdf4:deflate=2:quantize=bitround:12";
  else return -1;
  if (strcmp(fmt, "nc4q") == 0) quant_bits = 12;
  const char *sh;
  if (strcmp(S->strategy, "serial") == 0) sh = "strategy=serial:slab_bytes=1k";
  else if (strcmp(S->strategy, "direct") == 0) sh = "strategy=direct:buffer_bytes=4k";
  else if (strcmp(S->strategy, "aggregate") == 0) sh = "strategy=aggregate:aggregators=2";
  else if (strcmp(S->strategy, "split") == 0) sh = "strategy=split";
  else if (strcmp(S->strategy, "servers") == 0) sh = "";
  else return -1;
  S->split = strcmp(S->strategy, "split") == 0;
  S->servers = strcmp(S->strategy, "servers") == 0;
  /* Servers: a group of two (parallel) from four ranks, else a group of one
   * (its root writes serially). */
  if (S->servers)
    snprintf(S->init_hints, sizeof S->init_hints, "strategy=servers:io_groups=1:io_tasks=%d",
             nranks >= 4 ? 2 : 1);
  if (strstr(sh, "aggregators=2") && nranks < 2) sh = "strategy=aggregate";
  snprintf(S->hints, sizeof S->hints, "%s%s%s", fh, sh[0] ? ":" : "", sh);
  S->format = fmt[0] == 'c' ? (fmt[3] == '2' ? "cdf2" : "cdf5") : "netcdf4";
  for (int t = 0; t < NTYPES; t++)
    if (TYPES[t].classic || strcmp(S->format, "cdf2") != 0) S->types[S->ntypes++] = &TYPES[t];
  return 0;
}

/* This rank's tile of the (y, x) plane: a 2-D process grid. */
static void tile(int rank, int n, int64_t st[2], int64_t ct[2]) {
  int dims[2] = {0, 0};
  MPI_Dims_create(n, 2, dims);
  int py = rank / dims[1], px = rank % dims[1];
  st[0] = NY * py / dims[0];
  ct[0] = NY * (py + 1) / dims[0] - st[0];
  st[1] = NX * px / dims[1];
  ct[1] = NX * (px + 1) / dims[1] - st[1];
}

/* Memory over the halo'd box [st - HALO, st + ct + HALO) in y and x. */
static void *fill(tsr_type t, int v, int64_t tt, int nd, const int64_t st[], const int64_t ct[]) {
  size_t es = tsr_type_size(t);
  int64_t mz = nd == 3 ? NZ : 1, my = ct[nd - 2] + 2 * HALO, mx = ct[nd - 1] + 2 * HALO;
  char *buf = malloc((size_t)(mz * my * mx) * es + 1);
  memset(buf, 0x77, (size_t)(mz * my * mx) * es); /* halo: must never reach the file */
  for (int64_t k = 0; k < mz; k++)
    for (int64_t j = 0; j < ct[nd - 2]; j++)
      for (int64_t i = 0; i < ct[nd - 1]; i++)
        value(t, v, tt, k, st[nd - 2] + j, st[nd - 1] + i,
              buf + (size_t)((k * my + j + HALO) * mx + i + HALO) * es);
  return buf;
}

/* What the inquiry calls say about the file of this test, being written or
 * opened: dims, every variable's type and shape, the attributes. */
static void check_inquiry(const tsr_file *f, const scenario *S, int64_t records, int opened) {
  int nd = -1, nv = -1, ng = -1, unlim = -2, id = -1;
  TSR_CHECK_OK(tsr_inq(f, &nd, &nv, &ng, &unlim));
  TSR_CHECK_EQ_INT(nd, 4);
  TSR_CHECK_EQ_INT(nv, 2 * S->ntypes);
  TSR_CHECK_EQ_INT(ng, S->ntypes);
  TSR_CHECK_EQ_INT(unlim, 0);
  char name[TSR_MAX_NAME];
  int64_t len = -1;
  TSR_CHECK_OK(tsr_inq_dim(f, 0, name, &len));
  TSR_CHECK_EQ_INT(strcmp(name, "Time"), 0);
  TSR_CHECK_EQ_INT(len, records);
  TSR_CHECK_OK(tsr_inq_dimid(f, "y", &id));
  TSR_CHECK_EQ_INT(id, 2);
  TSR_CHECK_OK(tsr_inq_dim(f, id, NULL, &len));
  TSR_CHECK_EQ_INT(len, NY);
  TSR_CHECK_RC(tsr_inq_dim(f, 4, name, &len), TSR_EBADID);
  TSR_CHECK_RC(tsr_inq_dimid(f, "nope", &id), TSR_ENAME);
  for (int t = 0; t < S->ntypes; t++) {
    const typespec *ts = S->types[t];
    tsr_type ty;
    int vid = -1, vnd = -1, dimids[TSR_MAX_DIMS], natts = -1;
    int64_t shape[TSR_MAX_DIMS];
    TSR_CHECK_OK(tsr_inq_varid(f, ts->name, &vid));
    TSR_CHECK_OK(tsr_inq_var(f, vid, name, &ty, &vnd, dimids, shape));
    TSR_CHECK_EQ_INT(strcmp(name, ts->name), 0);
    TSR_CHECK_EQ_INT(ty, ts->type);
    TSR_CHECK_EQ_INT(vnd, 4);
    TSR_CHECK_EQ_INT(dimids[0] == 0 && dimids[1] == 1 && dimids[2] == 2 && dimids[3] == 3, 1);
    TSR_CHECK_EQ_INT(shape[0] == records && shape[1] == NZ && shape[2] == NY && shape[3] == NX, 1);
    /* A quantized variable read back also has NetCDF's record of the
     * quantization (_QuantizeBitRoundNumberOfSignificantBits). */
    int quantized = opened && quant_bits && (ts->type == TSR_FLOAT || ts->type == TSR_DOUBLE);
    TSR_CHECK_OK(tsr_inq_natts(f, vid, &natts));
    TSR_CHECK_EQ_INT(natts, 1 + quantized);
    int sample = 0;
    for (int a = 0; a < natts; a++) {
      TSR_CHECK_OK(tsr_inq_attname(f, vid, a, name));
      sample += strcmp(name, "sample") == 0;
    }
    TSR_CHECK_EQ_INT(sample, 1);
    TSR_CHECK_RC(tsr_inq_attname(f, vid, natts, name), TSR_EBADID);
    size_t n = 0;
    TSR_CHECK_OK(tsr_inq_att(f, vid, "sample", &ty, &n));
    TSR_CHECK_EQ_INT(ty, ts->type);
    TSR_CHECK_EQ_INT(n, 1);
    unsigned char got[8] = {0}, want[8] = {0};
    value(ts->type, t, 0, 0, 0, 1, want);
    TSR_CHECK_OK(tsr_get_att(f, vid, "sample", got));
    TSR_CHECK_EQ_INT(memcmp(got, want, tsr_type_size(ts->type)), 0);
    memset(got, 0, sizeof got);
    TSR_CHECK_OK(tsr_get_att(f, TSR_GLOBAL, ts->name, got));
    TSR_CHECK_EQ_INT(memcmp(got, want, tsr_type_size(ts->type)), 0);
    TSR_CHECK_RC(tsr_get_att(f, vid, "nope", got), TSR_ENAME);
  }
  TSR_CHECK_RC(tsr_inq_var(f, 2 * S->ntypes, name, NULL, NULL, NULL, NULL), TSR_EBADID);
  TSR_CHECK_RC(tsr_inq_natts(f, -5, &ng), TSR_EBADID);
}

static int write_file(tsr_ctx *ctx, const scenario *S, const char *path, int nr, int rank) {
  int64_t st2[2], ct2[2];
  tile(rank, nr, st2, ct2);
  int64_t g2[2] = {NY, NX}, g3[3] = {NZ, NY, NX};
  int64_t st3[3] = {0, st2[0], st2[1]}, ct3[3] = {NZ, ct2[0], ct2[1]};
  int64_t m2s[2] = {st2[0] - HALO, st2[1] - HALO}, m2c[2] = {ct2[0] + 2 * HALO, ct2[1] + 2 * HALO};
  int64_t m3s[3] = {0, m2s[0], m2s[1]}, m3c[3] = {NZ, m2c[0], m2c[1]};
  tsr_decomp *d2 = NULL, *d3 = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g2, st2, ct2, m2s, m2c, &d2));
  TSR_CHECK_OK(tsr_decomp_box(ctx, 3, g3, st3, ct3, m3s, m3c, &d3));
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, S->hints, &f);
  if (rc) {
    tsr_decomp_free(&d2);
    tsr_decomp_free(&d3);
    return rc;
  }
  int dT, dz, dy, dx, v3[NTYPES], v2[NTYPES];
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  TSR_CHECK_OK(tsr_def_dim(f, "z", NZ, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dx));
  for (int t = 0; t < S->ntypes; t++) {
    const typespec *ts = S->types[t];
    char name[64];
    TSR_CHECK_OK(tsr_def_var(f, ts->name, ts->type, 4, (int[]){dT, dz, dy, dx}, &v3[t]));
    snprintf(name, sizeof name, "%s_2d", ts->name);
    TSR_CHECK_OK(tsr_def_var(f, name, ts->type, 2, (int[]){dy, dx}, &v2[t]));
    TSR_CHECK_OK(tsr_def_var_decomp(f, v3[t], d3));
    TSR_CHECK_OK(tsr_def_var_decomp(f, v2[t], d2));
    unsigned char att[8];
    value(ts->type, t, 0, 0, 0, 1, att);
    TSR_CHECK_OK(tsr_put_att(f, v3[t], "sample", ts->type, 1, att));
    TSR_CHECK_OK(tsr_put_att(f, TSR_GLOBAL, ts->name, ts->type, 1, att));
  }
  if (strcmp(S->format, "cdf2") == 0) { /* what CDF-2 lacks is refused, with a reason */
    int bad = -1;
    for (int t = 0; t < NTYPES; t++) {
      if (TYPES[t].classic) continue;
      TSR_CHECK_RC(tsr_def_var(f, "bad", TYPES[t].type, 2, (int[]){dy, dx}, &bad), TSR_ETYPE);
      uint64_t one = 1;
      TSR_CHECK_RC(tsr_put_att(f, TSR_GLOBAL, "bad", TYPES[t].type, 1, &one), TSR_ETYPE);
    }
    const char *msg = NULL;
    tsr_backend_error(f, NULL, &msg);
    TSR_CHECK_EQ_INT(msg && strstr(msg, "format=cdf5 or netcdf4") != NULL, 1);
  }
  TSR_CHECK_OK(tsr_enddef(f));
  check_inquiry(f, S, 0, 0);
  for (int t = 0; t < S->ntypes; t++) {
    tsr_type ty = S->types[t]->type;
    for (int64_t tt = 0; tt < NT; tt++) {
      void *b = fill(ty, t, tt, 3, st3, ct3);
      TSR_CHECK_OK(tsr_put(f, v3[t], tt, NULL, b));
      free(b);
    }
    void *b = fill(ty, t + 100, 0, 2, st2, ct2);
    TSR_CHECK_OK(tsr_put(f, v2[t], 0, NULL, b));
    free(b);
  }
  check_inquiry(f, S, NT, 0);
  rc = tsr_close(&f);
  tsr_decomp_free(&d2);
  tsr_decomp_free(&d3);
  return rc;
}

/* Compare a block read back (region [st, st+ct) of one frame) with the
 * check values; count and report the first mismatch. */
static int64_t compare(const char *label, const typespec *ts, int v, int64_t tt, int nd,
                       const int64_t st[], const int64_t ct[], const void *got) {
  size_t es = tsr_type_size(ts->type);
  int64_t bad = 0, q = 0, nk = nd == 3 ? ct[0] : 1;
  unsigned char want[8];
  for (int64_t k = 0; k < nk; k++)
    for (int64_t j = 0; j < ct[nd - 2]; j++)
      for (int64_t i = 0; i < ct[nd - 1]; i++, q++) {
        value(ts->type, v, tt, nd == 3 ? st[0] + k : 0, st[nd - 2] + j, st[nd - 1] + i, want);
        if (!same(ts->type, (const char *)got + q * (int64_t)es, want) && bad++ == 0)
          fprintf(stderr, "[rank %d] %s: %s t=%lld k=%lld j=%lld i=%lld differs\n", tu_rank, label,
                  ts->name, (long long)tt, (long long)k, (long long)(st[nd - 2] + j),
                  (long long)(st[nd - 1] + i));
      }
  return bad;
}

/* Read a whole file (or this rank's split piece) with NetCDF-C and compare. */
static void verify_netcdf(const scenario *S, const char *path, int piece_rank, int nr) {
  int nc, st = nc_open(path, NC_NOWRITE, &nc);
  TSR_CHECK_EQ_INT(st, NC_NOERR);
  if (st) return;
  int64_t s2[2] = {0, 0}, c2[2] = {NY, NX};
  if (piece_rank >= 0) tile(piece_rank, nr, s2, c2);
  for (int t = 0; t < S->ntypes; t++) {
    const typespec *ts = S->types[t];
    char name[64];
    int id;
    nc_type xt;
    size_t es = tsr_type_size(ts->type);
    TSR_CHECK_EQ_INT(nc_inq_varid(nc, ts->name, &id), NC_NOERR);
    TSR_CHECK_EQ_INT(nc_inq_vartype(nc, id, &xt), NC_NOERR);
    TSR_CHECK_EQ_INT(xt, (nc_type)ts->type);
    char *buf = malloc((size_t)(NZ * NY * NX) * es);
    for (int64_t tt = 0; tt < NT; tt++) {
      size_t sv[4] = {(size_t)tt, 0, 0, 0}, cv[4] = {1, NZ, (size_t)c2[0], (size_t)c2[1]};
      TSR_CHECK_EQ_INT(nc_get_vara(nc, id, sv, cv, buf), NC_NOERR);
      int64_t s3[3] = {0, s2[0], s2[1]}, c3[3] = {NZ, c2[0], c2[1]};
      TSR_CHECK_EQ_INT(compare("netcdf", ts, t, tt, 3, s3, c3, buf), 0);
    }
    snprintf(name, sizeof name, "%s_2d", ts->name);
    TSR_CHECK_EQ_INT(nc_inq_varid(nc, name, &id), NC_NOERR);
    size_t sv[2] = {0, 0}, cv[2] = {(size_t)c2[0], (size_t)c2[1]};
    TSR_CHECK_EQ_INT(nc_get_vara(nc, id, sv, cv, buf), NC_NOERR);
    TSR_CHECK_EQ_INT(compare("netcdf", ts, t + 100, 0, 2, s2, c2, buf), 0);
    free(buf);
  }
  nc_close(nc);
}

/* Read back through Tessera with another decomposition: slabs of rows. */
static void verify_tessera(tsr_ctx *ctx, const scenario *S, const char *path, int nr, int rank) {
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_open(ctx, path, NULL, &f));
  if (!f) return;
  check_inquiry(f, S, NT, 1);
  int64_t y0 = NY * rank / nr, ny = NY * (rank + 1) / nr - y0;
  int64_t s2[2] = {y0, 0}, c2[2] = {ny, NX}, s3[3] = {0, y0, 0}, c3[3] = {NZ, ny, NX};
  int64_t g2[2] = {NY, NX}, g3[3] = {NZ, NY, NX};
  tsr_decomp *d2 = NULL, *d3 = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g2, s2, c2, NULL, NULL, &d2));
  TSR_CHECK_OK(tsr_decomp_box(ctx, 3, g3, s3, c3, NULL, NULL, &d3));
  for (int t = 0; t < S->ntypes; t++) {
    const typespec *ts = S->types[t];
    char name[64];
    int id = -1;
    size_t es = tsr_type_size(ts->type);
    char *buf = malloc((size_t)(NZ * NY * NX) * es);
    TSR_CHECK_OK(tsr_inq_varid(f, ts->name, &id));
    for (int64_t tt = 0; tt < NT; tt++) {
      TSR_CHECK_OK(tsr_get(f, id, tt, d3, buf));
      TSR_CHECK_EQ_INT(compare("tsr_get", ts, t, tt, 3, s3, c3, buf), 0);
    }
    snprintf(name, sizeof name, "%s_2d", ts->name);
    TSR_CHECK_OK(tsr_inq_varid(f, name, &id));
    TSR_CHECK_OK(tsr_get(f, id, 0, d2, buf));
    TSR_CHECK_EQ_INT(compare("tsr_get", ts, t + 100, 0, 2, s2, c2, buf), 0);
    free(buf);
  }
  TSR_CHECK_OK(tsr_close(&f));
  tsr_decomp_free(&d2);
  tsr_decomp_free(&d3);
}

/* A one-variable file with @p hints; returns tsr_enddef's code (the
 * backend creates the file there) after closing what was opened. */
static int small_file(tsr_ctx *ctx, const char *path, const char *hints, char *msg, size_t cap) {
  tsr_file *f = NULL;
  msg[0] = '\0';
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    snprintf(msg, cap, "%s", tsr_last_error());
    return rc;
  }
  int d, v;
  TSR_CHECK_OK(tsr_def_dim(f, "x", 16, &d));
  TSR_CHECK_OK(tsr_def_var(f, "v", TSR_FLOAT, 1, &d, &v));
  rc = tsr_enddef(f);
  const char *m = NULL;
  tsr_backend_error(f, NULL, &m);
  snprintf(msg, cap, "%s", rc && m ? m : "");
  if (!rc) {
    float x[16] = {0};
    TSR_CHECK_OK(tsr_put_global(f, v, 0, x));
  }
  int crc = tsr_close(&f);
  if (!rc) TSR_CHECK_OK(crc);
  return rc;
}

static int nc_format_of(const char *path) {
  int nc, fmt = -1;
  if (nc_open(path, NC_NOWRITE, &nc) == NC_NOERR) {
    nc_inq_format(nc, &fmt);
    nc_close(nc);
  }
  return fmt;
}

static int special(const char *dir, const char *name) {
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  char path[512], msg[512];
  snprintf(path, sizeof path, "%s/fmt_%s_np%d.nc", dir, name, nranks);
  if (strcmp(name, "zstd") == 0) {
    int rc = small_file(ctx, path, "format=netcdf4:zstd=3:strategy=direct", msg, sizeof msg);
    if (rc != 0) {
      TSR_CHECK_RC(rc, TSR_ENOTBUILT);
      TSR_CHECK_EQ_INT(strstr(msg, "zstd") != NULL, 1);
      if (tu_rank == 0) printf("zstd not available: %s\n", msg);
    }
  } else if (strcmp(name, "choice") == 0) {
    /* backend=netcdf4 alone writes netCDF-4; format=netcdf4 alone picks it. */
    TSR_CHECK_OK(small_file(ctx, path, "backend=netcdf4:strategy=serial", msg, sizeof msg));
    if (tu_rank == 0) TSR_CHECK_EQ_INT(nc_format_of(path), NC_FORMAT_NETCDF4);
    MPI_Barrier(MPI_COMM_WORLD);
    TSR_CHECK_OK(small_file(ctx, path, "format=netcdf4:strategy=aggregate", msg, sizeof msg));
    if (tu_rank == 0) TSR_CHECK_EQ_INT(nc_format_of(path), NC_FORMAT_NETCDF4);
    MPI_Barrier(MPI_COMM_WORLD);
    TSR_CHECK_OK(small_file(ctx, path, "format=cdf5:strategy=serial", msg, sizeof msg));
    if (tu_rank == 0) TSR_CHECK_EQ_INT(nc_format_of(path), NC_FORMAT_CDF5);
    MPI_Barrier(MPI_COMM_WORLD);
    TSR_CHECK_RC(small_file(ctx, path, "format=netcdf4:backend=netcdf", msg, sizeof msg), TSR_EHINT);
    TSR_CHECK_EQ_INT(strstr(msg, "does not write") != NULL, 1);
    TSR_CHECK_RC(small_file(ctx, path, "format=cdf2:backend=netcdf4", msg, sizeof msg), TSR_EHINT);
    TSR_CHECK_RC(small_file(ctx, path, "format=netcdf4:quantize=bitround:99", msg, sizeof msg), TSR_EHINT);
    TSR_CHECK_EQ_INT(strstr(msg, "quantize") != NULL, 1);
    TSR_CHECK_RC(small_file(ctx, path, "format=netcdf4:chunks=0x4", msg, sizeof msg), TSR_EHINT);
    TSR_CHECK_RC(small_file(ctx, path, "format=netcdf4:deflate=10", msg, sizeof msg), TSR_EHINT);
    TSR_CHECK_RC(small_file(ctx, path, "format=netcdf4:chunks=contiguous:deflate=1", msg, sizeof msg),
          TSR_EHINT);
    TSR_CHECK_EQ_INT(strstr(msg, "contiguous") != NULL, 1);
    /* Uncompressed contiguous storage is fine. */
    TSR_CHECK_OK(small_file(ctx, path, "format=netcdf4:chunks=contiguous", msg, sizeof msg));
  } else {
    TSR_CHECK_OK(tsr_finalize(&ctx));
    MPI_Comm_free(&model);
    return -1;
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  return tu_finish(name);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 3) {
    if (tu_rank == 0) fprintf(stderr, "usage: test_formats <dir> <scenario>\n");
    MPI_Finalize();
    return 2;
  }
  if (!strchr(argv[2], '-')) {
    int rc = special(argv[1], argv[2]);
    if (rc >= 0) return rc;
    if (tu_rank == 0) fprintf(stderr, "unknown scenario '%s'\n", argv[2]);
    MPI_Finalize();
    return 2;
  }
  scenario S;
  if (parse_scenario(argv[2], &S)) {
    if (tu_rank == 0) fprintf(stderr, "unknown scenario '%s'\n", argv[2]);
    MPI_Finalize();
    return 2;
  }
  char path[512];
  snprintf(path, sizeof path, "%s/fmt_%s_np%d.nc", argv[1], argv[2], nranks);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  int rc = tsr_init(MPI_COMM_WORLD, S.init_hints[0] ? S.init_hints : NULL, &ctx, &model);
  if (rc == TSR_ENOTBUILT) {
    MPI_Finalize();
    return 77;
  }
  TSR_CHECK_OK(rc);
  int nr = 0, notbuilt = 0;
  if (ctx) { /* model ranks (servers return from tsr_init at finalize) */
    MPI_Comm_size(model, &nr);
    MPI_Comm_rank(model, &model_rank);
    rc = write_file(ctx, &S, path, nr, model_rank);
    notbuilt = rc == TSR_ENOTBUILT;
    if (rc && !notbuilt)
      fprintf(stderr, "[rank %d] %s: %s (%s)\n", tu_rank, argv[2], tsr_errname(rc),
              tsr_last_error());
    if (!notbuilt) TSR_CHECK_OK(rc);
    if (!rc && !S.servers && !S.split) verify_tessera(ctx, &S, path, nr, model_rank);
    TSR_CHECK_OK(tsr_finalize(&ctx)); /* servers: waits until the file is written */
    MPI_Comm_free(&model);
  }
  MPI_Allreduce(MPI_IN_PLACE, &notbuilt, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Bcast(&nr, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (notbuilt) {
    MPI_Finalize();
    return 77;
  }
  if (S.split && tu_rank < nr) {
    char piece[600];
    snprintf(piece, sizeof piece, "%s.%04d", path, tu_rank);
    verify_netcdf(&S, piece, tu_rank, nr);
  } else if (!S.split && tu_rank == 0) {
    verify_netcdf(&S, path, -1, nr);
  }
  return tu_finish(argv[2]);
}
