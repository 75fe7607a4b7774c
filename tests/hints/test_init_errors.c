/* Hint errors reach the user with their reason, on every rank, without
 * TESSERA_VERBOSE: tsr_init and tsr_create fail with TSR_EHINT and
 * tsr_last_error() names the hint. One scenario per argv[1]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

static int g_fail;

static void expect(int rc, int want, const char *needle, const char *what) {
  const char *msg = tsr_last_error();
  if (rc != want || !strstr(msg, needle)) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s: got %s \"%s\", want %s containing \"%s\"\n", rank, what,
            tsr_errname(rc), msg, tsr_errname(want), needle);
    g_fail = 1;
  }
}

/* Only the last rank gets the bad hint: every rank must fail the same way
 * and print the same reason. */
static void bad_hint_on_one_rank(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_ctx *ctx = (tsr_ctx *)&ctx;
  MPI_Comm model;
  int rc = tsr_init(MPI_COMM_WORLD, rank == size - 1 ? "aggregators=two" : "", &ctx, &model);
  expect(rc, TSR_EHINT, "hint 'aggregators=two': expected an integer >= 1 (in tsr_init hints)",
         "tsr_init");
  if (ctx != NULL) g_fail = 1;
}

static void servers_keys_without_servers(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  int rc = tsr_init(MPI_COMM_WORLD, "strategy=direct:io_groups=1:io_tasks=1", &ctx, &model);
  expect(rc, TSR_EHINT, "hint 'io_groups=1' needs strategy=servers, but strategy=direct",
         "tsr_init");
}

static void create_hint(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model)) {
    g_fail = 1;
    return;
  }
  tsr_file *f;
  int rc = tsr_create(ctx, "unused.nc", "strategy=fast", &f);
  expect(rc, TSR_EHINT, "hint 'strategy=fast': expected serial, direct, aggregate, split or servers",
         "tsr_create");
  rc = tsr_create(ctx, "unused.nc", "buffer_bytes=1048576g", &f);
  expect(rc, TSR_EHINT, "more than this node's memory", "tsr_create");
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
  if (tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model)) {
    g_fail = 1;
    return;
  }
  for (int safe = 0; safe <= 1; safe++) {
    tsr_file *f;
    char path[64];
    snprintf(path, sizeof path, "mismatch_%d_np%d.nc", safe, size);
    if (tsr_create(ctx, path, safe ? "safe_mode=1:backend=null" : "backend=null", &f)) {
      g_fail = 1;
      continue;
    }
    int d, v, w;
    tsr_def_dim(f, "x", 4, &d);
    tsr_def_var(f, "a", TSR_FLOAT, 1, &d, &v);
    const char *name = rank == size - 1 && size > 1 ? "b_other" : "b";
    int rc = tsr_def_var(f, name, TSR_FLOAT, 1, &d, &w);
    /* Valid on every rank in both modes: only the names differ. */
    if (rc != 0) {
      fprintf(stderr, "rank %d: def_var: got %s\n", rank, tsr_errname(rc));
      g_fail = 1;
    }
    rc = tsr_enddef(f);
    const char *msg = "";
    tsr_backend_error(f, NULL, &msg);
    if (size > 1) { /* both modes compare the whole schema at enddef */
      char want_msg[256];
      snprintf(want_msg, sizeof want_msg,
               "define calls differ across ranks at call #3: rank %d made tsr_def_var(\"b_other\") "
               "-> TSR_OK, rank 0 made tsr_def_var(\"b\") -> TSR_OK", size - 1);
      if (rc != TSR_EINVAL || strcmp(msg, want_msg) != 0) {
        fprintf(stderr, "rank %d: enddef: got %s \"%s\"\n", rank, tsr_errname(rc), msg);
        g_fail = 1;
      }
    }
    tsr_close(&f);
  }
  /* A call that fails on one rank only: safe_mode agrees on it at once. */
  tsr_file *f;
  if (tsr_create(ctx, "mismatch_safe.nc", "safe_mode=1:backend=null", &f) == 0) {
    int d, bad;
    tsr_def_dim(f, "x", 4, &d);
    int rc = tsr_def_dim(f, rank == size - 1 ? "x" : "y", 4, &bad);
    if (rc != TSR_ENAME) {
      fprintf(stderr, "rank %d: safe def_dim: got %s\n", rank, tsr_errname(rc));
      g_fail = 1;
    }
    tsr_close(&f);
  }
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *s = argc > 1 ? argv[1] : "";
  if (strcmp(s, "bad_hint_on_one_rank") == 0) bad_hint_on_one_rank();
  else if (strcmp(s, "servers_keys_without_servers") == 0) servers_keys_without_servers();
  else if (strcmp(s, "create_hint") == 0) create_hint();
  else if (strcmp(s, "schema_mismatch") == 0) schema_mismatch();
  else g_fail = 2;
  int any = 0;
  MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
