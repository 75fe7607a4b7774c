/* Fixtures shared by the C tests, so no test keeps its own copy: the check
 * value of the design guide, balanced 1-D splits and row decompositions, a
 * per-(program, scenario, rank count) scratch path, and the small WRF-like
 * schema the strategy, server and read tests write. Checks go through
 * tsr_test.h. */
#ifndef TSR_FIXTURES_H
#define TSR_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tsr_test.h"

/* The check value of the design guide, exact in a float. */
static inline int64_t tsr_test_value(int64_t v, int64_t t, int64_t k, int64_t j, int64_t i) {
  return (i + 7 * j + 131 * k + 8191 * t + 524287 * v) % 16777216;
}

/* Part @p p of @p parts of n points, balanced: [n*p/parts, n*(p+1)/parts). */
static inline void tsr_test_split1(int64_t n, int parts, int p, int64_t *start, int64_t *count) {
  *start = n * p / parts;
  *count = n * (p + 1) / parts - *start;
}

/* This rank's rows of a (ny, nx) field split by rows over all ranks. */
static inline void tsr_test_rows(int64_t ny, int64_t nx, int64_t st[2], int64_t ct[2]) {
  tsr_test_split1(ny, tsr_test_nranks(), tsr_test_rank(), &st[0], &ct[0]);
  st[1] = 0;
  ct[1] = nx;
}

/* "<dir>/<stem>_<scenario>_np<N>.nc" with dir the scenario's first argument
 * (default "."): a name no other (scenario, rank count) test writes, so CTest
 * may run them side by side. */
static inline void tsr_test_path(char *buf, size_t size, const char *stem) {
  snprintf(buf, size, "%s/%s_%s_np%d.nc", tsr_test_arg(0, "."), stem,
           tsr_test_.scenario ? tsr_test_.scenario : "all", tsr_test_nranks());
}

/* 1 when both files exist and hold the same bytes (cmp). */
static inline int tsr_test_same_bytes(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb) same = 0;
    if (ca == EOF || cb == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

/* A variable of the WRF-like schema. */
typedef struct {
  const char *name;
  tsr_type type;
  int nd; /* 3 = (z, y, x), 2 = (y, x), 0 = replicated: Times (DateStrLen), else (z) */
  int stag, record;
} tsr_test_var;

/* Define dims Time, DateStrLen (19), bottom_top, south_north, west_east and
 * west_east_stag and the @p nvars variables on @p f (in define mode); their
 * ids go to vid[]. Every call is checked. */
static inline void tsr_test_def_wrf_schema(tsr_file *f, const tsr_test_var *vars, int nvars,
                                           int64_t nz, int64_t ny, int64_t nx, int vid[]) {
  int dT, dz, dy, dx, dxs, dstr, ids[4];
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  TSR_CHECK_OK(tsr_def_dim(f, "DateStrLen", 19, &dstr));
  TSR_CHECK_OK(tsr_def_dim(f, "bottom_top", nz, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", ny, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", nx, &dx));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east_stag", nx + 1, &dxs));
  for (int v = 0; v < nvars; v++) {
    const tsr_test_var *s = &vars[v];
    int n = 0;
    if (s->record) ids[n++] = dT;
    if (s->nd == 3) ids[n++] = dz;
    if (s->nd >= 2) {
      ids[n++] = dy;
      ids[n++] = s->stag ? dxs : dx;
    }
    if (s->nd == 0) ids[n++] = strcmp(s->name, "Times") == 0 ? dstr : dz;
    TSR_CHECK_OK(tsr_def_var(f, s->name, s->type, n, ids, &vid[v]));
  }
}

#endif
