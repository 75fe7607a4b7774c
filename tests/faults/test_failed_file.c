/* A failed file never becomes final (issue 25): whatever went wrong with a
 * file's data, even a failure whose cause went away before the close, the
 * close returns it and nothing of the file is left; tsr_abort leaves
 * nothing either; and afterwards the same path is written as usual.
 *
 *   cleared_<strategy>  a write fails on one rank only (a file size limit
 *                       on the rank that writes, set after the first frame
 *                       and lifted before the close, as a disk that had room
 *                       again): the put or flush returns TSR_ENOSPC on every
 *                       rank, later puts succeed, tsr_close returns
 *                       TSR_ENOSPC on every rank with its message in
 *                       tsr_last_error, and neither the final name nor a
 *                       temporary (nor a split piece, nor anything staged)
 *                       is left. Then the same path is written again: final
 *                       name present, temporary and lock gone.
 *   abort_<strategy>    tsr_abort after some frames (one flushed, one still
 *                       buffered): nothing left; the same path again as
 *                       above. abort_define: tsr_abort before enddef.
 * <strategy> is serial, direct, aggregate, split or split_staged (split with
 * stage_dir and the drain thread: the pieces' temporaries are in the
 * stage). Checks from tsr_test.h; a strategy not built: skipped (77). */
#define _DEFAULT_SOURCE /* lstat */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsr_fixtures.h"

enum { NY = 64, NX = 32, NF = 4 };

static int exists(const char *p) {
  struct stat sb;
  return lstat(p, &sb) == 0;
}

/* What a scenario writes: the strategy's hints, the file's path, and for
 * split_staged the stage directory. */
typedef struct {
  const char *strategy;
  int staged;
  char hints[700], path[512], stage[512];
} target;

static void make_target(target *t, const char *strategy) {
  t->staged = strcmp(strategy, "split_staged") == 0;
  t->strategy = t->staged ? "split" : strategy;
  tsr_test_path(t->path, sizeof t->path, "failed");
  t->stage[0] = '\0';
  if (t->staged) {
    snprintf(t->stage, sizeof t->stage, "%s/stage_%s_np%d", tsr_test_arg(0, "."),
             tsr_test_.scenario, tsr_test_nranks());
    if (tsr_test_rank() == 0) mkdir(t->stage, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(t->hints, sizeof t->hints, "strategy=split:stage_dir=%s:stage_min_bytes=0",
             t->stage);
  } else {
    /* buffer_bytes=0: direct and aggregate write at every put, so the
     * failure belongs to the put (or flush) it is injected into. */
    snprintf(t->hints, sizeof t->hints, "strategy=%s:buffer_bytes=0", strategy);
  }
}

/* The rank whose write is made to fail: the last rank for split (its own
 * piece); rank 0 otherwise, the one writer of serial and of aggregate (one
 * aggregator by default at these rank counts) and, for direct, the rank
 * that MPI-IO's collective buffering makes write every rank's tile on one
 * node (a limit on another rank would fail nothing). */
static int failing_rank(const target *t) {
  return !strcmp(t->strategy, "split") ? tsr_test_nranks() - 1 : 0;
}

typedef struct {
  tsr_decomp *d;
  tsr_file *f;
  int v;
  float buf[NY * NX];
} field;

/* Create and define; returns tsr_create's code (TSR_ENOTBUILT: skip). */
static int open_field(tsr_ctx *ctx, const target *t, field *x, int enddef) {
  int64_t g[2] = {NY, NX}, st[2], ct[2];
  tsr_test_rows(NY, NX, st, ct);
  for (int i = 0; i < NY * NX; i++) x->buf[i] = (float)i;
  if (!x->d) TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &x->d));
  int rc = tsr_create(ctx, t->path, t->hints, &x->f);
  if (rc) return rc;
  int dt, dy, dx;
  TSR_CHECK_OK(tsr_def_dim(x->f, "Time", TSR_UNLIMITED, &dt));
  TSR_CHECK_OK(tsr_def_dim(x->f, "y", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(x->f, "x", NX, &dx));
  TSR_CHECK_OK(tsr_def_var(x->f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &x->v));
  TSR_CHECK_OK(tsr_def_var_decomp(x->f, x->v, x->d));
  if (enddef) TSR_CHECK_OK(tsr_enddef(x->f));
  return 0;
}

/* This rank's final name (split: its piece) and its temporary. */
static void names(const target *t, char *fin, size_t n, char *tmp, size_t m) {
  if (!strcmp(t->strategy, "split"))
    snprintf(fin, n, "%s.%04d", t->path, tsr_test_rank());
  else
    snprintf(fin, n, "%s", t->path);
  snprintf(tmp, m, "%s.tessera-tmp", fin);
}

/* Entries of the stage that belong to this file (staged names start with
 * the final name's base name). */
static int staged_entries(const target *t) {
  if (!t->staged) return 0;
  const char *base = strrchr(t->path, '/');
  base = base ? base + 1 : t->path;
  DIR *dir = opendir(t->stage);
  int n = 0;
  struct dirent *e;
  while (dir && (e = readdir(dir)))
    if (!strncmp(e->d_name, base, strlen(base))) n++;
  if (dir) closedir(dir);
  return n;
}

/* Nothing of the file is left, on any rank (each checks its own piece). */
static void nothing_left(const target *t, const char *when) {
  char fin[600], tmp[640], lock[600];
  names(t, fin, sizeof fin, tmp, sizeof tmp);
  snprintf(lock, sizeof lock, "%s.tessera-lock", t->path);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECKF(!exists(fin), "%s: %s exists", when, fin);
  TSR_CHECKF(!exists(tmp), "%s: %s exists", when, tmp);
  TSR_CHECKF(!exists(lock), "%s: %s exists", when, lock);
  TSR_CHECKF(staged_entries(t) == 0, "%s: %d entries of the file in the stage %s", when,
             staged_entries(t), t->stage);
  MPI_Barrier(MPI_COMM_WORLD); /* before rank 0 takes the path's lock again */
}

/* The same path written again, cleanly: the final name appears (after the
 * drain, for a staged file), the temporary and the lock do not stay. The
 * context is finalized here, so the drains are done. */
static void written_again(tsr_ctx **ctx, MPI_Comm *model, const target *t, field *x) {
  TSR_CHECK_OK(open_field(*ctx, t, x, 1));
  for (int f = 0; f < 2; f++) TSR_CHECK_OK(tsr_put(x->f, x->v, f, NULL, x->buf));
  TSR_CHECK_OK(tsr_close(&x->f));
  tsr_decomp_free(&x->d);
  TSR_CHECK_OK(tsr_finalize(ctx));
  MPI_Comm_free(model);
  char fin[600], tmp[640];
  names(t, fin, sizeof fin, tmp, sizeof tmp);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECKF(exists(fin), "written again: %s is missing", fin);
  TSR_CHECKF(!exists(tmp), "written again: %s exists", tmp);
  TSR_CHECK_EQ_INT(staged_entries(t), 0);
}

/* What an earlier run of the scenario left would stand until the rename:
 * each rank removes its final name, rank 0 the file's entries in the stage. */
static void remove_earlier(const target *t) {
  char fin[600], tmp[640];
  names(t, fin, sizeof fin, tmp, sizeof tmp);
  unlink(fin);
  if (t->staged && tsr_test_rank() == 0) {
    const char *base = strrchr(t->path, '/') + 1;
    DIR *dir = opendir(t->stage);
    struct dirent *e;
    char p[1200];
    while (dir && (e = readdir(dir)))
      if (!strncmp(e->d_name, base, strlen(base))) {
        snprintf(p, sizeof p, "%s/%s", t->stage, e->d_name);
        unlink(p);
      }
    if (dir) closedir(dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* tsr_init, once the target is clean. */
static void start(const target *t, tsr_ctx **ctx, MPI_Comm *model) {
  remove_earlier(t);
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, ctx, model));
}

/* Lift (0) or set (1) a file size limit of one byte on this rank: every
 * write past the first byte fails with EFBIG, at once (SIGXFSZ ignored). */
static void size_limit(int on) {
  static struct rlimit old;
  if (on) {
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit lim = {1, old.rlim_max};
    setrlimit(RLIMIT_FSIZE, &lim);
  } else {
    setrlimit(RLIMIT_FSIZE, &old);
  }
}

/* The start of every scenario: the strategy's target, a context and the
 * field's file open. 0 (after a skip, with everything freed) when the
 * strategy is not built. */
static int begin(const char *strategy, target *t, tsr_ctx **ctx, MPI_Comm *model, field *x) {
  make_target(t, strategy);
  start(t, ctx, model);
  int rc = open_field(*ctx, t, x, 1);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("strategy %s is not built", t->strategy);
    tsr_decomp_free(&x->d);
    tsr_finalize(ctx);
    MPI_Comm_free(model);
    return 0;
  }
  TSR_CHECK_OK(rc);
  return 1;
}

static void cleared(const char *strategy) {
  target t;
  tsr_ctx *ctx;
  MPI_Comm model;
  field x = {0};
  if (!begin(strategy, &t, &ctx, &model, &x)) return;
  TSR_CHECK_OK(tsr_put(x.f, x.v, 0, NULL, x.buf));
  TSR_CHECK_OK(tsr_flush(x.f));
  int me = tsr_test_rank() == failing_rank(&t);
  if (me) size_limit(1);
  int first = tsr_put(x.f, x.v, 1, NULL, x.buf);
  int rf = tsr_flush(x.f);
  if (me) size_limit(0); /* the cause is gone before the close */
  if (!first) first = rf;
  TSR_CHECK_RC(first, TSR_ENOSPC);
  /* Calls after the failure work; the file is lost all the same. */
  for (int f = 2; f < NF; f++) TSR_CHECK_OK(tsr_put(x.f, x.v, f, NULL, x.buf));
  TSR_CHECK_OK(tsr_flush(x.f));
  TSR_CHECK_RC(tsr_close(&x.f), first);
  TSR_CHECK_NULL(x.f);
  TSR_CHECKF(tsr_last_error()[0] != '\0', "tsr_close failed without a message%s", "");
  nothing_left(&t, "after the failed close");
  written_again(&ctx, &model, &t, &x);
}

static void aborted(const char *strategy) {
  target t;
  tsr_ctx *ctx;
  MPI_Comm model;
  field x = {0};
  if (!begin(strategy, &t, &ctx, &model, &x)) return;
  TSR_CHECK_OK(tsr_put(x.f, x.v, 0, NULL, x.buf));
  TSR_CHECK_OK(tsr_flush(x.f));
  TSR_CHECK_OK(tsr_put(x.f, x.v, 1, NULL, x.buf)); /* may still be buffered */
  TSR_CHECK_OK(tsr_abort(&x.f));
  TSR_CHECK_NULL(x.f);
  TSR_CHECK_RC(tsr_abort(&x.f), TSR_EINVAL);
  nothing_left(&t, "after tsr_abort");
  written_again(&ctx, &model, &t, &x);
}

/* Given up in define mode: nothing was created, the lock is released. */
static void abort_define(void) {
  target t;
  make_target(&t, "serial");
  tsr_ctx *ctx;
  MPI_Comm model;
  start(&t, &ctx, &model);
  field x = {0};
  TSR_CHECK_OK(open_field(ctx, &t, &x, 0));
  TSR_CHECK_OK(tsr_abort(&x.f));
  TSR_CHECK_NULL(x.f);
  nothing_left(&t, "after tsr_abort in define mode");
  written_again(&ctx, &model, &t, &x);
}

static void cleared_serial(void) { cleared("serial"); }
static void cleared_direct(void) { cleared("direct"); }
static void cleared_aggregate(void) { cleared("aggregate"); }
static void cleared_split(void) { cleared("split"); }
static void cleared_split_staged(void) { cleared("split_staged"); }
static void abort_serial(void) { aborted("serial"); }
static void abort_direct(void) { aborted("direct"); }
static void abort_aggregate(void) { aborted("aggregate"); }
static void abort_split(void) { aborted("split"); }
static void abort_split_staged(void) { aborted("split_staged"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"cleared_serial", cleared_serial, 0},
    {"cleared_direct", cleared_direct, 0},
    {"cleared_aggregate", cleared_aggregate, 0},
    {"cleared_split", cleared_split, 0},
    {"cleared_split_staged", cleared_split_staged, 0},
    {"abort_serial", abort_serial, 0},
    {"abort_direct", abort_direct, 0},
    {"abort_aggregate", abort_aggregate, 0},
    {"abort_split", abort_split, 0},
    {"abort_split_staged", abort_split_staged, 0},
    {"abort_define", abort_define, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "failed_file", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
