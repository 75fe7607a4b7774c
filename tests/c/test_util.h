/* Legacy names for tests/formats and tests/servers/test_servers_transport.c,
 * which have not moved to tests/common yet:
 * the checks are tsr_test.h's own (TSR_CHECK_OK ...), and the shared
 * fixtures come from tsr_fixtures.h. New tests include tsr_test.h (and
 * tsr_fixtures.h) directly; delete this file when tests/formats does. */
#ifndef TSR_TEST_UTIL_H
#define TSR_TEST_UTIL_H

#include "../common/tsr_fixtures.h"
#include "../common/tsr_test.h"

#define tu_rank (tsr_test_.rank)
#define tu_value tsr_test_value
#define tu_def_wrf_schema tsr_test_def_wrf_schema
typedef tsr_test_var varspec;

/* A program without scenarios: start MPI here, agree on the verdict and end
 * MPI in tu_finish. */
static inline void tu_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &tsr_test_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &tsr_test_.nranks);
}

static inline int tu_finish(const char *name) {
  int code = tsr_test_verdict(name);
  MPI_Finalize();
  return code;
}

#endif
