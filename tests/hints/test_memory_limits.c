/* Size hints against what a process may really allocate (issue 25): under
 * RLIMIT_AS (ulimit -v) a buffer_bytes the address space cannot hold is
 * TSR_EHINT with a sentence naming the hint, its value and the limit, the
 * same on every rank, even when only one rank is limited; and a buffer that
 * fits when the hints are read but not when PnetCDF attaches it is
 * TSR_ENOMEM at tsr_enddef, not a SIGSEGV inside PnetCDF. The cgroup limit
 * is read from made-up /proc and /sys files (tsr__cgroup_limit). The limits
 * are lowered after MPI_Init, so MPI starts as usual, and restored after. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/memory_room.h"
#include "tessera.h"
#include "tsr_test.h"

#define MIB ((int64_t)1 << 20)

static struct rlimit saved;

/* This process's address space now, from /proc/self/statm. */
static int64_t vm_size(void) {
  long long pages = 0;
  FILE *fp = fopen("/proc/self/statm", "r");
  if (fp) {
    if (fscanf(fp, "%lld", &pages) != 1) pages = 0;
    fclose(fp);
  }
  return pages * sysconf(_SC_PAGESIZE);
}

/* RLIMIT_AS lowered to what is mapped now plus @p room bytes. */
static void limit_address_space(int64_t room) {
  getrlimit(RLIMIT_AS, &saved);
  struct rlimit rl = saved;
  rl.rlim_cur = (rlim_t)(vm_size() + room);
  TSR_REQUIRE(setrlimit(RLIMIT_AS, &rl) == 0);
}

static void restore(void) { setrlimit(RLIMIT_AS, &saved); }

/* Every rank's tsr_last_error() equals the one of rank @p root. */
static void same_message_everywhere(int root) {
  char mine[1024], theirs[1024];
  snprintf(mine, sizeof mine, "%s", tsr_last_error());
  memcpy(theirs, mine, sizeof theirs);
  MPI_Bcast(theirs, sizeof theirs, MPI_CHAR, root, MPI_COMM_WORLD);
  TSR_CHECK_EQ_STR(mine, theirs);
}

static void expect_message(const char *needle) {
  const char *msg = tsr_last_error();
  TSR_CHECKF(strstr(msg, needle) != NULL, "tsr_last_error() is \"%s\", want \"%s\" in it", msg,
             needle);
}

/* Every size hint that makes each rank allocate, at tsr_init. */
static void rlimit_init(void) {
  static const char *const hints[] = {"buffer_bytes=1g", "slab_bytes=1g",
                                      "server_buffer_bytes=1g"};
  limit_address_space(256 * MIB);
  for (int i = 0; i < 3; i++) {
    tsr_test_case("tsr_init(\"%s\")", hints[i]);
    tsr_ctx *ctx = (tsr_ctx *)&ctx;
    MPI_Comm model = MPI_COMM_WORLD;
    TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, hints[i], &ctx, &model), TSR_EHINT);
    TSR_CHECK_NULL(ctx);
    TSR_CHECK(model == MPI_COMM_NULL);
    char want[128];
    snprintf(want, sizeof want, "hint '%s': more than this process may allocate (", hints[i]);
    expect_message(want);
    expect_message("bytes, what the address-space limit RLIMIT_AS (ulimit -v) of ");
    expect_message("each rank would allocate it (in tsr_init hints)");
    same_message_everywhere(0);
  }
  restore();
}

/* Only the last rank is limited: every rank fails alike, with its sentence. */
static void rlimit_one_rank(void) {
  int last = tsr_test_nranks() - 1;
  if (tsr_test_rank() == last) limit_address_space(256 * MIB);
  tsr_ctx *ctx = (tsr_ctx *)&ctx;
  MPI_Comm model;
  TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, "buffer_bytes=1g", &ctx, &model), TSR_EHINT);
  TSR_CHECK_NULL(ctx);
  expect_message("hint 'buffer_bytes=1g': more than this process may allocate (");
  expect_message("RLIMIT_AS (ulimit -v)");
  same_message_everywhere(last);
  if (tsr_test_rank() == last) restore();
}

/* The same check at tsr_create, for the strategy that crashed (direct). */
static void rlimit_create(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  if (!ctx) return;
  limit_address_space(256 * MIB);
  tsr_file *f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_create(ctx, "memory_limits_create.nc", "strategy=direct:buffer_bytes=1g", &f),
               TSR_EHINT);
  TSR_CHECK_NULL(f);
  expect_message("hint 'buffer_bytes=1g': more than this process may allocate (");
  same_message_everywhere(0);
  restore();
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
}

/* buffer_bytes fits when tsr_create reads it; then the model takes most of
 * what is left, and PnetCDF's buffer could not be allocated at tsr_enddef
 * (PnetCDF 1.12 would carry on with a NULL buffer and crash at the first
 * bput): TSR_ENOMEM on every rank, the buffer named, no file left. */
static void bput_buffer_probe(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  if (!ctx) return;
  const char *path = "memory_limits_probe.nc";
  limit_address_space(512 * MIB);
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, "strategy=direct:buffer_bytes=256m", &f);
  if (rc == TSR_ENOTBUILT) {
    restore();
    tsr_finalize(&ctx);
    MPI_Comm_free(&model);
    tsr_test_skip("strategy direct (PnetCDF) is not built into this library");
    return;
  }
  TSR_CHECK_OK(rc);
  /* Mapped, never touched: it takes address space, not memory. */
  void *hog = malloc((size_t)(400 * MIB));
  TSR_REQUIRE(hog != NULL);
  if (f) {
    int d, v;
    tsr_def_dim(f, "x", 16, &d);
    tsr_def_var(f, "v", TSR_FLOAT, 1, &d, &v);
    TSR_CHECK_RC(tsr_enddef(f), TSR_ENOMEM);
    const char *msg = "";
    tsr_backend_error(f, NULL, &msg);
    TSR_CHECKF(strstr(msg, "cannot allocate the 268435456-byte bput buffer (hint buffer_bytes)"),
               "message is \"%s\"", msg);
    tsr_close(&f);
  }
  free(hog);
  restore();
  TSR_CHECK(access(path, F_OK) != 0);
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
}

/* Write @p text to @p dir/@p rel, making the directories on the way. */
static void put(const char *dir, const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    mkdir(path, 0700); /* exists already: fine */
    *slash = '/';
  }
  FILE *fp = fopen(path, "w");
  TSR_REQUIRE(fp != NULL);
  fputs(text, fp);
  fclose(fp);
}

/* The made-up mountinfo: hierarchy @p type (cgroup2, or cgroup with
 * @p opts naming its controllers) with its root @p root mounted on
 * @p dir/@p sub, and a tmpfs beside it. */
static void mounts(const char *dir, const char *root, const char *sub, const char *type,
                   const char *opts) {
  char text[1200];
  snprintf(text, sizeof text,
           "30 23 0:26 %s %s/%s rw,nosuid - %s %s %s\n"
           "31 23 0:27 / %s/other rw - tmpfs tmpfs rw\n",
           root, dir, sub, type, type, opts, dir);
  put(dir, "mountinfo", text);
}

/* tsr__cgroup_limit over @p dir's made-up "cgroup" and "mountinfo" files;
 * *@p where gets the limit's file. */
static int64_t limit_in(const char *dir, char *where, size_t cap) {
  char cg[512], mi[512];
  snprintf(cg, sizeof cg, "%s/cgroup", dir);
  snprintf(mi, sizeof mi, "%s/mountinfo", dir);
  return tsr__cgroup_limit(cg, mi, where, cap);
}

/* A made-up hierarchy under a temporary directory: cgroup v2 with a
 * tighter limit on an ancestor than on the leaf, a v2 mount that shows only
 * a subtree (a container's), and v1's hierarchical_memory_limit. */
static void cgroup_files(void) {
  if (tsr_test_rank() != 0) return;
  char dir[] = "/tmp/tessera-cgroup-XXXXXX", want[512], where[256] = "";
  TSR_REQUIRE(mkdtemp(dir) != NULL);

  tsr_test_case("cgroup v2, parent's memory.max binds");
  put(dir, "v2/job/memory.max", "1073741824\n");
  put(dir, "v2/job/step/memory.max", "max\n");
  mounts(dir, "/", "v2", "cgroup2", "rw");
  put(dir, "cgroup", "0::/job/step\n");
  TSR_CHECK_EQ_INT(limit_in(dir, where, sizeof where), 1073741824);
  snprintf(want, sizeof want, "%s/v2/job/memory.max", dir);
  TSR_CHECK_EQ_STR(where, want);

  tsr_test_case("cgroup v2, a mounted subtree");
  mounts(dir, "/job", "v2", "cgroup2", "rw");
  put(dir, "v2/step/memory.max", "536870912\n");
  TSR_CHECK_EQ_INT(limit_in(dir, where, sizeof where), 536870912);

  tsr_test_case("cgroup v1, hierarchical_memory_limit");
  put(dir, "v1/batch/job/memory.stat", "cache 0\nrss 4096\nhierarchical_memory_limit 2147483648\n");
  mounts(dir, "/", "v1", "cgroup", "rw,memory");
  put(dir, "cgroup", "5:cpu,cpuacct:/batch/job\n4:memory:/batch/job\n0::/\n");
  TSR_CHECK_EQ_INT(limit_in(dir, where, sizeof where), 2147483648);

  tsr_test_case("cgroup v1, unlimited");
  put(dir, "v1/batch/job/memory.stat", "hierarchical_memory_limit 9223372036854771712\n");
  TSR_CHECK_EQ_INT(limit_in(dir, where, sizeof where), INT64_MAX);

  tsr_test_case("no cgroup files");
  put(dir, "cgroup", "");
  TSR_CHECK_EQ_INT(limit_in(dir, where, sizeof where), INT64_MAX);

  snprintf(want, sizeof want, "rm -rf %s", dir);
  TSR_CHECK(system(want) == 0);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"rlimit_init", rlimit_init, 0},
    {"rlimit_one_rank", rlimit_one_rank, 0},
    {"rlimit_create", rlimit_create, 0},
    {"bput_buffer_probe", bput_buffer_probe, 0},
    {"cgroup_files", cgroup_files, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "memory_limits", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
