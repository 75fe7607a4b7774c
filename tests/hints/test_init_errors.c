/* Hint errors reach the user with their reason, on every rank, without
 * TESSERA_VERBOSE: tsr_init and tsr_create fail with TSR_EHINT and
 * tsr_last_error() names the hint. Scenarios through tsr_test_main
 * (test_init_errors SCENARIO). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "tsr_test.h"

/* @p rc is @p want and tsr_last_error() contains @p needle. */
#define EXPECT(rc, want, needle, what)                                                           \
  do {                                                                                           \
    const char *msg_ = tsr_last_error();                                                         \
    tsr_test_case("%s", what);                                                                   \
    TSR_CHECK_RC(rc, want);                                                                      \
    TSR_CHECKF(strstr(msg_, needle) != NULL, "tsr_last_error() is \"%s\", want it to contain \"%s\"", \
               msg_, needle);                                                                    \
  } while (0)

/* Only the last rank gets the bad hint: every rank must fail the same way
 * and print the same reason. */
static void bad_hint_on_one_rank(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_ctx *ctx = (tsr_ctx *)&ctx;
  MPI_Comm model;
  int rc = tsr_init(MPI_COMM_WORLD, rank == size - 1 ? "aggregators=two" : "", &ctx, &model);
  EXPECT(rc, TSR_EHINT, "hint 'aggregators=two': expected an integer >= 1 (in tsr_init hints)",
         "tsr_init");
  TSR_CHECK_NULL(ctx);
}

static void servers_keys_without_servers(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  int rc = tsr_init(MPI_COMM_WORLD, "strategy=direct:io_groups=1:io_tasks=1", &ctx, &model);
  EXPECT(rc, TSR_EHINT, "hint 'io_groups=1' needs strategy=servers, but strategy=direct",
         "tsr_init");
}

static void create_hint(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  int irc = tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model);
  TSR_CHECK_OK(irc);
  if (irc) return;
  tsr_file *f;
  int rc = tsr_create(ctx, "unused.nc", "strategy=fast", &f);
  EXPECT(rc, TSR_EHINT, "hint 'strategy=fast': expected serial, direct, aggregate, split or servers",
         "tsr_create");
  rc = tsr_create(ctx, "unused.nc", "buffer_bytes=1048576g", &f);
  EXPECT(rc, TSR_EHINT, "hint 'buffer_bytes=1048576g': more than this process may allocate (",
         "tsr_create");
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
}

/* The last rank names its variable differently: by default the define call
 * succeeds locally and tsr_enddef fails on every rank, naming the first
 * differing call and the rank (in safe mode too, which also agrees on every
 * call's result: a call failing on one rank fails on all). */
static void schema_mismatch(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_ctx *ctx;
  MPI_Comm model;
  int irc = tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model);
  TSR_CHECK_OK(irc);
  if (irc) return;
  for (int safe = 0; safe <= 1; safe++) {
    tsr_file *f;
    char path[64];
    snprintf(path, sizeof path, "mismatch_%d_np%d.nc", safe, size);
    tsr_test_case("safe_mode=%d", safe);
    int crc = tsr_create(ctx, path, safe ? "safe_mode=1:backend=null" : "backend=null", &f);
    TSR_CHECK_OK(crc);
    if (crc) continue;
    int d, v, w;
    tsr_def_dim(f, "x", 4, &d);
    tsr_def_var(f, "a", TSR_FLOAT, 1, &d, &v);
    const char *name = rank == size - 1 && size > 1 ? "b_other" : "b";
    /* Valid on every rank in both modes: only the names differ. */
    TSR_CHECK_OK(tsr_def_var(f, name, TSR_FLOAT, 1, &d, &w));
    int rc = tsr_enddef(f);
    const char *msg = "";
    tsr_backend_error(f, NULL, &msg);
    if (size > 1) { /* both modes compare the whole schema at enddef */
      char want_msg[256];
      snprintf(want_msg, sizeof want_msg,
               "define calls differ across ranks at call #3: rank %d made tsr_def_var(\"b_other\") "
               "-> TSR_OK, rank 0 made tsr_def_var(\"b\") -> TSR_OK", size - 1);
      TSR_CHECK_RC(rc, TSR_EINVAL);
      TSR_CHECK_EQ_STR(msg, want_msg);
    }
    tsr_close(&f);
  }
  /* A call that fails on one rank only: safe_mode agrees on it at once. */
  tsr_file *f;
  if (tsr_create(ctx, "mismatch_safe.nc", "safe_mode=1:backend=null", &f) == 0) {
    int d, bad;
    tsr_test_case("safe def_dim");
    tsr_def_dim(f, "x", 4, &d);
    TSR_CHECK_RC(tsr_def_dim(f, rank == size - 1 ? "x" : "y", 4, &bad), TSR_ENAME);
    tsr_close(&f);
  }
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"bad_hint_on_one_rank", bad_hint_on_one_rank, 0},
    {"servers_keys_without_servers", servers_keys_without_servers, 0},
    {"create_hint", create_hint, 0},
    {"schema_mismatch", schema_mismatch, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "init_errors", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
