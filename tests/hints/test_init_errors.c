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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *s = argc > 1 ? argv[1] : "";
  if (strcmp(s, "bad_hint_on_one_rank") == 0) bad_hint_on_one_rank();
  else if (strcmp(s, "servers_keys_without_servers") == 0) servers_keys_without_servers();
  else if (strcmp(s, "create_hint") == 0) create_hint();
  else g_fail = 2;
  int any = 0;
  MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
