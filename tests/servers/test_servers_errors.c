/* strategy=servers, errors: layouts that do not fit give the same code on
 * every rank from tsr_init (never a hang or a silent fallback); an unwritable
 * path fails at tsr_create; a write failure only the servers see (a file size
 * limit set on the server ranks alone) reaches every model rank as
 * TSR_ENOSPC at the next tsr_flush or tsr_finalize, exactly once, and the
 * file is deleted; the server ranks return the job's failure from tsr_init.
 * CTest's timeout turns a hang into a failure. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srv_fields.h"

static int np;

/* tsr_init must fail with @p want on every rank and leave nothing behind. */
static void bad_layout(const char *hints, int want) {
  tsr_ctx *ctx = (tsr_ctx *)&np; /* poison: must come back NULL */
  MPI_Comm model = MPI_COMM_WORLD;
  int rc = tsr_init(MPI_COMM_WORLD, hints, &ctx, &model);
  if (rc != want) fprintf(stderr, "[rank %d] hints '%s'\n", tsr_test_rank(), hints);
  TSR_CHECK_RC(rc, want);
  TSR_CHECK_EQ_INT(ctx == NULL, 1);
  TSR_CHECK_EQ_INT(model == MPI_COMM_NULL, 1);
}

static void bad_layouts(void) {
  char h[128];
  bad_layout("strategy=servers:io_groups=0", TSR_EHINT); /* rejected by the hint parser */
  bad_layout("strategy=servers:io_tasks=-1", TSR_EHINT);
  snprintf(h, sizeof h, "strategy=servers:io_groups=%d:io_tasks=1", np); /* no model rank */
  bad_layout(h, TSR_ESERVERS);
  snprintf(h, sizeof h, "strategy=servers:io_groups=1:io_tasks=%d", np + 3);
  bad_layout(h, TSR_ESERVERS);
  if (np >= 3) { /* T servers per group, fewer than T model ranks left */
    snprintf(h, sizeof h, "strategy=servers:io_groups=1:io_tasks=%d", np - 1);
    bad_layout(h, TSR_ESERVERS);
  }
  if (np >= 4) {
    snprintf(h, sizeof h, "io_groups=%d:io_tasks=2", np / 2); /* S = np or np-1, M < 2 */
    bad_layout(h, TSR_ESERVERS);
  }
  /* Servers asked for per file without servers at tsr_init. */
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, "strategy=serial", &ctx, &model));
  tsr_file *f = (tsr_file *)&np;
  TSR_CHECK_RC(tsr_create(ctx, "x.nc", "strategy=servers", &f), TSR_ESERVERS);
  TSR_CHECK_EQ_INT(f == NULL, 1);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

/* Start a context with G x T servers; on server ranks, with @p fsize > 0, a
 * file size limit that only they have. Returns 0 on a server rank (which has
 * already served, and whose tsr_init returned the job's last failure: must
 * be @p job), 1 on a model rank. */
static int start(int G, int T, long fsize, int job, tsr_ctx **ctx, MPI_Comm *model) {
  char h[128];
  snprintf(h, sizeof h, "strategy=servers:io_groups=%d:io_tasks=%d", G, T);
  int server = tsr_test_rank() >= np - G * T;
  struct rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  if (server && fsize > 0) {
    /* A write past the limit fails with EFBIG instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {(rlim_t)fsize, old.rlim_max};
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  int rc = tsr_init(MPI_COMM_WORLD, h, ctx, model);
  if (server && fsize > 0) setrlimit(RLIMIT_FSIZE, &old);
  if (server && rc == TSR_ENOTBUILT) rc = job; /* the backend asked for is not built here */
  TSR_CHECK_RC(rc, server ? job : TSR_OK);
  if (*model == MPI_COMM_NULL) return 0;
  return 1;
}

/* The file or its temporary (files appear atomically: <path>.tessera-tmp
 * until renamed). */
static int exists_or_tmp(const char *path) {
  char tmp[600];
  struct stat sb;
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", path);
  return stat(path, &sb) == 0 || stat(tmp, &sb) == 0;
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* The file does not fit the servers' size limit: the error must surface
 * once, as TSR_ENOSPC, at tsr_flush of the file or at tsr_finalize (a
 * parallel backend may only see the loss when it closes the file); a flush
 * that reported it failed the file, so its tsr_close returns it again (the
 * file's first failure) and tsr_finalize does not. */
static void too_big(const char *dir, int G, int T, const char *backend) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(G, T, 2000, TSR_ENOSPC, &ctx, &model)) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  char path[512], hints[64];
  snprintf(path, sizeof path, "%s/err_big_G%dT%d_%s_%s_np%d.nc", dir, G, T, backend,
           kind_name[K_UNEVEN], np);
  snprintf(hints, sizeof hints, "backend=%s", backend);
  decomps D;
  TSR_CHECK_OK(make_decomps(ctx, model, K_UNEVEN, &D));
  wfile F;
  int rc = open_file(ctx, path, hints, &D, 0, &F);
  if (rc == TSR_ENOTBUILT) {
    free_decomps(&D);
    TSR_CHECK_OK(tsr_finalize(&ctx));
    MPI_Comm_free(&model);
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  TSR_CHECK_OK(rc);
  for (int t = 0; t < 3; t++) TSR_CHECK_OK(put_frame(&F, &D, t));
  int rf = tsr_flush(F.f);
  int rclose = tsr_close(&F.f);
  int rfin = tsr_finalize(&ctx);
  int nerr = (rf == TSR_ENOSPC) + (rclose == TSR_ENOSPC && !rf) + (rfin == TSR_ENOSPC);
  int nok = (rf == 0) + (rclose == 0) + (rfin == 0) + (rclose == TSR_ENOSPC && rf);
  if (nerr != 1 || nok != 2)
    fprintf(stderr, "[rank %d] %s G%dT%d: flush %s, close %s, finalize %s\n", tsr_test_rank(), backend, G,
            T, tsr_errname(rf), tsr_errname(rclose), tsr_errname(rfin));
  TSR_CHECK_EQ_INT(nerr, 1);
  TSR_CHECK_EQ_INT(nok, 2);
  if (!strcmp(backend, "netcdf")) TSR_CHECK_RC(rf, TSR_ENOSPC); /* nc_sync writes: seen at flush */
  TSR_CHECK_EQ_INT(exists(path), 0); /* never left looking complete */
  TSR_CHECK_EQ_INT(exists_or_tmp(path), 0); /* nor anything half written */
  free_decomps(&D);
  MPI_Comm_free(&model);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A failed file closed without a flush: the error of that earlier file comes
 * back at the flush of the next file, and only there; that flush failed the
 * next file too (the model cannot tell what it skipped), so its close
 * returns the same code and leaves nothing. */
static void error_at_next_flush(const char *dir, const char *backend) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(1, 1, 2000, TSR_ENOSPC, &ctx, &model)) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  char path[512], small[512], hints[64];
  snprintf(path, sizeof path, "%s/err_next_%s_np%d.nc", dir, backend, np);
  snprintf(small, sizeof small, "%s/err_next_small_%s_np%d.nc", dir, backend, np);
  if (tsr_test_rank() == 0) unlink(small); /* an earlier run's would stand */
  snprintf(hints, sizeof hints, "backend=%s", backend);
  decomps D;
  TSR_CHECK_OK(make_decomps(ctx, model, K_EVEN, &D));
  wfile F;
  int small_failed = 0;
  int rc = open_file(ctx, path, hints, &D, 0, &F);
  if (rc != TSR_ENOTBUILT) {
    TSR_CHECK_OK(rc);
    for (int t = 0; t < 3; t++) TSR_CHECK_OK(put_frame(&F, &D, t));
    int rclose = tsr_close(&F.f); /* may already report it, if the note was quick */
    TSR_CHECK_EQ_INT(rclose == 0 || rclose == TSR_ENOSPC, 1);
    tsr_file *g = NULL;
    TSR_CHECK_OK(tsr_create(ctx, small, hints, &g)); /* header only: fits the limit */
    int dim;
    TSR_CHECK_OK(tsr_def_dim(g, "x", 4, &dim));
    TSR_CHECK_OK(tsr_enddef(g));
    int rf = tsr_flush(g);
    TSR_CHECK_RC(rf, rclose ? 0 : TSR_ENOSPC);
    TSR_CHECK_EQ_INT(exists(path), 0);
    TSR_CHECK_EQ_INT(exists_or_tmp(path), 0);
    TSR_CHECK_RC(tsr_close(&g), rf);
    small_failed = rf != 0;
  }
  free_decomps(&D);
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* reported once, not again */
  /* The servers are done with every file now. */
  if (rc != TSR_ENOTBUILT) TSR_CHECK_EQ_INT(exists_or_tmp(small), !small_failed);
  MPI_Comm_free(&model);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A path whose directory does not exist: tsr_create fails on every rank. */
static void unwritable(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(1, 1, 0, TSR_EACCES, &ctx, &model)) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  tsr_file *f = (tsr_file *)&np;
  TSR_CHECK_RC(tsr_create(ctx, "/nonexistent-tessera-dir/out.nc", NULL, &f), TSR_EACCES);
  TSR_CHECK_EQ_INT(f == NULL, 1);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  srv_test_init(&argc, &argv, "test_servers_errors");
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *dir = argc > 1 ? argv[1] : ".";
  bad_layouts();
  unwritable();
  for (int b = 0; b < 2; b++) {
    const char *backend = b ? "pnetcdf" : "netcdf";
    too_big(dir, 1, 1, backend);
    if (np >= 4) too_big(dir, 1, 2, backend);
    if (np >= 3) too_big(dir, 2, 1, backend);
    error_at_next_flush(dir, backend);
  }
  return srv_test_finish("servers");
}
