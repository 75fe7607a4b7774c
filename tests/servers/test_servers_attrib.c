/* strategy=servers, where a server-side failure is reported and what the
 * servers return:
 *
 *   next_put     A file fails on the servers only (a file size limit that
 *                only they have). Once its note reached model rank 0, the
 *                next collective call, here a put to another file, reports
 *                TSR_ENOSPC on every model rank, with a message that names
 *                the failed file; not the close of a later file. The server
 *                ranks return the same code from tsr_init. That put failed
 *                the other file as well: its close returns the same code
 *                and the servers delete it (nothing left, not even its
 *                temporary), though later puts to it succeed.
 *   abort        tsr_abort of a file the servers hold: they delete it, the
 *                next file is written as usual, and nothing is reported.
 *                With 4 ranks two servers write each file (a parallel
 *                backend), and delete it together.
 *   ring_enomem  The model ranks cannot allocate the hand-off ring
 *                (RLIMIT_AS set by this program below buffer_bytes after
 *                tsr_create: before, the hint itself is refused, TSR_EHINT,
 *                see tests/hints/test_memory_limits.c):
 *                tsr_enddef is TSR_ENOMEM on every model rank, the servers
 *                still stop (no hang: CTest's timeout) and return
 *                TSR_ENOMEM from tsr_init. With transport=p2p and rma.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsr_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

/* RLIMIT_AS lowered to what this process maps now plus @p room bytes. */
static void limit_address_space(long room) {
  struct rlimit lim;
  getrlimit(RLIMIT_AS, &lim);
  long pages = 0;
  FILE *fp = fopen("/proc/self/statm", "r");
  if (fp && fscanf(fp, "%ld", &pages) != 1) pages = 0;
  if (fp) fclose(fp);
  lim.rlim_cur = (rlim_t)(pages * sysconf(_SC_PAGESIZE) + room);
  if (pages > 0) setrlimit(RLIMIT_AS, &lim);
}

/* Start G=1 x T=1 servers (the last rank). @p srv_fsize > 0: a file size
 * limit on the server rank alone, during tsr_init (where it serves).
 * Returns tsr_init's code; *model is MPI_COMM_NULL on the server. */
static int start(const char *hints, long srv_fsize, tsr_ctx **ctx, MPI_Comm *model) {
  int server = tsr_test_rank() == tsr_test_nranks() - 1;
  struct rlimit old_f;
  getrlimit(RLIMIT_FSIZE, &old_f);
  if (server && srv_fsize > 0) {
    signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of a killed process */
    struct rlimit lim = {(rlim_t)srv_fsize, old_f.rlim_max};
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  int rc = tsr_init(MPI_COMM_WORLD, hints, ctx, model);
  if (server) setrlimit(RLIMIT_FSIZE, &old_f);
  return rc;
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* A file of NF frames of NY x NX floats (far over the servers' 2000 bytes). */
enum { NY = 64, NX = 64, NF = 4 };

/* Returns tsr_close's code. */
static int write_big(tsr_ctx *ctx, MPI_Comm model, const char *path) {
  int me, P;
  MPI_Comm_rank(model, &me);
  MPI_Comm_size(model, &P);
  int64_t y0 = (int64_t)NY * me / P, y1 = (int64_t)NY * (me + 1) / P;
  int64_t gsize[2] = {NY, NX}, start[2] = {y0, 0}, count[2] = {y1 - y0, NX};
  tsr_decomp *d;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, gsize, start, count, NULL, NULL, &d));
  float *buf = calloc((size_t)((y1 - y0) * NX + 1), sizeof *buf);
  tsr_file *f;
  int dims[3], v;
  TSR_CHECK_OK(tsr_create(ctx, path, "backend=netcdf", &f));
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
  TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dims[1]));
  TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dims[2]));
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 3, dims, &v));
  TSR_CHECK_OK(tsr_enddef(f));
  for (int t = 0; t < NF; t++) TSR_CHECK_OK(tsr_put(f, v, t, d, buf));
  /* Its own close reports it only with statistics on (it then waits for
   * the file's notes); either way it is attributed rightly. */
  int rc = tsr_close(&f);
  TSR_CHECK(rc == 0 || rc == TSR_ENOSPC);
  free(buf);
  tsr_decomp_free(&d);
  return rc;
}

static void next_put(void) {
  const char *dir = tsr_test_arg(0, ".");
  char big[512], small[512];
  snprintf(big, sizeof big, "%s/attrib_big_np%d.nc", dir, tsr_test_nranks());
  snprintf(small, sizeof small, "%s/attrib_small_np%d.nc", dir, tsr_test_nranks());
  if (tsr_test_rank() == 0) unlink(small); /* an earlier run's would stand */
  MPI_Barrier(MPI_COMM_WORLD);
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  int rc = start("strategy=servers:io_groups=1:io_tasks=1", 2000, &ctx, &model);
  if (model == MPI_COMM_NULL) { /* the server: the job's last failure, named */
    TSR_CHECK_RC(rc, TSR_ENOSPC);
    TSR_CHECKF(!strncmp(tsr_last_error(), big, strlen(big)), "server: tsr_last_error '%s'",
               tsr_last_error());
    return;
  }
  TSR_CHECK_OK(rc);
  if (write_big(ctx, model, big)) {
    tsr_test_skip("the failure came back at the failed file's own close");
    TSR_CHECK_OK(tsr_finalize(&ctx));
    MPI_Comm_free(&model);
    return;
  }
  /* A header-only file with one small fixed variable: fits the limit. */
  tsr_file *g;
  int dim, v;
  TSR_CHECK_OK(tsr_create(ctx, small, "backend=netcdf", &g));
  TSR_CHECK_OK(tsr_def_dim(g, "n", 4, &dim));
  TSR_CHECK_OK(tsr_def_var(g, "k", TSR_INT, 1, &dim, &v));
  TSR_CHECK_OK(tsr_enddef(g));
  int k[4] = {1, 2, 3, 4};
  /* Put until the error comes, a pause between puts for the servers to
   * fail the file and send its note (at most ~30 s on a loaded machine). */
  int got = 0, tries = 0;
  for (; tries < 600 && !got; tries++) {
    got = tsr_put_global(g, v, 0, k);
    if (!got) usleep(50000);
  }
  TSR_CHECKF(got == TSR_ENOSPC, "put after the failure: %s after %d puts", tsr_errname(got),
             tries);
  const char *msg = "";
  tsr_backend_error(g, NULL, &msg);
  size_t lb = strlen(big);
  TSR_CHECKF(!strncmp(msg, big, lb) && !strncmp(msg + lb, ": ", 2),
             "message '%s' does not start with '%s: '", msg, big);
  TSR_CHECK_EQ_INT(exists(big), 0); /* never left looking complete */
  TSR_CHECK_OK(tsr_put_global(g, v, 0, k)); /* reported once */
  /* The file of the put that reported it failed with it. */
  TSR_CHECK_RC(tsr_close(&g), TSR_ENOSPC);
  TSR_CHECKF(!strncmp(tsr_last_error(), big, lb), "close: tsr_last_error '%s'", tsr_last_error());
  TSR_CHECK_OK(tsr_finalize(&ctx));
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", small);
  TSR_CHECK_EQ_INT(exists(small), 0);
  TSR_CHECK_EQ_INT(exists(tmp), 0);
  MPI_Comm_free(&model);
}

static void ring_enomem_with(const char *transport) {
  if (ASAN) { /* its allocator aborts instead of returning NULL */
    tsr_test_skip("an address-space limit does not fit the sanitizer's shadow memory");
    return;
  }
  const char *dir = tsr_test_arg(0, ".");
  char path[512];
  snprintf(path, sizeof path, "%s/attrib_enomem_%s_np%d.nc", dir, transport, tsr_test_nranks());
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  /* 1 GiB of ring against 256 MiB of address space to spare. */
  char hints[128];
  snprintf(hints, sizeof hints,
           "strategy=servers:io_groups=1:io_tasks=1:buffer_bytes=1g:transport=%s", transport);
  int rc = start(hints, 0, &ctx, &model);
  if (model == MPI_COMM_NULL) {
    TSR_CHECK_RC(rc, TSR_ENOMEM);
    return;
  }
  TSR_CHECK_OK(rc);
  tsr_file *f;
  int dim, v;
  TSR_CHECK_OK(tsr_create(ctx, path, NULL, &f));
  /* The ring is allocated at the first hand-off, the OPEN of enddef. */
  struct rlimit old_as;
  getrlimit(RLIMIT_AS, &old_as);
  limit_address_space(256L << 20);
  TSR_CHECK_OK(tsr_def_dim(f, "n", 4, &dim));
  TSR_CHECK_OK(tsr_def_var(f, "k", TSR_INT, 1, &dim, &v));
  TSR_CHECK_RC(tsr_enddef(f), TSR_ENOMEM);
  setrlimit(RLIMIT_AS, &old_as);
  TSR_CHECK_OK(tsr_close(&f));
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* reported at enddef, not again */
  TSR_CHECK_EQ_INT(exists(path), 0);
  MPI_Comm_free(&model);
}

static void ring_enomem(void) { ring_enomem_with("p2p"); }
static void ring_enomem_rma(void) { ring_enomem_with("rma"); } /* the ring is an RMA window */

/* A small file of one int variable at @p path, @p frames records put. */
static tsr_file *small_file(tsr_ctx *ctx, const char *path, int frames) {
  tsr_file *f = NULL;
  int dims[2], v;
  TSR_CHECK_OK(tsr_create(ctx, path, NULL, &f));
  if (!f) return NULL;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
  TSR_CHECK_OK(tsr_def_dim(f, "n", 4, &dims[1]));
  TSR_CHECK_OK(tsr_def_var(f, "k", TSR_INT, 2, dims, &v));
  TSR_CHECK_OK(tsr_enddef(f));
  int k[4] = {1, 2, 3, 4};
  for (int t = 0; t < frames; t++) TSR_CHECK_OK(tsr_put_global(f, v, t, k));
  return f;
}

static void abort_file(void) {
  const char *dir = tsr_test_arg(0, ".");
  char gone[512], kept[512], tmp[600];
  snprintf(gone, sizeof gone, "%s/attrib_abort_gone_np%d.nc", dir, tsr_test_nranks());
  snprintf(kept, sizeof kept, "%s/attrib_abort_kept_np%d.nc", dir, tsr_test_nranks());
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", gone);
  if (tsr_test_rank() == 0) unlink(gone); /* an earlier run's would stand */
  MPI_Barrier(MPI_COMM_WORLD);
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  int rc = start(tsr_test_nranks() >= 4 ? "strategy=servers:io_groups=1:io_tasks=2"
                                         : "strategy=servers:io_groups=1:io_tasks=1",
                 0, &ctx, &model);
  if (model == MPI_COMM_NULL) { /* a server: nothing failed */
    TSR_CHECK_OK(rc);
    return;
  }
  TSR_CHECK_OK(rc);
  tsr_file *f = small_file(ctx, gone, 3);
  TSR_CHECK_OK(tsr_flush(f)); /* written on the server, under the temporary name */
  TSR_CHECK_OK(tsr_abort(&f));
  TSR_CHECK_NULL(f);
  tsr_file *g = small_file(ctx, kept, 2);
  TSR_CHECK_OK(tsr_close(&g));
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* the deleted file is not an error */
  TSR_CHECK_EQ_INT(exists(gone), 0);
  TSR_CHECK_EQ_INT(exists(tmp), 0);
  TSR_CHECK_EQ_INT(exists(kept), 1);
  MPI_Comm_free(&model);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"next_put", next_put, 2},
    {"abort", abort_file, 2},
    {"ring_enomem", ring_enomem, 2},
    {"ring_enomem_rma", ring_enomem_rma, 2},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "servers_attrib", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
