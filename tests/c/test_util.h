/* Test helpers: assertions that print the expression, both values and the
 * rank, and a verdict every rank agrees on, so one failing rank fails the test
 * everywhere without hanging. */
#ifndef TSR_TEST_UTIL_H
#define TSR_TEST_UTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tessera.h"

static int tu_pass, tu_fail, tu_rank;

#define TU_EQ(a, b)                                                                         \
  do {                                                                                      \
    long long tu_a = (long long)(a), tu_b = (long long)(b);                                 \
    if (tu_a == tu_b) tu_pass++;                                                            \
    else {                                                                                  \
      tu_fail++;                                                                            \
      fprintf(stderr, "[rank %d] %s:%d: %s == %s failed: %lld != %lld\n", tu_rank, __FILE__, \
              __LINE__, #a, #b, tu_a, tu_b);                                                \
    }                                                                                       \
  } while (0)

/* A Tessera call that must return the code given, with its name on failure. */
#define TU_RC(call, want)                                                                    \
  do {                                                                                       \
    int tu_rc = (call);                                                                      \
    if (tu_rc == (want)) tu_pass++;                                                          \
    else {                                                                                   \
      tu_fail++;                                                                             \
      fprintf(stderr, "[rank %d] %s:%d: %s returned %s (%d), expected %s\n", tu_rank,         \
              __FILE__, __LINE__, #call, tsr_errname(tu_rc), tu_rc, tsr_errname(want));        \
    }                                                                                        \
  } while (0)

#define TU_OK(call) TU_RC(call, 0)

static inline void tu_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank);
}

/* Agree on the verdict, print the closing line on rank 0, finalize. */
static inline int tu_finish(const char *name) {
  int f = tu_fail, p = tu_pass, F = 0, P = 0;
  MPI_Allreduce(&f, &F, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&p, &P, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (tu_rank == 0) printf("%s: %d passed, %d failed\n", name, P, F);
  MPI_Finalize();
  return F ? 1 : 0;
}

/* The check value of the design guide, exact in a float. */
static inline int64_t tu_value(int64_t v, int64_t t, int64_t k, int64_t j, int64_t i) {
  return (i + 7 * j + 131 * k + 8191 * t + 524287 * v) % 16777216;
}

#endif
