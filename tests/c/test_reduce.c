/* reduce= through the C API (docs/reductions.md), where tessera-bench does
 * not go: double memory put into a float variable with tsr_put_typed is
 * folded as the values the file gets, (float)x, and a period of 4 frames
 * spans two files of 2 frames. The derived file, read back with NetCDF on
 * rank 0, holds max, mean (double sum in frame order, cast once) and std of
 * those floats; tsr_get_stats counts the accumulators' bytes.
 *
 * Scenarios: one per strategy (serial, direct, aggregate, servers with one
 * server rank). */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NY = 9, NX = 7, FRAMES = 4, PER_FILE = 2 };

/* A value that a float cannot hold exactly, the same whatever the ranks. */
static double value(int t, int64_t j, int64_t i) {
  return 280.0 + 0.37 * t + 0.011 * (double)j + 1e-4 * (double)i + 1e-9 * (double)(j * NX + i);
}

static void write_stream(tsr_ctx *ctx, MPI_Comm model, const char *strategy, const char *stem) {
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
  tsr_stats s;
  TSR_CHECK_OK(tsr_get_stats(ctx, &s));
  TSR_CHECK_EQ_INT(s.reduce_bytes, (4 + 8 + 16) * ct[0] * ct[1]);
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

static void one_strategy(const char *strategy, const char *init_hints) {
  MPI_Comm model;
  tsr_ctx *ctx = NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, init_hints, &ctx, &model));
  if (!ctx) return; /* an I/O server: it served until the model finalized */
  char stem[400], derived[420];
  snprintf(stem, sizeof stem, "%s/hist_reduce_%s_np%d", tsr_test_arg(0, "."), strategy,
           tsr_test_nranks());
  snprintf(derived, sizeof derived, "%s/xtrm_reduce_%s_np%d_f0", tsr_test_arg(0, "."), strategy,
           tsr_test_nranks());
  write_stream(ctx, model, strategy, stem);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0) check_derived(derived);
}

static void serial(void) { one_strategy("serial", NULL); }
static void direct(void) { one_strategy("direct", NULL); }
static void aggregate(void) { one_strategy("aggregate", NULL); }
/* The servers take the doubles (put_f64) and convert where they choose;
 * the fold still sees (float)x. */
static void servers(void) { one_strategy("servers", "strategy=servers,io_tasks=1"); }

static const tsr_test_scenario SCENARIOS[] = {{"serial", serial, 0},
                                              {"direct", direct, 0},
                                              {"aggregate", aggregate, 0},
                                              {"servers", servers, 2}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "reduce", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
