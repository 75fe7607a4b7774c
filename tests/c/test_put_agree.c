/* How many reductions a tsr_put costs: each one synchronises the ranks, which
 * on an oversubscribed node costs turns of the CPU (issue 24). Counted with
 * MPI's profiling interface: this program's MPI_Allreduce and
 * MPI_Iallreduce count the calls, whoever makes them, and pass them on.
 *
 * Scenarios: split (one reduction per put: its puts exchange nothing, so the
 * checks and the result are agreed together; the same for tsr_put_global),
 * split_safe (safe_mode=1: checks first, two), serial (at least two: the
 * checks before any rank enters the exchange, the result after). A put refused
 * on one rank only is refused everywhere and does not fail the file. */
#include <stdio.h>
#include <string.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

static long reductions;

int MPI_Allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  reductions++;
  return PMPI_Allreduce(in, out, n, t, op, comm);
}

int MPI_Iallreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req) {
  reductions++;
  return PMPI_Iallreduce(in, out, n, t, op, comm, req);
}

/* A file of one record variable and Times; the reductions of one put of
 * each: @p per_put, or at least that many when not @p exact; then a put
 * refused on the last rank. */
static void check_count(long n, long per_put, int exact) {
  if (exact) TSR_CHECK_EQ_INT(n, per_put);
  else TSR_CHECK(n >= per_put);
}

static void count(const char *hints, long per_put, int exact) {
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  char path[512];
  tsr_test_path(path, sizeof path, "put_agree");
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, hints, &f));
  int64_t st[2], ct[2];
  tsr_test_rows(8, 6, st, ct);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, (int64_t[]){8, 6}, st, ct, NULL, NULL, &d));
  int dt, dy, dx, ds, v, times;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TSR_CHECK_OK(tsr_def_dim(f, "y", 8, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", 6, &dx));
  TSR_CHECK_OK(tsr_def_dim(f, "DateStrLen", 4, &ds));
  TSR_CHECK_OK(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v));
  TSR_CHECK_OK(tsr_def_var(f, "Times", TSR_CHAR, 2, (int[]){dt, ds}, &times));
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  TSR_CHECK_OK(tsr_enddef(f));
  float buf[8 * 6] = {0};
  long before = reductions;
  TSR_CHECK_OK(tsr_put(f, v, 0, d, buf));
  check_count(reductions - before, per_put, exact);
  before = reductions;
  TSR_CHECK_OK(tsr_put_global(f, times, 0, "0001"));
  check_count(reductions - before, per_put, exact);
  /* Refused on the last rank only: TSR_EBADID everywhere, the file stays good. */
  TSR_CHECK_RC(tsr_put(f, tsr_test_rank() == tsr_test_nranks() - 1 ? 7 : v, 1, d, buf),
               TSR_EBADID);
  TSR_CHECK_OK(tsr_put(f, v, 1, d, buf));
  TSR_CHECK_OK(tsr_close(&f));
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static void split(void) { count("strategy=split", 1, 1); }
static void split_safe(void) { count("strategy=split:safe_mode=1", 2, 1); }
static void serial(void) { count("strategy=serial", 2, 0); }

static const tsr_test_scenario SCENARIOS[] = {
    {"split", split, 0}, {"split_safe", split_safe, 0}, {"serial", serial, 0}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "put_agree", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
