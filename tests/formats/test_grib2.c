/* GRIB2 (format=grib2): a WRF-like file through one strategy, read back
 * message by message with ecCodes: one message per horizontal level of each
 * mapped field and frame, the parameter of the WRF table or of the
 * variable's GRIB_* attributes, the level and forecast time, and every value
 * within simple packing's precision (range / 2^bits). Unmapped fields and
 * Times are left out. direct writes tiles, no whole levels: TSR_EHINT.
 * aggregate2: the same file written by serial, by aggregate with 2 writers
 * and with one writer per rank (more writers than T's levels: some hold
 * nothing, the 2-D fields sit on the last) must be byte for byte the same.
 *
 * servers_matrix: the file through the I/O servers with every transport and
 * concentrator setting (transport=rma, concentrators=per_node|1|2, with
 * bounded servers) must be byte for byte the default servers' file.
 *
 * Usage: test_grib2 <dir> <serial|aggregate|aggregate2|servers|servers_matrix|direct>. Exit
 * 77 when the grib2 backend is not built. The file stays as
 * <dir>/grib_<scenario>_np<N>.grb2. servers: one task in the group;
 * servers2: two tasks, each writing whole levels (its part of every field,
 * cut as aggregate cuts it) at offsets the tasks agree on; servers2b: the
 * same with server_buffer_bytes=4k (slabs smaller than a level); servers2m:
 * servers2 with an index map whose rows are dealt round-robin, last first
 * (no box per rank: the runs travel to both tasks). All must be byte for
 * byte the file strategy=serial writes (through boxes). */
#include <eccodes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { NZ = 3, NY = 9, NX = 10, NT = 2, BITS = 16 };

typedef struct {
  const char *name;
  tsr_type type;
  int nd; /* 3: (Time, z, y, x); 2: (Time, y, x) */
  long disc, cat, num, surface, level; /* expected GRIB2 identity; disc < 0: left out */
} gspec;

static const gspec VARS[] = {
    {"T", TSR_FLOAT, 3, 0, 0, 2, 105, -1},    {"T2", TSR_FLOAT, 2, 0, 0, 0, 103, 2},
    {"PSFC", TSR_DOUBLE, 2, 0, 3, 0, 1, 0},   {"MYVAR", TSR_INT, 2, 0, 1, 8, 1, 0},
    {"FOO", TSR_FLOAT, 2, -1, 0, 0, 0, 0},
};
enum { NV = sizeof VARS / sizeof VARS[0] };

static double want_value(int v, int64_t t, int64_t k, int64_t j, int64_t i) {
  return 100.0 + (double)tu_value(v, t, k, j, i) / 1000.0;
}

/* What a message holds: WRF's T is theta - 300 K, its message theta. */
static double message_value(int v, double w) { return v == 0 ? w + 300.0 : w; }

static int MAP; /* servers2m: write through index maps */

static int write_grib(tsr_ctx *ctx, MPI_Comm model, const char *path, const char *hints) {
  int nr, me;
  MPI_Comm_size(model, &nr);
  MPI_Comm_rank(model, &me);
  int64_t y0 = NY * me / nr, ny = NY * (me + 1) / nr - y0;
  int64_t g2[2] = {NY, NX}, g3[3] = {NZ, NY, NX}, s2[2] = {y0, 0}, c2[2] = {ny, NX};
  int64_t s3[3] = {0, y0, 0}, c3[3] = {NZ, ny, NX};
  /* My rows, in buffer order: a box's, or (MAP) every nr-th, last first. */
  int64_t rows[NY], nrows = 0;
  for (int64_t j = MAP ? NY - 1 : y0; MAP ? j >= 0 : j < y0 + ny; j += MAP ? -1 : 1)
    if (!MAP || j % nr == me) rows[nrows++] = j;
  ny = nrows;
  tsr_decomp *d2 = NULL, *d3 = NULL;
  if (MAP) {
    int64_t idx[NZ * NY * NX], n = 0;
    for (int64_t k = 0; k < NZ; k++)
      for (int64_t r = 0; r < nrows; r++)
        for (int64_t i = 0; i < NX; i++) idx[n++] = (k * NY + rows[r]) * NX + i;
    TSR_CHECK_OK(tsr_decomp_map(ctx, 2, g2, nrows * NX, idx, &d2)); /* level 0's are the 2-D ones */
    TSR_CHECK_OK(tsr_decomp_map(ctx, 3, g3, n, idx, &d3));
  } else {
    TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g2, s2, c2, NULL, NULL, &d2));
    TSR_CHECK_OK(tsr_decomp_box(ctx, 3, g3, s3, c3, NULL, NULL, &d3));
  }
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    tsr_decomp_free(&d2);
    tsr_decomp_free(&d3);
    return rc;
  }
  int dT, dz, dy, dx, ds, vid[NV], times;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  TSR_CHECK_OK(tsr_def_dim(f, "DateStrLen", 19, &ds));
  TSR_CHECK_OK(tsr_def_dim(f, "bottom_top", NZ, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "Times", TSR_CHAR, 2, (int[]){dT, ds}, &times));
  for (int v = 0; v < NV; v++) {
    const gspec *g = &VARS[v];
    if (g->nd == 3) TSR_CHECK_OK(tsr_def_var(f, g->name, g->type, 4, (int[]){dT, dz, dy, dx}, &vid[v]));
    else TSR_CHECK_OK(tsr_def_var(f, g->name, g->type, 3, (int[]){dT, dy, dx}, &vid[v]));
  }
  /* MYVAR is no WRF field: its parameter comes from attributes. */
  TSR_CHECK_OK(tsr_put_att(f, vid[3], "GRIB_discipline", TSR_INT, 1, (int[]){0}));
  TSR_CHECK_OK(tsr_put_att(f, vid[3], "GRIB_parameterCategory", TSR_INT, 1, (int[]){1}));
  TSR_CHECK_OK(tsr_put_att(f, vid[3], "GRIB_parameterNumber", TSR_INT, 1, (int[]){8}));
  TSR_CHECK_OK(tsr_put_att(f, vid[3], "GRIB_typeOfFirstFixedSurface", TSR_INT, 1, (int[]){1}));
  /* Frame t is t hours after the start: forecastTime t, in hours. */
  TSR_CHECK_OK(tsr_put_att(f, TSR_GLOBAL, "SIMULATION_START_DATE", TSR_CHAR, 19, "2026-01-01_00:00:00"));
  TSR_CHECK_OK(tsr_enddef(f));
  for (int t = 0; t < NT; t++) {
    char date[20];
    snprintf(date, sizeof date, "2026-01-01_%02d:00:00", t);
    TSR_CHECK_OK(tsr_put_global(f, times, t, date));
    for (int v = 0; v < NV; v++) {
      const gspec *g = &VARS[v];
      int64_t nk = g->nd == 3 ? NZ : 1, n = nk * ny * NX, q = 0;
      void *buf = malloc((size_t)(n > 0 ? n : 1) * 8);
      for (int64_t k = 0; k < nk; k++)
        for (int64_t r = 0; r < nrows; r++)
          for (int64_t i = 0, j = rows[r]; i < NX; i++, q++) {
            double w = want_value(v, t, k, j, i);
            if (g->type == TSR_FLOAT) ((float *)buf)[q] = (float)w;
            else if (g->type == TSR_DOUBLE) ((double *)buf)[q] = w;
            else ((int32_t *)buf)[q] = (int32_t)tu_value(v, t, k, j, i);
          }
      TSR_CHECK_OK(tsr_put(f, vid[v], t, g->nd == 3 ? d3 : d2, buf));
      free(buf);
    }
  }
  rc = tsr_close(&f);
  tsr_decomp_free(&d2);
  tsr_decomp_free(&d3);
  return rc;
}

static long get_long(codes_handle *h, const char *key) {
  long v = -999;
  TSR_CHECK_EQ_INT(codes_get_long(h, key, &v), 0);
  return v;
}

/* Every message: which field, level and frame it is, and its values. */
static void verify(const char *path) {
  FILE *fp = fopen(path, "rb");
  TSR_CHECK_EQ_INT(fp != NULL, 1);
  if (!fp) return;
  int seen[NV][NT][NZ] = {{{0}}}, nmsg = 0, err = 0;
  codes_handle *h;
  while ((h = codes_handle_new_from_file(NULL, fp, PRODUCT_GRIB, &err)) != NULL) {
    nmsg++;
    TSR_CHECK_EQ_INT(get_long(h, "edition"), 2);
    long disc = get_long(h, "discipline"), cat = get_long(h, "parameterCategory"),
         num = get_long(h, "parameterNumber"), sfc = get_long(h, "typeOfFirstFixedSurface"),
         lev = get_long(h, "scaledValueOfFirstFixedSurface"), t = get_long(h, "forecastTime");
    TSR_CHECK_EQ_INT(get_long(h, "dataDate"), 20260101);
    TSR_CHECK_EQ_INT(get_long(h, "dataTime"), 0);
    TSR_CHECK_EQ_INT(get_long(h, "indicatorOfUnitOfTimeRange"), 1); /* hours */
    TSR_CHECK_EQ_INT(get_long(h, "Ni"), NX);
    TSR_CHECK_EQ_INT(get_long(h, "Nj"), NY);
    TSR_CHECK_EQ_INT(get_long(h, "bitsPerValue"), BITS);
    int v = -1;
    for (int i = 0; i < NV; i++)
      if (VARS[i].disc == disc && VARS[i].cat == cat && VARS[i].num == num &&
          VARS[i].surface == sfc)
        v = i;
    TSR_CHECK_EQ_INT(v >= 0, 1);
    long k = v >= 0 && VARS[v].nd == 3 ? lev - 1 : 0;
    if (v >= 0 && VARS[v].nd == 2) TSR_CHECK_EQ_INT(lev, VARS[v].level);
    if (v < 0 || k < 0 || k >= NZ || t < 0 || t >= NT) {
      codes_handle_delete(h);
      continue;
    }
    seen[v][t][k]++;
    size_t n = 0;
    TSR_CHECK_EQ_INT(codes_get_size(h, "values", &n), 0);
    TSR_CHECK_EQ_INT(n, NX * NY);
    double *vals = malloc(n * sizeof *vals), lo = INFINITY, hi = -INFINITY;
    TSR_CHECK_EQ_INT(codes_get_double_array(h, "values", vals, &n), 0);
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        double w = VARS[v].type == TSR_INT ? (double)tu_value(v, t, k, j, i)
                                           : want_value(v, t, k, j, i);
        if (VARS[v].type == TSR_FLOAT) w = (float)w;
        w = message_value(v, w);
        lo = fmin(lo, w);
        hi = fmax(hi, w);
      }
    /* Simple packing keeps values within one step of range / (2^bits - 1). */
    double tol = (hi - lo) / ((1 << BITS) - 1) + 1e-9 * fabs(hi), worst = 0;
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        double w = VARS[v].type == TSR_INT ? (double)tu_value(v, t, k, j, i)
                                           : want_value(v, t, k, j, i);
        if (VARS[v].type == TSR_FLOAT) w = (float)w;
        w = message_value(v, w);
        worst = fmax(worst, fabs(vals[j * NX + i] - w));
      }
    if (worst > tol)
      fprintf(stderr, "%s t=%ld k=%ld: error %g > %g\n", VARS[v].name, t, k, worst, tol);
    TSR_CHECK_EQ_INT(worst <= tol, 1);
    free(vals);
    codes_handle_delete(h);
  }
  fclose(fp);
  TSR_CHECK_EQ_INT(nmsg, NT * (NZ + 3)); /* T's levels, T2, PSFC, MYVAR; not FOO nor Times */
  for (int v = 0; v < NV; v++)
    for (int t = 0; t < NT; t++)
      for (int k = 0; k < (VARS[v].nd == 3 ? NZ : 1); k++)
        TSR_CHECK_EQ_INT(seen[v][t][k], VARS[v].disc < 0 ? 0 : 1);
}

/* The whole file, or NULL. */
static char *slurp(const char *path, long *len) {
  FILE *fp = fopen(path, "rb");
  char *buf = NULL;
  *len = -1;
  if (fp && fseek(fp, 0, SEEK_END) == 0 && (*len = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)*len + 1)) && fread(buf, 1, (size_t)*len, fp) != (size_t)*len) {
    free(buf);
    buf = NULL;
  }
  if (fp) fclose(fp);
  return buf;
}

/* @p path holds @p ref's bytes (checked on rank 0). */
static void same_as(const char *ref, const char *path) {
  if (tu_rank != 0) return;
  long n0, n1;
  char *a = slurp(ref, &n0), *b = slurp(path, &n1);
  TSR_CHECK_EQ_INT(a != NULL && b != NULL, 1);
  TSR_CHECK_EQ_INT(n1, n0);
  long diff = -1;
  for (long i = 0; a && b && n0 == n1 && i < n0 && diff < 0; i++)
    if (a[i] != b[i]) diff = i;
  if (diff >= 0) fprintf(stderr, "%s differs from %s at byte %ld\n", path, ref, diff);
  TSR_CHECK_EQ_INT(diff, -1);
  free(a);
  free(b);
}

/* servers_matrix: one context per setting (one task, the root writer, or
 * two, each writing its whole levels); returns TSR_ENOTBUILT when the
 * backend is not built. */
static int servers_matrix(const char *dir, int nranks) {
  static const struct {
    int T;
    const char *hints;
  } SETTINGS[] = {
      {1, ""},
      {1, ":transport=rma"},
      {1, ":concentrators=per_node"},
      {1, ":concentrators=1"},
      {1, ":concentrators=2"},
      {1, ":concentrators=per_node:transport=rma"},
      {1, ":concentrators=2:transport=rma:server_buffer_bytes=16k"},
      {1, ":concentrators=per_node:server_buffer_bytes=16k"},
      {2, ""},
      {2, ":concentrators=per_node"},
      {2, ":concentrators=1:transport=rma"},
  };
  enum { NS = sizeof SETTINGS / sizeof SETTINGS[0] };
  char ref[512] = "", path[512], init[160];
  int rc = 0;
  for (int i = 0; i < NS && !rc; i++) {
    int T = SETTINGS[i].T, M = nranks - T;
    if (M < T || (strstr(SETTINGS[i].hints, "concentrators=2") && M < 2)) continue;
    snprintf(init, sizeof init, "strategy=servers:io_groups=1:io_tasks=%d%s", T,
             SETTINGS[i].hints);
    snprintf(path, sizeof path, "%s/grib_matrix%d_np%d.grb2", dir, i, nranks);
    tsr_ctx *ctx = NULL;
    MPI_Comm model = MPI_COMM_NULL;
    TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, init, &ctx, &model));
    if (ctx) {
      rc = write_grib(ctx, model, path, "format=grib2:grib_bits=16:strategy=servers");
      if (rc != TSR_ENOTBUILT) TSR_CHECK_OK(rc);
      TSR_CHECK_OK(tsr_finalize(&ctx));
      MPI_Comm_free(&model);
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rc) continue;
    if (i == 0) {
      snprintf(ref, sizeof ref, "%s", path);
      if (tu_rank == 0) verify(ref);
    } else {
      same_as(ref, path);
    }
  }
  return rc;
}

/* The serial writer's file, the reference the others must equal. */
static int serial_ref(tsr_ctx *ctx, MPI_Comm model, const char *dir, const char *sc, int nranks,
                      char *ref, size_t len) {
  snprintf(ref, len, "%s/grib_%s_serial_np%d.grb2", dir, sc, nranks);
  return write_grib(ctx, model, ref, "format=grib2:grib_bits=16:strategy=serial");
}

/* aggregate2: every writer count gives the serial writer's bytes. */
static int same_bytes(tsr_ctx *ctx, MPI_Comm model, const char *dir, int nranks) {
  char ref[512], path[512], hints[160];
  int rc = serial_ref(ctx, model, dir, "aggregate2", nranks, ref, sizeof ref);
  if (rc) return rc;
  int counts[2] = {2, nranks};
  for (int c = 0; c < 2; c++) {
    snprintf(path, sizeof path, "%s/grib_aggregate2_w%d_np%d.grb2", dir, counts[c], nranks);
    snprintf(hints, sizeof hints, "format=grib2:grib_bits=16:strategy=aggregate:aggregators=%d",
             counts[c]);
    TSR_CHECK_OK(write_grib(ctx, model, path, hints));
    same_as(ref, path);
    if (tu_rank == 0) verify(path);
  }
  return 0;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 3) {
    if (tu_rank == 0) fprintf(stderr, "usage: test_grib2 <dir> <strategy>\n");
    MPI_Finalize();
    return 2;
  }
  const char *sc = argv[2];
  if (strcmp(sc, "servers_matrix") == 0) {
    int rc = servers_matrix(argv[1], nranks);
    if (rc == TSR_ENOTBUILT) {
      MPI_Finalize();
      return 77;
    }
    return tu_finish("grib2");
  }
  char path[512], hints[128], init[128] = "", ref[512] = "";
  snprintf(path, sizeof path, "%s/grib_%s_np%d.grb2", argv[1], sc, nranks);
  int servers = strncmp(sc, "servers", 7) == 0;
  snprintf(hints, sizeof hints, "format=grib2:grib_bits=%d:strategy=%s", BITS,
           servers ? "servers" : sc);
  /* servers2b: bounded server memory, so the tasks' slabs (1k) cut levels
   * and each level is assembled from several boxes. */
  if (servers)
    snprintf(init, sizeof init, "strategy=servers:io_groups=1:io_tasks=%d%s",
             strncmp(sc, "servers2", 8) == 0 ? 2 : 1,
             strcmp(sc, "servers2b") == 0 ? ":server_buffer_bytes=4k" : "");
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, init[0] ? init : NULL, &ctx, &model));
  int rc = 0;
  if (ctx) {
    if (strcmp(sc, "aggregate2") == 0) rc = same_bytes(ctx, model, argv[1], nranks);
    else {
      MAP = strcmp(sc, "servers2m") == 0;
      rc = write_grib(ctx, model, path, hints);
      MAP = 0; /* the reference goes through boxes */
    }
    /* The reference for the servers' file, compared once the servers are
     * done with it (tsr_finalize waits for them; tsr_close does not). */
    if (!rc && servers) rc = serial_ref(ctx, model, argv[1], sc, nranks, ref, sizeof ref);
    if (strcmp(sc, "direct") == 0) { /* the reason names the strategy and the backend */
      TSR_CHECK_RC(rc, TSR_EHINT);
      const char *why = tsr_last_error();
      TSR_CHECK_EQ_INT(why && strstr(why, "direct") && strstr(why, "grib2") && strstr(why, "whole"), 1);
    }
    else if (rc != TSR_ENOTBUILT) TSR_CHECK_OK(rc);
    TSR_CHECK_OK(tsr_finalize(&ctx));
    MPI_Comm_free(&model);
  }
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc == TSR_ENOTBUILT) {
    MPI_Finalize();
    return 77;
  }
  if (tu_rank == 0 && rc == 0 && strcmp(sc, "direct") != 0 && strcmp(sc, "aggregate2") != 0)
    verify(path);
  if (rc == 0 && ref[0]) same_as(ref, path); /* every task's levels at their place */
  return tu_finish("grib2");
}
