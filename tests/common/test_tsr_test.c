/* The assertion header checks itself: a failure on one rank fails every rank
 * with the expression, both values and the rank printed; a skip exits 77 on
 * every rank; TSR_REQUIRE ends the job instead of hanging. Run by
 * selftest.sh, which checks the exit codes and messages. */
#include "tsr_fixtures.h"
#include "tsr_test.h"

static void pass(void) {
  TSR_CHECK(1 + 1 == 2);
  TSR_CHECK_EQ_INT(tsr_test_value(0, 0, 0, 1, 2), 9);
  TSR_CHECK_EQ_STR(tsr_errname(TSR_EHINT), "TSR_EHINT");
  TSR_CHECK_RC(tsr_finalize(NULL), TSR_OK);
  TSR_CHECK_NULL(NULL);
  int64_t st[2], ct[2], rows = 0;
  tsr_test_rows(10, 3, st, ct);
  MPI_Allreduce(&ct[0], &rows, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  TSR_CHECK_EQ_INT(rows, 10);
}

/* Only the last rank fails; every rank must exit 1. */
static void fail_one_rank(void) {
  int last = tsr_test_rank() == tsr_test_nranks() - 1;
  tsr_test_case("the last rank");
  TSR_CHECK_EQ_INT(last ? 41 : 42, 42);
  TSR_CHECK_RC(last ? TSR_EHINT : TSR_OK, TSR_OK);
}

static void skip(void) {
  TSR_CHECK(1);
  TSR_SKIP_IF_NOT_BUILT(TSR_ENOTBUILT, "strategy imaginary");
  TSR_CHECK(0); /* not reached */
}

static void require(void) {
  if (tsr_test_rank() == 0) TSR_REQUIRE(tsr_test_nranks() < 0);
  MPI_Barrier(MPI_COMM_WORLD); /* the other ranks wait here until the abort */
}

static const tsr_test_scenario SCENARIOS[] = {
    {"pass", pass, 0},
    {"fail-one-rank", fail_one_rank, 0},
    {"skip", skip, 0},
    {"require", require, 0},
    {"many-ranks", pass, 1000},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "tsr_test", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
