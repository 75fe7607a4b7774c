/* Test helpers: assertions that print the expression, both values and the
 * rank, and a verdict every rank agrees on, so one failing rank fails the test
 * everywhere without hanging. */
#ifndef TSR_TEST_UTIL_H
#define TSR_TEST_UTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A small WRF-like schema shared by the strategy, server and read tests:
 * dims Time, DateStrLen (19), bottom_top, south_north, west_east and
 * west_east_stag, and the variables a test lists. */
typedef struct {
  const char *name;
  tsr_type type;
  int nd; /* 3 = (z, y, x), 2 = (y, x), 0 = replicated: Times (DateStrLen), else (z) */
  int stag, record;
} varspec;

/* Define the dims and @p nvars variables on @p f (in define mode); their ids go
 * to vid[]. Every call is checked with TU_OK. */
static inline void tu_def_wrf_schema(tsr_file *f, const varspec *vars, int nvars, int64_t nz,
                                     int64_t ny, int64_t nx, int vid[]) {
  int dT, dz, dy, dx, dxs, dstr, ids[4];
  TU_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  TU_OK(tsr_def_dim(f, "DateStrLen", 19, &dstr));
  TU_OK(tsr_def_dim(f, "bottom_top", nz, &dz));
  TU_OK(tsr_def_dim(f, "south_north", ny, &dy));
  TU_OK(tsr_def_dim(f, "west_east", nx, &dx));
  TU_OK(tsr_def_dim(f, "west_east_stag", nx + 1, &dxs));
  for (int v = 0; v < nvars; v++) {
    const varspec *s = &vars[v];
    int n = 0;
    if (s->record) ids[n++] = dT;
    if (s->nd == 3) ids[n++] = dz;
    if (s->nd >= 2) {
      ids[n++] = dy;
      ids[n++] = s->stag ? dxs : dx;
    }
    if (s->nd == 0) ids[n++] = strcmp(s->name, "Times") == 0 ? dstr : dz;
    TU_OK(tsr_def_var(f, s->name, s->type, n, ids, &vid[v]));
  }
}

#endif
