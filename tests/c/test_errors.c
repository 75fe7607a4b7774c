/* Bad input gets the documented code on every rank, never a hang: each case
 * is checked on all ranks, including cases where only one rank is wrong.
 * Output handles must be NULL after a failed constructor. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "test_util.h"

static int nranks;
static const char *dir;

/* A row decomposition of (ny, nx): rank r owns rows [r*ny/n, (r+1)*ny/n). */
static void rows(int64_t ny, int64_t st[2], int64_t ct[2], int64_t nx) {
  st[0] = ny * tu_rank / nranks;
  ct[0] = ny * (tu_rank + 1) / nranks - st[0];
  st[1] = 0;
  ct[1] = nx;
}

static void decomposition_errors(tsr_ctx *ctx) {
  int64_t g[2] = {8, 6}, st[2], ct[2];
  tsr_decomp *d = (tsr_decomp *)&d; /* must come back NULL */
  rows(8, st, ct, 6);

  /* Overlap: every rank claims one row more (the last rank's extra row is
   * also out of bounds, so give it a shifted start instead). */
  int64_t ost[2] = {st[0], 0}, oct[2] = {ct[0] + 1, 6};
  if (tu_rank == nranks - 1) ost[0] = st[0] - 1, oct[0] = ct[0] + 1;
  if (nranks > 1) {
    TU_RC(tsr_decomp_box(ctx, 2, g, ost, oct, NULL, NULL, &d), TSR_EDECOMP);
    TU_EQ(d == NULL, 1);
  }
  /* Out of bounds on the last rank only: all ranks get TSR_EDECOMP. */
  int64_t bct[2] = {ct[0], tu_rank == nranks - 1 ? 7 : 6};
  d = (tsr_decomp *)&d;
  TU_RC(tsr_decomp_box(ctx, 2, g, st, bct, NULL, NULL, &d), TSR_EDECOMP);
  TU_EQ(d == NULL, 1);
  /* A memory box that does not contain the tile. */
  int64_t mst[2] = {st[0] + 1, 0}, mct[2] = {ct[0], 6};
  TU_RC(tsr_decomp_box(ctx, 2, g, st, ct, mst, mct, &d), ct[0] > 0 || nranks > 1 ? TSR_EDECOMP : 0);
  tsr_decomp_free(&d);
  /* Ranks disagree on the global shape. */
  int64_t g2[2] = {8, tu_rank == 0 ? 6 : 7};
  if (nranks > 1) TU_RC(tsr_decomp_box(ctx, 2, g2, st, ct, NULL, NULL, &d), TSR_EINVAL);
  /* Negative start, bad ndims. */
  int64_t nst[2] = {-1, 0};
  TU_RC(tsr_decomp_box(ctx, 2, g, nst, ct, NULL, NULL, &d), TSR_EDECOMP);
  TU_RC(tsr_decomp_box(ctx, 0, g, st, ct, NULL, NULL, &d), TSR_EINVAL);
  TU_RC(tsr_decomp_box(NULL, 2, g, st, ct, NULL, NULL, &d), TSR_ESTATE);
  tsr_decomp_free(&d);
  tsr_decomp_free(NULL);
}

static void create_errors(tsr_ctx *ctx) {
  tsr_file *f = (tsr_file *)&f;
  char path[512];
  snprintf(path, sizeof path, "%s/errors_np%d.nc", dir, nranks);
  TU_RC(tsr_create(ctx, path, "strategy=bogus", &f), TSR_EHINT);
  TU_EQ(f == NULL, 1);
  TU_RC(tsr_create(ctx, path, "strategy=serial:no_such_key=1", &f), TSR_EHINT);
  TU_RC(tsr_create(ctx, path, "hints_strict=0:no_such_key=1", &f), 0);
  TU_OK(tsr_close(&f));
  TU_RC(tsr_create(ctx, path, "slab_bytes=-4k", &f), TSR_EHINT);
  TU_RC(tsr_create(ctx, path, "backend=hdf9", &f), TSR_EHINT);
  TU_RC(tsr_create(ctx, "/nonexistent-dir/x/out.nc", "strategy=serial", &f), TSR_EACCES);
  TU_EQ(f == NULL, 1);
  TU_RC(tsr_create(ctx, "/nonexistent-dir/x/out.nc", "strategy=split", &f), TSR_EACCES);
  TU_RC(tsr_create(ctx, path, "strategy=servers", &f), TSR_ESERVERS);
  TU_RC(tsr_create(ctx, "", NULL, &f), TSR_EINVAL);
  char big[32];
  snprintf(big, sizeof big, "aggregators=%d", nranks + 1);
  TU_RC(tsr_create(ctx, path, big, &f), TSR_EHINT);
  /* A hint that is bad on one rank only still fails everywhere. */
  TU_RC(tsr_create(ctx, path, tu_rank == nranks - 1 ? "strategy=nope" : "strategy=serial", &f),
        TSR_EHINT);
  TU_EQ(f == NULL, 1);
}

static void define_and_put_errors(tsr_ctx *ctx, const char *strategy) {
  char path[512], hints[64];
  snprintf(path, sizeof path, "%s/errors_%s_np%d.nc", dir, strategy, nranks);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  int64_t g[2] = {8, 6}, st[2], ct[2], g3[2] = {8, 7};
  rows(8, st, ct, 6);
  tsr_decomp *d = NULL, *d3 = NULL;
  TU_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  TU_OK(tsr_decomp_box(ctx, 2, g3, st, (int64_t[]){ct[0], 7}, NULL, NULL, &d3));
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc == TSR_ENOTBUILT) goto out;
  TU_OK(rc);
  int dt, dy, dx, v, w, bad;
  TU_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TU_OK(tsr_def_dim(f, "y", 8, &dy));
  TU_OK(tsr_def_dim(f, "x", 6, &dx));
  TU_RC(tsr_def_dim(f, "x", 6, &bad), TSR_ENAME);
  TU_RC(tsr_def_dim(f, "T2", TSR_UNLIMITED, &bad), TSR_EINVAL); /* one record dim only */
  TU_OK(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v));
  TU_OK(tsr_def_var(f, "w", TSR_INT, 2, (int[]){dy, dx}, &w));
  TU_RC(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &bad), TSR_ENAME);
  TU_RC(tsr_def_var(f, "q", (tsr_type)12, 2, (int[]){dy, dx}, &bad), TSR_ETYPE);
  TU_RC(tsr_def_var(f, "q", TSR_FLOAT, 2, (int[]){dy, 42}, &bad), TSR_EBADID);
  TU_RC(tsr_def_var(f, "q", TSR_FLOAT, 3, (int[]){dy, dt, dx}, &bad), TSR_EINVAL);
  TU_RC(tsr_put_att(f, v, "_FillValue", TSR_INT, 1, (int[]){0}), TSR_ETYPE);
  TU_RC(tsr_put_att(f, 99, "units", TSR_CHAR, 1, "K"), TSR_EBADID);
  TU_RC(tsr_def_var_decomp(f, v, d3), TSR_ESHAPE);
  TU_OK(tsr_def_var_decomp(f, v, d));
  TU_OK(tsr_def_var_decomp(f, w, d));
  float buf[8 * 6];
  for (int i = 0; i < 48; i++) buf[i] = (float)i;
  TU_RC(tsr_put(f, v, 0, d, buf), TSR_EMODE); /* put before enddef */
  TU_OK(tsr_enddef(f));
  TU_RC(tsr_enddef(f), TSR_EMODE);
  TU_RC(tsr_def_dim(f, "z", 3, &bad), TSR_EMODE);
  TU_RC(tsr_put(f, 99, 0, d, buf), TSR_EBADID);
  /* Unknown variable on one rank only: every rank sees TSR_EBADID. */
  TU_RC(tsr_put(f, tu_rank == nranks - 1 ? 7 : v, 0, d, buf), TSR_EBADID);
  TU_RC(tsr_put(f, v, -1, d, buf), TSR_ERANGE);
  TU_RC(tsr_put(f, v, 0, d3, buf), TSR_ESHAPE);
  TU_RC(tsr_put(f, v, 0, d, ct[0] > 0 ? NULL : buf), ct[0] > 0 || nranks > 1 ? TSR_EINVAL : 0);
  TU_OK(tsr_put(f, v, 0, d, buf));
  TU_OK(tsr_put(f, v, 1, NULL, buf)); /* NULL: the variable's default decomposition */
  int wi[48] = {0};
  TU_OK(tsr_put(f, w, 0, d, wi));
  TU_OK(tsr_flush(f));
  int vid = -1;
  TU_OK(tsr_inq_varid(f, "w", &vid));
  TU_EQ(vid, w);
  TU_RC(tsr_inq_varid(f, "nope", &vid), TSR_ENAME);
  TU_EQ(strcmp(tsr_file_strategy(f), strategy), 0);
  TU_OK(tsr_close(&f));
  TU_EQ(f == NULL, 1);
  TU_RC(tsr_close(&f), TSR_EINVAL);
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
  rows(512, st, ct, 256);
  tsr_decomp *d = NULL;
  TU_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  tsr_file *f = NULL;
  TU_OK(tsr_create(ctx, path, hints, &f));
  int dt, dy, dx, v;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "y", 512, &dy);
  tsr_def_dim(f, "x", 256, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  TU_OK(tsr_enddef(f));
  if (tu_rank == 0) setrlimit(RLIMIT_FSIZE, &lim); /* the serial writer */
  static float buf[512 * 256];
  int rc = 0;
  for (int t = 0; t < 3 && !rc; t++) rc = tsr_put(f, v, t, d, buf);
  int rc2 = tsr_close(&f);
  int got = rc ? rc : rc2;
  TU_RC(got, TSR_ENOSPC);
  TU_EQ(f == NULL, 1);
  if (tu_rank == 0) setrlimit(RLIMIT_FSIZE, &old);
  tsr_decomp_free(&d);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  dir = argc > 1 ? argv[1] : ".";
  tsr_ctx *ctx = (tsr_ctx *)&ctx;
  MPI_Comm model;
  TU_RC(tsr_init(MPI_COMM_WORLD, "strategy=wrong", &ctx, &model), TSR_EHINT);
  TU_EQ(ctx == NULL, 1);
  TU_EQ(model == MPI_COMM_NULL, 1);
  TU_RC(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=1:io_tasks=1:bogus=3", &ctx, &model),
        TSR_EHINT);
  TU_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  TU_EQ(strcmp(tsr_strerror(TSR_EDECOMP), "invalid decomposition: tiles overlap or fall outside the shape"), 0);
  TU_EQ(strcmp(tsr_errname(TSR_ENOSPC), "TSR_ENOSPC"), 0);
  TU_EQ(tsr_type_size(TSR_DOUBLE), 8);
  TU_EQ(tsr_type_size((tsr_type)12), 0);
  decomposition_errors(ctx);
  create_errors(ctx);
  define_and_put_errors(ctx, "serial");
  define_and_put_errors(ctx, "direct");
  define_and_put_errors(ctx, "aggregate");
  define_and_put_errors(ctx, "split");
  full_disk(ctx, "serial");
  TU_OK(tsr_finalize(&ctx));
  TU_EQ(ctx == NULL, 1);
  TU_OK(tsr_finalize(&ctx)); /* NULL is accepted */
  MPI_Comm_free(&model);
  return tu_finish("errors");
}
