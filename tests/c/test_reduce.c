/* reduce= through the C API (docs/reductions.md), where tessera-bench does
 * not go: double memory put into a float variable with tsr_put_typed is
 * folded as the values the file gets, (float)x, and a period of 4 frames
 * spans two files of 2 frames. The derived file, read back with NetCDF on
 * rank 0, holds max, mean (double sum in frame order, cast once) and std of
 * those floats; tsr_get_stats counts the accumulators' bytes.
 *
 * Scenarios: one per strategy (serial, direct, aggregate, servers with one
 * server rank), and the servers with io_groups x io_tasks 1x2, 2x1 and 2x2
 * (files of a period written by both groups, tiles by both tasks). With
 * the servers the model ranks hold no accumulators (reduce_bytes 0) and
 * server 0 holds them all (server_reduce_bytes, heard by model rank 0 at
 * the closes); the derived files of every run are the serial run's bytes. */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NY = 9, NX = 7, FRAMES = 4, PER_FILE = 2 };

/* A value that a float cannot hold exactly, the same whatever the ranks. */
static double value(int t, int64_t j, int64_t i) {
  return 280.0 + 0.37 * t + 0.011 * (double)j + 1e-4 * (double)i + 1e-9 * (double)(j * NX + i);
}

/* With the servers, @p derived names the derived file, which is opened
 * before the statistics are taken. */
static void write_stream(tsr_ctx *ctx, MPI_Comm model, const char *strategy, const char *stem,
                         const char *derived) {
  int64_t g[2] = {NY, NX}, st[2] = {0, 0}, ct[2] = {0, NX};
  int rank, size; /* rows over the model ranks (the servers hold none) */
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &size);
  tsr_test_split1(NY, size, rank, &st[0], &ct[0]);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  char hints[160];
  snprintf(hints, sizeof hints, "strategy=%s,reduce=T/max@4+T/mean@4+T/std@4,reduce_prefix=xtrm",
           strategy);
  double *buf = malloc((size_t)(ct[0] * ct[1] > 0 ? ct[0] * ct[1] : 1) * sizeof *buf);
  TSR_REQUIRE(buf != NULL);
  for (int k = 0; k < FRAMES / PER_FILE; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s_f%d", stem, k);
    tsr_file *f = NULL;
    TSR_CHECK_OK(tsr_create(ctx, path, hints, &f));
    if (!f) break;
    int dims[3], v;
    TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
    TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dims[1]));
    TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dims[2]));
    TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 3, dims, &v));
    TSR_CHECK_OK(tsr_put_att(f, v, "units", TSR_CHAR, 1, "K"));
    TSR_CHECK_OK(tsr_enddef(f));
    for (int fr = 0; fr < PER_FILE; fr++) {
      int t = k * PER_FILE + fr;
      for (int64_t j = 0; j < ct[0]; j++)
        for (int64_t i = 0; i < ct[1]; i++) buf[j * ct[1] + i] = value(t, st[0] + j, i);
      TSR_CHECK_OK(tsr_put_typed(f, v, fr, d, TSR_DOUBLE, buf));
    }
    TSR_CHECK_OK(tsr_close(&f));
  }
  if (derived) { /* tsr_open waits for the servers' notes of every file closed */
    tsr_file *rf = NULL;
    TSR_CHECK_OK(tsr_open(ctx, derived, NULL, &rf));
    TSR_CHECK_OK(tsr_close(&rf));
  }
  tsr_stats s;
  TSR_CHECK_OK(tsr_get_stats(ctx, &s));
  if (!derived) {
    TSR_CHECK_EQ_INT(s.reduce_bytes, (4 + 8 + 16) * ct[0] * ct[1]);
    TSR_CHECK_EQ_INT(s.server_reduce_bytes, 0);
  } else { /* max, mean, std of the whole field, and one covered flag each */
    TSR_CHECK_EQ_INT(s.reduce_bytes, 0);
    if (rank == 0) TSR_CHECK_EQ_INT(s.server_reduce_bytes, (4 + 8 + 16 + 1) * NY * NX);
  }
  free(buf);
  tsr_decomp_free(&d);
}

/* Rank 0: the derived file against the statistics of the float values. */
static void check_derived(const char *path) {
  int nc, id;
  TSR_CHECK_EQ_INT(nc_open(path, NC_NOWRITE, &nc), NC_NOERR);
  float got[3][NY * NX];
  const char *names[3] = {"TMAX", "TMEAN", "TSTD"};
  for (int n = 0; n < 3; n++) {
    TSR_CHECK_EQ_INT(nc_inq_varid(nc, names[n], &id), NC_NOERR);
    TSR_CHECK_EQ_INT(nc_get_var_float(nc, id, got[n]), NC_NOERR);
  }
  char cm[64] = "";
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "TMEAN", &id), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_att_text(nc, id, "cell_methods", cm), NC_NOERR);
  TSR_CHECK_EQ_STR(cm, "Time: mean");
  nc_close(nc);
  int bad = 0;
  for (int64_t j = 0; j < NY; j++)
    for (int64_t i = 0; i < NX; i++) {
      float mx = (float)value(0, j, i);
      double sum = 0, sq = 0;
      for (int t = 0; t < FRAMES; t++) {
        float x = (float)value(t, j, i);
        mx = x > mx ? x : mx;
        sum += (double)x;
      }
      for (int t = 0; t < FRAMES; t++) {
        double dx = (double)(float)value(t, j, i) - sum / FRAMES;
        sq += dx * dx;
      }
      int e = (int)(j * NX + i);
      bad += got[0][e] != mx || got[1][e] != (float)(sum / FRAMES) ||
             fabsf(got[2][e] - (float)sqrt(sq / FRAMES)) > 1e-5f * (float)sqrt(sq / FRAMES) + 1e-7f;
    }
  TSR_CHECKF(bad == 0, "%d elements of %s differ from the statistics of the frames", bad, path);
}

/* Rank 0: the derived file's bytes are those of the serial run's (run
 * before it in the same job of the test). */
static void same_bytes(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  TSR_CHECKF(fa && fb, "cannot open %s or %s", a, b);
  long n = 0, differ = 0;
  for (int x = 0, y = 0; fa && fb && x != EOF;) {
    x = fgetc(fa), y = fgetc(fb);
    differ += x != y;
    n++;
  }
  TSR_CHECKF(differ == 0, "%ld of %ld bytes of %s differ from %s", differ, n, a, b);
  if (fa) fclose(fa);
  if (fb) fclose(fb);
}

static void one_run(const char *strategy, const char *name, const char *init_hints) {
  MPI_Comm model;
  tsr_ctx *ctx = NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, init_hints, &ctx, &model));
  if (!ctx) return; /* an I/O server: it served until the model finalized */
  char stem[400], derived[420];
  snprintf(stem, sizeof stem, "%s/hist_reduce_%s_np%d", tsr_test_arg(0, "."), name,
           tsr_test_nranks());
  snprintf(derived, sizeof derived, "%s/xtrm_reduce_%s_np%d_f0", tsr_test_arg(0, "."), name,
           tsr_test_nranks());
  write_stream(ctx, model, strategy, stem, init_hints ? derived : NULL);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0) check_derived(derived);
}

static void one_strategy(const char *strategy, const char *init_hints) {
  one_run(strategy, strategy, init_hints);
}

/* The servers as io_groups x io_tasks, next to a serial run of the same
 * model ranks (the world less the servers, split off by hand). */
static void servers_layout(int groups, int tasks) {
  char name[64], hints[96], serial[600], mine[600];
  snprintf(name, sizeof name, "servers%dx%d", groups, tasks);
  snprintf(hints, sizeof hints, "strategy=servers,io_groups=%d,io_tasks=%d", groups, tasks);
  one_run("servers", name, hints);
  /* The reference: serial (or direct) on the model ranks alone, in a directory of its
   * own, so that the derived file names the same source files. */
  char dir[420];
  snprintf(dir, sizeof dir, "%s/ref_%s_np%d", tsr_test_arg(0, "."), name, tsr_test_nranks());
  if (tsr_test_rank() == 0) mkdir(dir, 0777);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm model;
  int rank = tsr_test_rank(), size = tsr_test_nranks(), servers = groups * tasks;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size - servers ? 0 : MPI_UNDEFINED, rank, &model);
  if (model != MPI_COMM_NULL) {
    tsr_ctx *ctx = NULL;
    MPI_Comm mc;
    TSR_CHECK_OK(tsr_init(model, NULL, &ctx, &mc));
    char stem[600];
    snprintf(stem, sizeof stem, "%s/hist_reduce_%s_np%d", dir, name, size);
    /* The same backend: one server writes through netcdf, a group of two
     * through pnetcdf, as direct does. */
    if (ctx) write_stream(ctx, mc, tasks > 1 ? "direct" : "serial", stem, NULL);
    TSR_CHECK_OK(tsr_finalize(&ctx));
    MPI_Comm_free(&mc);
    MPI_Comm_free(&model);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(serial, sizeof serial, "%s/xtrm_reduce_%s_np%d_f0", dir, name, size);
  snprintf(mine, sizeof mine, "%s/xtrm_reduce_%s_np%d_f0", tsr_test_arg(0, "."), name, size);
  if (rank == 0) same_bytes(mine, serial);
}

/* One file of one frame of stream @p k (its own reduce_prefix): the
 * code of its tsr_enddef, the file closed (or aborted) either way. */
static int stream_file(tsr_ctx *ctx, MPI_Comm model, int k, char *why, size_t len) {
  int64_t g[2] = {NY, NX}, st[2] = {0, 0}, ct[2] = {0, NX};
  int rank, size;
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &size);
  tsr_test_split1(NY, size, rank, &st[0], &ct[0]);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  char path[512], hints[96];
  snprintf(path, sizeof path, "%s/hist_streams_s%d", tsr_test_arg(0, "."), k);
  snprintf(hints, sizeof hints, "reduce=T/max@1,reduce_prefix=x%d", k);
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, hints, &f));
  int dims[3], v;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dims[1]));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dims[2]));
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 3, dims, &v));
  int rc = tsr_enddef(f);
  const char *msg = "";
  int code = 0;
  if (rc) tsr_backend_error(f, &code, &msg);
  snprintf(why, len, "%s", msg);
  double buf[NY * NX];
  for (int64_t e = 0; e < ct[0] * ct[1]; e++) buf[e] = value(0, st[0] + e / NX, e % NX);
  if (!rc) TSR_CHECK_OK(tsr_put_typed(f, v, 0, d, TSR_DOUBLE, buf));
  if (!rc) TSR_CHECK_OK(tsr_close(&f));
  else tsr_abort(&f);
  tsr_decomp_free(&d);
  return rc;
}

/* The servers tell streams apart by message tag, in room for
 * TSR__REDUCE_HELD_STREAMS (8) of them: the ninth is refused at tsr_enddef
 * with a sentence on every model rank, where it would have shared the first
 * one's tags. The first eight write their derived files. */
static void servers_streams(void) {
  MPI_Comm model;
  tsr_ctx *ctx = NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, "strategy=servers,io_tasks=1", &ctx, &model));
  if (!ctx) return;
  char why[512];
  for (int k = 0; k < 8; k++) TSR_CHECK_OK(stream_file(ctx, model, k, why, sizeof why));
  TSR_CHECK_RC(stream_file(ctx, model, 8, why, sizeof why), TSR_EHINT);
  TSR_CHECK_EQ_STR(why, "hint 'reduce=T/max@1': the I/O servers hold at most 8 reduce= streams "
                        "(distinct reduce= and reduce_prefix values) in one context");
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0)
    for (int k = 0; k < 8; k++) {
      char path[512];
      snprintf(path, sizeof path, "%s/x%d_streams_s%d", tsr_test_arg(0, "."), k, k);
      TSR_CHECKF(access(path, F_OK) == 0, "derived file %s is missing", path);
    }
}

static void serial(void) { one_strategy("serial", NULL); }
static void direct(void) { one_strategy("direct", NULL); }
static void aggregate(void) { one_strategy("aggregate", NULL); }
/* The servers take the doubles (put_f64) and convert where they choose;
 * the fold still sees (float)x. */
static void servers(void) { servers_layout(1, 1); }
static void servers1x2(void) { servers_layout(1, 2); }
static void servers2x1(void) { servers_layout(2, 1); }
static void servers2x2(void) { servers_layout(2, 2); }

static const tsr_test_scenario SCENARIOS[] = {{"serial", serial, 0},
                                              {"direct", direct, 0},
                                              {"aggregate", aggregate, 0},
                                              {"servers", servers, 2},
                                              {"servers1x2", servers1x2, 4},
                                              {"servers2x1", servers2x1, 3},
                                              {"servers2x2", servers2x2, 5},
                                              {"servers_streams", servers_streams, 2}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "reduce", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
