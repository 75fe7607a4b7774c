/* Bad input gets the documented code on every rank, never a hang: each case
 * is checked on all ranks, including cases where only one rank is wrong.
 * Output handles must be NULL after a failed constructor.
 *
 * Scenarios: args (tsr_init, decompositions, tsr_create), then one per
 * strategy (definitions and puts; serial also a full disk), skipped when the
 * strategy is not built. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

static int nranks;
static const char *dir;

/* tsr_init for a scenario; nranks and dir for the helpers. */
static tsr_ctx *start(MPI_Comm *model) {
  nranks = tsr_test_nranks();
  dir = tsr_test_arg(0, ".");
  tsr_ctx *ctx = NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, model));
  return ctx;
}

static void stop(tsr_ctx *ctx, MPI_Comm *model) {
  TSR_CHECK_OK(tsr_finalize(&ctx));
  TSR_CHECK_NULL(ctx);
  if (*model != MPI_COMM_NULL) MPI_Comm_free(model);
}

static void decomposition_errors(tsr_ctx *ctx) {
  int64_t g[2] = {8, 6}, st[2], ct[2];
  tsr_decomp *d = (tsr_decomp *)&d; /* must come back NULL */
  tsr_test_rows(8, 6, st, ct);

  /* Overlap: every rank claims one row more (the last rank's extra row is
   * also out of bounds, so give it a shifted start instead). */
  int64_t ost[2] = {st[0], 0}, oct[2] = {ct[0] + 1, 6};
  if (tsr_test_rank() == nranks - 1) ost[0] = st[0] - 1, oct[0] = ct[0] + 1;
  if (nranks > 1) {
    TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g, ost, oct, NULL, NULL, &d), TSR_EDECOMP);
    TSR_CHECK_NULL(d);
  }
  /* Out of bounds on the last rank only: all ranks get TSR_EDECOMP. */
  int64_t bct[2] = {ct[0], tsr_test_rank() == nranks - 1 ? 7 : 6};
  d = (tsr_decomp *)&d;
  TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g, st, bct, NULL, NULL, &d), TSR_EDECOMP);
  TSR_CHECK_NULL(d);
  /* A memory box that does not contain the tile. */
  int64_t mst[2] = {st[0] + 1, 0}, mct[2] = {ct[0], 6};
  TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g, st, ct, mst, mct, &d), ct[0] > 0 || nranks > 1 ? TSR_EDECOMP : 0);
  tsr_decomp_free(&d);
  /* Ranks disagree on the global shape. */
  int64_t g2[2] = {8, tsr_test_rank() == 0 ? 6 : 7};
  if (nranks > 1) TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g2, st, ct, NULL, NULL, &d), TSR_EINVAL);
  /* Negative start, bad ndims. */
  int64_t nst[2] = {-1, 0};
  TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g, nst, ct, NULL, NULL, &d), TSR_EDECOMP);
  TSR_CHECK_RC(tsr_decomp_box(ctx, 0, g, st, ct, NULL, NULL, &d), TSR_EINVAL);
  TSR_CHECK_RC(tsr_decomp_box(NULL, 2, g, st, ct, NULL, NULL, &d), TSR_ESTATE);
  tsr_decomp_free(&d);
  tsr_decomp_free(NULL);
}

static void create_errors(tsr_ctx *ctx) {
  tsr_file *f = (tsr_file *)&f;
  char path[512];
  snprintf(path, sizeof path, "%s/errors_np%d.nc", dir, nranks);
  TSR_CHECK_RC(tsr_create(ctx, path, "strategy=bogus", &f), TSR_EHINT);
  TSR_CHECK_NULL(f);
  TSR_CHECK_RC(tsr_create(ctx, path, "strategy=serial:no_such_key=1", &f), TSR_EHINT);
  TSR_CHECK_RC(tsr_create(ctx, path, "hints_strict=0:no_such_key=1", &f), 0);
  TSR_CHECK_OK(tsr_close(&f));
  TSR_CHECK_RC(tsr_create(ctx, path, "slab_bytes=-4k", &f), TSR_EHINT);
  TSR_CHECK_RC(tsr_create(ctx, path, "backend=hdf9", &f), TSR_EHINT);
  TSR_CHECK_RC(tsr_create(ctx, "/nonexistent-dir/x/out.nc", "strategy=serial", &f), TSR_EACCES);
  TSR_CHECK_NULL(f);
  TSR_CHECK_RC(tsr_create(ctx, "/nonexistent-dir/x/out.nc", "strategy=split", &f), TSR_EACCES);
  TSR_CHECK_RC(tsr_create(ctx, path, "strategy=servers", &f), TSR_ESERVERS);
  TSR_CHECK_RC(tsr_create(ctx, "", NULL, &f), TSR_EINVAL);
  char big[32];
  snprintf(big, sizeof big, "aggregators=%d", nranks + 1);
  TSR_CHECK_RC(tsr_create(ctx, path, big, &f), TSR_EHINT);
  /* A hint that is bad on one rank only still fails everywhere. */
  TSR_CHECK_RC(tsr_create(ctx, path, tsr_test_rank() == nranks - 1 ? "strategy=nope" : "strategy=serial", &f),
        TSR_EHINT);
  TSR_CHECK_NULL(f);
}

static void define_and_put_errors(tsr_ctx *ctx, const char *strategy) {
  char path[512], hints[64];
  snprintf(path, sizeof path, "%s/errors_%s_np%d.nc", dir, strategy, nranks);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  int64_t g[2] = {8, 6}, st[2], ct[2], g3[2] = {8, 7};
  tsr_test_rows(8, 6, st, ct);
  tsr_decomp *d = NULL, *d3 = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g3, st, (int64_t[]){ct[0], 7}, NULL, NULL, &d3));
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("strategy %s is not built into this library", strategy);
    goto out;
  }
  TSR_CHECK_OK(rc);
  int dt, dy, dx, v, w, bad;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TSR_CHECK_OK(tsr_def_dim(f, "y", 8, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", 6, &dx));
  TSR_CHECK_RC(tsr_def_dim(f, "x", 6, &bad), TSR_ENAME);
  TSR_CHECK_RC(tsr_def_dim(f, "T2", TSR_UNLIMITED, &bad), TSR_EINVAL); /* one record dim only */
  TSR_CHECK_OK(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v));
  TSR_CHECK_OK(tsr_def_var(f, "w", TSR_INT, 2, (int[]){dy, dx}, &w));
  TSR_CHECK_RC(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &bad), TSR_ENAME);
  TSR_CHECK_RC(tsr_def_var(f, "q", (tsr_type)12, 2, (int[]){dy, dx}, &bad), TSR_ETYPE);
  TSR_CHECK_RC(tsr_def_var(f, "q", TSR_FLOAT, 2, (int[]){dy, 42}, &bad), TSR_EBADID);
  TSR_CHECK_RC(tsr_def_var(f, "q", TSR_FLOAT, 3, (int[]){dy, dt, dx}, &bad), TSR_EINVAL);
  TSR_CHECK_RC(tsr_put_att(f, v, "_FillValue", TSR_INT, 1, (int[]){0}), TSR_ETYPE);
  TSR_CHECK_RC(tsr_put_att(f, 99, "units", TSR_CHAR, 1, "K"), TSR_EBADID);
  TSR_CHECK_RC(tsr_def_var_decomp(f, v, d3), TSR_ESHAPE);
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  TSR_CHECK_OK(tsr_def_var_decomp(f, w, d));
  float buf[8 * 6];
  for (int i = 0; i < 48; i++) buf[i] = (float)i;
  TSR_CHECK_RC(tsr_put(f, v, 0, d, buf), TSR_EMODE); /* put before enddef */
  TSR_CHECK_OK(tsr_enddef(f));
  TSR_CHECK_RC(tsr_enddef(f), TSR_EMODE);
  TSR_CHECK_RC(tsr_def_dim(f, "z", 3, &bad), TSR_EMODE);
  TSR_CHECK_RC(tsr_put(f, 99, 0, d, buf), TSR_EBADID);
  /* Unknown variable on one rank only: every rank sees TSR_EBADID. */
  TSR_CHECK_RC(tsr_put(f, tsr_test_rank() == nranks - 1 ? 7 : v, 0, d, buf), TSR_EBADID);
  TSR_CHECK_RC(tsr_put(f, v, -1, d, buf), TSR_ERANGE);
  TSR_CHECK_RC(tsr_put(f, v, 0, d3, buf), TSR_ESHAPE);
  TSR_CHECK_RC(tsr_put(f, v, 0, d, ct[0] > 0 ? NULL : buf), ct[0] > 0 || nranks > 1 ? TSR_EINVAL : 0);
  TSR_CHECK_OK(tsr_put(f, v, 0, d, buf));
  TSR_CHECK_OK(tsr_put(f, v, 1, NULL, buf)); /* NULL: the variable's default decomposition */
  int wi[48] = {0};
  TSR_CHECK_OK(tsr_put(f, w, 0, d, wi));
  TSR_CHECK_OK(tsr_flush(f));
  int vid = -1;
  TSR_CHECK_OK(tsr_inq_varid(f, "w", &vid));
  TSR_CHECK_EQ_INT(vid, w);
  TSR_CHECK_RC(tsr_inq_varid(f, "nope", &vid), TSR_ENAME);
  TSR_CHECK_EQ_STR(tsr_file_strategy(f), strategy);
  TSR_CHECK_OK(tsr_close(&f));
  TSR_CHECK_NULL(f);
  TSR_CHECK_RC(tsr_close(&f), TSR_EINVAL);
out:
  tsr_decomp_free(&d);
  tsr_decomp_free(&d3);
}

/* A file size limit on the writer: the write fails with TSR_ENOSPC, on every
 * rank, and nothing hangs. */
static void full_disk(tsr_ctx *ctx, const char *strategy) {
  char path[512], hints[96];
  snprintf(path, sizeof path, "%s/full_%s_np%d.nc", dir, strategy, nranks);
  snprintf(hints, sizeof hints, "strategy=%s:slab_bytes=64k", strategy);
  struct rlimit old, lim = {64 * 1024, 64 * 1024};
  signal(SIGXFSZ, SIG_IGN);
  getrlimit(RLIMIT_FSIZE, &old);
  lim.rlim_max = old.rlim_max;
  int64_t g[2] = {512, 256}, st[2], ct[2];
  tsr_test_rows(512, 256, st, ct);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, hints, &f));
  int dt, dy, dx, v;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "y", 512, &dy);
  tsr_def_dim(f, "x", 256, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  TSR_CHECK_OK(tsr_enddef(f));
  if (tsr_test_rank() == 0) setrlimit(RLIMIT_FSIZE, &lim); /* the serial writer */
  static float buf[512 * 256];
  int rc = 0;
  for (int t = 0; t < 3 && !rc; t++) rc = tsr_put(f, v, t, d, buf);
  int rc2 = tsr_close(&f);
  int got = rc ? rc : rc2;
  TSR_CHECK_RC(got, TSR_ENOSPC);
  TSR_CHECK_NULL(f);
  if (tsr_test_rank() == 0) setrlimit(RLIMIT_FSIZE, &old);
  tsr_decomp_free(&d);
}

/* tsr_init's own errors, the error table, decompositions and tsr_create. */
static void args(void) {
  nranks = tsr_test_nranks();
  dir = tsr_test_arg(0, ".");
  tsr_ctx *ctx = (tsr_ctx *)&ctx;
  MPI_Comm model;
  TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, "strategy=wrong", &ctx, &model), TSR_EHINT);
  TSR_CHECK_NULL(ctx);
  TSR_CHECK(model == MPI_COMM_NULL);
  TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=1:io_tasks=1:bogus=3", &ctx, &model),
               TSR_EHINT);
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  TSR_CHECK_EQ_STR(tsr_strerror(TSR_EDECOMP),
                   "invalid decomposition: tiles overlap or fall outside the shape");
  TSR_CHECK_EQ_STR(tsr_errname(TSR_ENOSPC), "TSR_ENOSPC");
  TSR_CHECK_EQ_INT(tsr_type_size(TSR_DOUBLE), 8);
  TSR_CHECK_EQ_INT(tsr_type_size((tsr_type)12), 0);
  tsr_test_case("decomposition");
  decomposition_errors(ctx);
  tsr_test_case("create");
  create_errors(ctx);
  tsr_test_case("%s", "");
  TSR_CHECK_OK(tsr_finalize(&ctx));
  TSR_CHECK_NULL(ctx);
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* NULL is accepted */
  MPI_Comm_free(&model);
}

static void serial(void) {
  MPI_Comm model;
  tsr_ctx *ctx = start(&model);
  define_and_put_errors(ctx, "serial");
  tsr_test_case("full-disk");
  full_disk(ctx, "serial");
  stop(ctx, &model);
}

static void one_strategy(const char *strategy) {
  MPI_Comm model;
  tsr_ctx *ctx = start(&model);
  define_and_put_errors(ctx, strategy);
  stop(ctx, &model);
}

static void direct(void) { one_strategy("direct"); }
static void aggregate(void) { one_strategy("aggregate"); }
static void split(void) { one_strategy("split"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"args", args, 0},           {"serial", serial, 0}, {"direct", direct, 0},
    {"aggregate", aggregate, 0}, {"split", split, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "errors", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
