/* Files appear atomically and exclusively (issue: never a file that lies):
 *   atomic:<strategy>   while open, only `<path>.tessera-tmp` exists; after
 *                       tsr_close the final name exists, the temporary and
 *                       the lock do not;
 *   failed:<strategy>   a file size limit on every rank: the same TSR_ENOSPC
 *                       everywhere, and neither the final name nor a temporary
 *                       is left behind;
 *   busy                another process holds the path's lock: tsr_create is
 *                       TSR_EBUSY on every rank (clobber=force writes anyway);
 *   stale_pieces        split pieces of an earlier run with more ranks are
 *                       removed when the new set is complete;
 *   killed:<strategy>   the last rank raises SIGKILL in the middle of the
 *                       output (killed_rank.sh checks that the job ends and
 *                       that nothing carries the final name).
 * Usage: test_atomic SCENARIO DIR. Exit 77 (skip) when the strategy is not
 * built. Checks and verdict from tsr_test.h; main is its own (rank 0 forks the
 * lock holder of `busy` before MPI_Init), so tsr_test_main is not used. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tessera.h"
#include "tsr_test.h"

static int g_rank, g_size;
static char g_dir[512];

static int exists(const char *p) { return access(p, F_OK) == 0; }

static void with_suffix(char *out, size_t n, const char *path, const char *suffix) {
  snprintf(out, n, "%s%s", path, suffix);
}

/* A 2-D row decomposition of a 64 x 32 float field, one record variable. */
typedef struct {
  tsr_decomp *d;
  tsr_file *f;
  int v;
  float buf[64 * 32];
} field;

static int open_field(tsr_ctx *ctx, field *x, const char *path, const char *hints) {
  int64_t g[2] = {64, 32}, st[2] = {64 * g_rank / g_size, 0};
  int64_t ct[2] = {64 * (g_rank + 1) / g_size - st[0], 32};
  if (tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &x->d)) return -1;
  int rc = tsr_create(ctx, path, hints, &x->f);
  if (rc) return rc;
  int dt, dy, dx;
  tsr_def_dim(x->f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(x->f, "y", 64, &dy);
  tsr_def_dim(x->f, "x", 32, &dx);
  tsr_def_var(x->f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &x->v);
  tsr_def_var_decomp(x->f, x->v, x->d);
  return tsr_enddef(x->f);
}

/* The name the strategy's first file has (split: rank 0's piece). */
static void final_name(char *out, size_t n, const char *path, const char *strategy) {
  if (strcmp(strategy, "split") == 0) snprintf(out, n, "%s.0000", path);
  else snprintf(out, n, "%s", path);
}

static int atomic(tsr_ctx *ctx, const char *strategy) {
  char path[600], fin[640], tmp[700], lock[700], hints[64];
  snprintf(path, sizeof path, "%s/atomic_%s_np%d.nc", g_dir, strategy, g_size);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  final_name(fin, sizeof fin, path, strategy);
  with_suffix(tmp, sizeof tmp, fin, ".tessera-tmp");
  with_suffix(lock, sizeof lock, path, ".tessera-lock");
  if (g_rank == 0) unlink(fin); /* an earlier run's file would stand until the rename */
  MPI_Barrier(MPI_COMM_WORLD);
  field x = {0};
  int rc = open_field(ctx, &x, path, hints);
  if (rc == TSR_ENOTBUILT) return TSR_TEST_SKIP;
  TSR_CHECK_RC(rc, 0);
  TSR_CHECK_RC(tsr_put(x.f, x.v, 0, NULL, x.buf), 0);
  TSR_CHECK_RC(tsr_flush(x.f), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    TSR_CHECK(!exists(fin));
    TSR_CHECK(exists(tmp));
    TSR_CHECK(exists(lock));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(tsr_close(&x.f), 0);
  if (g_rank == 0) {
    TSR_CHECK(exists(fin));
    TSR_CHECK(!exists(tmp));
    TSR_CHECK(!exists(lock));
  }
  tsr_decomp_free(&x.d);
  return 0;
}

static int failed(tsr_ctx *ctx, const char *strategy) {
  char path[600], fin[640], tmp[700], hints[96];
  snprintf(path, sizeof path, "%s/failed_%s_np%d.nc", g_dir, strategy, g_size);
  snprintf(hints, sizeof hints, "strategy=%s:buffer_bytes=0", strategy);
  final_name(fin, sizeof fin, path, strategy);
  with_suffix(tmp, sizeof tmp, fin, ".tessera-tmp");
  field x = {0};
  int rc = open_field(ctx, &x, path, hints);
  if (rc == TSR_ENOTBUILT) return TSR_TEST_SKIP;
  TSR_CHECK_RC(rc, 0);
  struct rlimit old, lim;
  signal(SIGXFSZ, SIG_IGN);
  getrlimit(RLIMIT_FSIZE, &old);
  lim.rlim_cur = 4096; /* the header fits, the data does not */
  lim.rlim_max = old.rlim_max;
  setrlimit(RLIMIT_FSIZE, &lim);
  rc = 0;
  for (int t = 0; t < 4 && !rc; t++) rc = tsr_put(x.f, x.v, t, NULL, x.buf);
  int rc2 = tsr_close(&x.f);
  setrlimit(RLIMIT_FSIZE, &old);
  TSR_CHECK_RC(rc ? rc : rc2, TSR_ENOSPC);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK(!exists(fin));
  TSR_CHECK(!exists(tmp));
  tsr_decomp_free(&x.d);
  return 0;
}

/* Before MPI_Init, rank 0's process forks a child that holds the lock, as a
 * second job writing the same path would. */
static pid_t g_holder = -1;
static int g_release[2];

static void hold_lock(const char *lock) {
  int ready[2];
  if (pipe(ready) || pipe(g_release)) return;
  g_holder = fork();
  if (g_holder == 0) {
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char c = fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    close(g_release[1]);
    (void)!read(g_release[0], &c, 1); /* until the parent closes its end */
    _exit(0);
  }
  char c = 'n';
  int got = (int)read(ready[0], &c, 1);
  TSR_CHECKF(got == 1 && c == 'y', "the lock holder could not lock %s", lock);
  close(g_release[0]);
}

static int busy(tsr_ctx *ctx) {
  char path[600];
  snprintf(path, sizeof path, "%s/busy.nc", g_dir);
  tsr_file *f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_create(ctx, path, NULL, &f), TSR_EBUSY);
  TSR_CHECK(f == NULL);
  TSR_CHECK(strstr(tsr_last_error(), "is being written by another job") != NULL);
  TSR_CHECK_RC(tsr_create(ctx, path, "clobber=force", &f), 0);
  TSR_CHECK_RC(tsr_close(&f), 0);
  return 0;
}

/* The directory is a small tmpfs (full_disk.sh): the data does not fit. */
static int nospace(tsr_ctx *ctx, const char *scenario) {
  char path[600], fin[640], tmp[700], hints[96], strategy[32];
  /* split_deferred: split's pieces written at the close (put_mode=deferred),
   * so the full disk shows there */
  int deferred = strcmp(scenario, "split_deferred") == 0;
  snprintf(strategy, sizeof strategy, "%s", deferred ? "split" : scenario);
  snprintf(path, sizeof path, "%s/nospace_%s_np%d.nc", g_dir, scenario, g_size);
  snprintf(hints, sizeof hints, "strategy=%s:buffer_bytes=0%s", strategy,
           deferred ? ":put_mode=deferred" : "");
  final_name(fin, sizeof fin, path, strategy);
  with_suffix(tmp, sizeof tmp, fin, ".tessera-tmp");
  field x = {0};
  int rc = open_field(ctx, &x, path, hints);
  if (rc == TSR_ENOTBUILT) return TSR_TEST_SKIP;
  for (int t = 0; t < 64 && !rc; t++) rc = tsr_put(x.f, x.v, t, NULL, x.buf);
  int rc2 = x.f ? tsr_close(&x.f) : 0;
  TSR_CHECK_RC(rc ? rc : rc2, TSR_ENOSPC);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK(!exists(fin));
  TSR_CHECK(!exists(tmp));
  tsr_decomp_free(&x.d);
  return 0;
}

/* The directory is a read-only mount (full_disk.sh): tsr_create fails with
 * TSR_EACCES on every rank, naming the directory. */
static int readonly(tsr_ctx *ctx) {
  char path[600];
  snprintf(path, sizeof path, "%s/readonly_np%d.nc", g_dir, g_size);
  tsr_file *f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_create(ctx, path, NULL, &f), TSR_EACCES);
  TSR_CHECK(f == NULL);
  TSR_CHECK(strstr(tsr_last_error(), "cannot create files in the directory of") != NULL);
  return 0;
}

static int killed(tsr_ctx *ctx, const char *strategy) {
  char path[600], hints[64];
  snprintf(path, sizeof path, "%s/killed_%s_np%d.nc", g_dir, strategy, g_size);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  field x = {0};
  int rc = open_field(ctx, &x, path, hints);
  if (rc == TSR_ENOTBUILT) return TSR_TEST_SKIP;
  for (int t = 0; t < 4; t++) {
    if (t == 2 && g_rank == g_size - 1) raise(SIGKILL);
    tsr_put(x.f, x.v, t, NULL, x.buf);
  }
  tsr_close(&x.f); /* not reached by everyone: the job is torn down */
  return 0;
}

/* WRF's file names hold ':' (wrfout_d01_2026-01-01_00:00:00): written with
 * any strategy, such a file is read back by the reading default (PnetCDF
 * cannot open it, so another backend is picked), and naming PnetCDF for it
 * says why it cannot. */
static int colon_path(tsr_ctx *ctx) {
  char path[600];
  snprintf(path, sizeof path, "%s/wrfout_d01_2026-01-01_00:00:00_np%d", g_dir, g_size);
  field x = {0};
  for (int i = 0; i < 64 * 32; i++) x.buf[i] = (float)i;
  TSR_CHECK_RC(open_field(ctx, &x, path, "strategy=serial"), 0);
  TSR_CHECK_RC(tsr_put(x.f, x.v, 0, NULL, x.buf), 0);
  TSR_CHECK_RC(tsr_close(&x.f), 0);
  tsr_file *f;
  TSR_CHECK_RC(tsr_open(ctx, path, NULL, &f), 0);
  if (f) {
    static float all[64 * 32];
    int v;
    TSR_CHECK_RC(tsr_inq_varid(f, "v", &v), 0);
    TSR_CHECK_RC(tsr_get(f, v, 0, NULL, all), 0);
    TSR_CHECK(all[64 * 32 - 1] == (float)(64 * 32 - 1) || g_size > 1);
    TSR_CHECK_RC(tsr_close(&f), 0);
  }
  tsr_file *p = NULL;
  int rc = tsr_open(ctx, path, "backend=pnetcdf", &p);
  if (rc != TSR_ENOTBUILT) {
    TSR_CHECK_RC(rc, TSR_EACCES);
    TSR_CHECK(strstr(tsr_last_error(), "(a ':' in the path)") != NULL);
  }
  tsr_decomp_free(&x.d);
  return 0;
}

static int stale_pieces(tsr_ctx *ctx) {
  char path[600], stale[700];
  snprintf(path, sizeof path, "%s/stale_np%d.nc", g_dir, g_size);
  if (g_rank == 0)
    for (int r = g_size; r < g_size + 3; r++) {
      snprintf(stale, sizeof stale, "%s.%04d", path, r);
      FILE *fp = fopen(stale, "w");
      if (fp) fclose(fp);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  field x = {0};
  TSR_CHECK_RC(open_field(ctx, &x, path, "strategy=split"), 0);
  TSR_CHECK_RC(tsr_put(x.f, x.v, 0, NULL, x.buf), 0);
  TSR_CHECK_RC(tsr_close(&x.f), 0);
  snprintf(stale, sizeof stale, "%s.%04d", path, g_size);
  TSR_CHECK(!exists(stale));
  snprintf(stale, sizeof stale, "%s.%04d", path, g_size - 1);
  TSR_CHECK(exists(stale));
  tsr_decomp_free(&x.d);
  return 0;
}

int main(int argc, char **argv) {
  const char *scn = argc > 1 ? argv[1] : "";
  snprintf(g_dir, sizeof g_dir, "%s", argc > 2 ? argv[2] : ".");
  const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
  if (strcmp(scn, "busy") == 0 && (!env_rank || strcmp(env_rank, "0") == 0)) {
    char lock[700];
    snprintf(lock, sizeof lock, "%s/busy.nc.tessera-lock", g_dir);
    hold_lock(lock);
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  /* What tsr_test_main sets up: rank, size and names for the messages. */
  tsr_test_.program = "test_atomic";
  tsr_test_.scenario = scn;
  tsr_test_.rank = g_rank;
  tsr_test_.nranks = g_size;
  tsr_ctx *ctx;
  MPI_Comm model;
  int skip = 0;
  TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model), 0);
  if (strncmp(scn, "atomic:", 7) == 0) skip = atomic(ctx, scn + 7);
  else if (strncmp(scn, "failed:", 7) == 0) skip = failed(ctx, scn + 7);
  else if (strcmp(scn, "busy") == 0) skip = busy(ctx);
  else if (strcmp(scn, "stale_pieces") == 0) skip = stale_pieces(ctx);
  else if (strncmp(scn, "killed:", 7) == 0) skip = killed(ctx, scn + 7);
  else if (strcmp(scn, "colon_path") == 0) skip = colon_path(ctx);
  else if (strncmp(scn, "nospace:", 8) == 0) skip = nospace(ctx, scn + 8);
  else if (strcmp(scn, "readonly") == 0) skip = readonly(ctx);
  else tsr_test_fail_(__FILE__, __LINE__, "no scenario '%s'", scn);
  if (skip == TSR_TEST_SKIP) tsr_test_skip("%s is not built into this library", scn);
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
  if (g_holder > 0) {
    close(g_release[1]);
    waitpid(g_holder, NULL, 0);
  }
  char name[320];
  snprintf(name, sizeof name, "test_atomic %s", scn);
  int code = tsr_test_verdict(name); /* agreed over MPI_COMM_WORLD: 0, 1 or 77 */
  MPI_Finalize();
  return code;
}
