/* Fields for the I/O server tests: a small WRF-like file (record and fixed
 * variables, float/double/int/char, a staggered dimension, replicated
 * variables), written from tiles of several decomposition kinds, and read
 * back with NetCDF to compare every value exactly. */
#ifndef SRV_FIELDS_H
#define SRV_FIELDS_H

#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

/* These programs take no scenario table (tsr_test_main does not fit their
 * argument lists): start MPI and set what tsr_test_main would, then agree on
 * the verdict and end MPI. */
static inline void srv_test_init(int *argc, char ***argv, const char *program) {
  MPI_Init(argc, argv);
  tsr_test_.program = program;
  MPI_Comm_rank(MPI_COMM_WORLD, &tsr_test_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &tsr_test_.nranks);
}

static inline int srv_test_finish(const char *name) {
  int code = tsr_test_verdict(name);
  MPI_Finalize();
  return code;
}

enum { NZ = 3, NY = 10, NX = 13, HALO = 2 };

typedef enum { K_EVEN, K_UNEVEN, K_HOLES, K_HALO, K_ZERO, K_NKINDS } kind;
static const char *kind_name[] = {"even", "uneven", "holes", "halo", "zero"};

static const tsr_test_var VARS[] = {
    {"T", TSR_FLOAT, 3, 0, 1},   {"U", TSR_FLOAT, 3, 1, 1},  {"PS", TSR_DOUBLE, 2, 0, 1},
    {"MASK", TSR_INT, 2, 0, 0},  {"ZNU", TSR_FLOAT, 0, 0, 1}, {"Times", TSR_CHAR, 0, 0, 1},
};
enum { NVARS = sizeof VARS / sizeof VARS[0] };
static const float T_FILL = -999.0f;

typedef struct {
  int rank, size; /* in the model communicator */
  kind k;
  tsr_decomp *d[3];          /* (y,x), (z,y,x), (z,y,x+1) */
  int64_t mst[3][3], mct[3][3];
} decomps;

/* Split n points into parts: balanced, or skewed (first half twice as big). */
static inline void split1(int64_t n, int parts, int p, int skew, int64_t *start, int64_t *count) {
  int64_t w = 0, before = 0;
  for (int q = 0; q < parts; q++) {
    int64_t wq = skew && q < parts / 2 ? 2 : 1;
    w += wq;
    if (q < p) before += wq;
  }
  int64_t wp = skew && p < parts / 2 ? 2 : 1;
  *start = n * before / w;
  *count = n * (before + wp) / w - *start;
}

static inline void tile2(const decomps *D, int64_t nx, int64_t st[2], int64_t ct[2]) {
  int n = D->size, r = D->rank;
  if (D->k == K_ZERO && n > 1) n--; /* the last model rank owns nothing */
  if (r >= n) {
    st[0] = st[1] = ct[0] = ct[1] = 0;
    return;
  }
  int dims[2] = {0, 0};
  MPI_Dims_create(n, 2, dims);
  int64_t ny = NY, y0 = 0;
  if (D->k == K_HOLES) { /* nobody owns row 0 nor the last column */
    ny--;
    y0 = 1;
    nx--;
  }
  int skew = D->k == K_UNEVEN || D->k == K_HALO;
  split1(ny, dims[0], r / dims[1], skew, &st[0], &ct[0]);
  split1(nx, dims[1], r % dims[1], skew, &st[1], &ct[1]);
  st[0] += y0;
}

static inline int make_decomps(tsr_ctx *ctx, MPI_Comm model, kind k, decomps *D) {
  memset(D, 0, sizeof *D);
  MPI_Comm_rank(model, &D->rank);
  MPI_Comm_size(model, &D->size);
  D->k = k;
  int64_t st[2], ct[2], sst[2], sct[2];
  tile2(D, NX, st, ct);
  tile2(D, NX + 1, sst, sct); /* staggered: the last in x owns one more */
  int64_t g[3][3] = {{NY, NX}, {NZ, NY, NX}, {NZ, NY, NX + 1}};
  int64_t s[3][3] = {{st[0], st[1]}, {0, st[0], st[1]}, {0, sst[0], sst[1]}};
  int64_t c[3][3] = {{ct[0], ct[1]}, {NZ, ct[0], ct[1]}, {NZ, sct[0], sct[1]}};
  int nds[3] = {2, 3, 3}, rc = 0;
  for (int m = 0; m < 3 && !rc; m++) {
    for (int i = 0; i < nds[m]; i++) {
      int h = k == K_HALO && i >= nds[m] - 2 ? HALO : 0;
      D->mst[m][i] = s[m][i] - h;
      D->mct[m][i] = c[m][i] + 2 * h;
    }
    rc = tsr_decomp_box(ctx, nds[m], g[m], s[m], c[m], D->mst[m], D->mct[m], &D->d[m]);
  }
  return rc;
}

static inline void free_decomps(decomps *D) {
  for (int m = 0; m < 3; m++) tsr_decomp_free(&D->d[m]);
}

/* Memory over the memory box holding the check values; halo points garbage. */
static inline void *fill_mem(const tsr_test_var *v, int vi, int t, const decomps *D, int m) {
  int nd = v->nd;
  const int64_t *mst = D->mst[m], *mct = D->mct[m];
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= mct[i];
  size_t es = v->type == TSR_DOUBLE ? 8 : 4;
  char *buf = malloc((size_t)(n > 0 ? n : 1) * es);
  int64_t idx = 0, nk = nd == 3 ? mct[0] : 1;
  for (int64_t kk = 0; kk < nk; kk++)
    for (int64_t jj = 0; jj < mct[nd - 2]; jj++)
      for (int64_t ii = 0; ii < mct[nd - 1]; ii++, idx++) {
        int64_t k = nd == 3 ? mst[0] + kk : 0, j = mst[nd - 2] + jj, i = mst[nd - 1] + ii;
        int inside = j >= 0 && i >= 0 && j < NY && i < (v->stag ? NX + 1 : NX);
        int64_t val = inside ? tsr_test_value(vi, t, k, j, i) : -7777;
        if (v->type == TSR_FLOAT) ((float *)buf)[idx] = (float)val;
        else if (v->type == TSR_DOUBLE) ((double *)buf)[idx] = (double)val;
        else ((int32_t *)buf)[idx] = (int32_t)val;
      }
  return buf;
}

typedef struct {
  tsr_file *f;
  int vid[NVARS];
  int t0; /* check-value frame of the file's frame 0 */
} wfile;

static inline int open_file(tsr_ctx *ctx, const char *path, const char *hints, const decomps *D, int t0,
                     wfile *w) {
  w->t0 = t0;
  int rc = tsr_create(ctx, path, hints, &w->f);
  if (rc) return rc;
  tsr_test_def_wrf_schema(w->f, VARS, NVARS, NZ, NY, NX, w->vid);
  TSR_CHECK_OK(tsr_put_att(w->f, w->vid[0], "_FillValue", TSR_FLOAT, 1, &T_FILL));
  TSR_CHECK_OK(tsr_put_att(w->f, TSR_GLOBAL, "TITLE", TSR_CHAR, 9, "tessera ."));
  rc = tsr_enddef(w->f);
  (void)D;
  return rc;
}

static inline void times_of(int t, char out[20]) {
  memcpy(out, "2026-01-01_00:00:00", 20);
  out[11] = (char)('0' + (t / 10) % 10);
  out[12] = (char)('0' + t % 10);
}

static inline int put_frame(wfile *w, const decomps *D, int frame) {
  int t = w->t0 + frame, rc = 0;
  for (int v = 0; v < NVARS && !rc; v++) {
    const tsr_test_var *s = &VARS[v];
    if (!s->record && frame > 0) continue;
    if (s->nd == 0) {
      char times[20];
      float znu[NZ];
      times_of(t, times);
      for (int k = 0; k < NZ; k++) znu[k] = (float)tsr_test_value(v, t, k, 0, 0);
      rc = tsr_put_global(w->f, w->vid[v], frame, s->type == TSR_CHAR ? (void *)times : (void *)znu);
      continue;
    }
    int m = s->nd == 2 ? 0 : s->stag ? 2 : 1;
    void *buf = fill_mem(s, v, t, D, m);
    rc = tsr_put(w->f, w->vid[v], frame, D->d[m], buf);
    free(buf); /* tsr_put returns when the buffer may be reused */
  }
  return rc;
}

/* Expected value of a point: the check value, or the fill value where no
 * rank owns the point. */
static inline double expected(const tsr_test_var *s, int v, int64_t t, int64_t k, int64_t j, int64_t i,
                       kind kd) {
  if (kd == K_HOLES && s->nd > 0 && (j == 0 || i == (s->stag ? NX : NX - 1))) {
    if (v == 0) return T_FILL;
    if (s->type == TSR_FLOAT) return (double)9.9692099683868690e+36f;
    if (s->type == TSR_DOUBLE) return 9.9692099683868690e+36;
    return -2147483647;
  }
  if (s->type == TSR_FLOAT) return (double)(float)tsr_test_value(v, t, k, j, i);
  return (double)tsr_test_value(v, t, k, j, i);
}

/* Read one whole variable as doubles (chars as their codes); NULL on failure. */
static inline double *read_var(int nc, const tsr_test_var *s, size_t *n_out) {
  int vid, ndims, dimids[4];
  if (nc_inq_varid(nc, s->name, &vid) != NC_NOERR) return NULL;
  nc_inq_varndims(nc, vid, &ndims);
  nc_inq_vardimid(nc, vid, dimids);
  size_t cnt[4], st[4] = {0, 0, 0, 0}, tot = 1;
  for (int i = 0; i < ndims; i++) {
    nc_inq_dimlen(nc, dimids[i], &cnt[i]);
    tot *= cnt[i];
  }
  double *out = malloc((tot ? tot : 1) * sizeof *out);
  if (s->type == TSR_CHAR) {
    char *c = malloc(tot ? tot : 1);
    nc_get_vara_text(nc, vid, st, cnt, c);
    for (size_t q = 0; q < tot; q++) out[q] = c[q];
    free(c);
  } else {
    nc_get_vara_double(nc, vid, st, cnt, out);
  }
  *n_out = tot;
  return out;
}

/* Verify a file against the check function (nt frames from t0) and, when
 * @p ref is given, value by value against a file another strategy wrote. */
static inline void verify(const char *path, const char *ref, int nt, int t0, kind kd, const char *label) {
  int nc, rnc = -1;
  if (nc_open(path, NC_NOWRITE, &nc) != NC_NOERR) {
    fprintf(stderr, "%s: cannot open %s\n", label, path);
    TSR_CHECK_EQ_INT(0, 1);
    return;
  }
  if (ref && nc_open(ref, NC_NOWRITE, &rnc) != NC_NOERR) {
    fprintf(stderr, "%s: cannot open reference %s\n", label, ref);
    TSR_CHECK_EQ_INT(0, 1);
  }
  for (int v = 0; v < NVARS; v++) {
    const tsr_test_var *s = &VARS[v];
    size_t n = 0, rn = 0;
    double *got = read_var(nc, s, &n);
    int64_t nx = s->stag ? NX + 1 : NX, nk = s->nd == 3 ? NZ : 1;
    int64_t per = s->nd == 0 ? (s->type == TSR_CHAR ? 19 : NZ) : nk * NY * nx;
    int64_t frames = s->record ? nt : 1, bad = 0;
    if (!got || (int64_t)n != frames * per) {
      fprintf(stderr, "%s: %s has %zu values, want %lld\n", label, s->name, n,
              (long long)(frames * per));
      TSR_CHECK_EQ_INT(0, 1);
      free(got);
      continue;
    }
    int64_t q = 0;
    for (int64_t fr = 0; fr < frames; fr++) {
      int64_t t = t0 + fr;
      for (int64_t p = 0; p < per; p++, q++) {
        double want;
        if (s->nd == 0) {
          char times[20];
          times_of((int)t, times);
          want = s->type == TSR_CHAR ? (double)times[p] : (double)(float)tsr_test_value(v, t, p, 0, 0);
        } else {
          int64_t i = p % nx, j = (p / nx) % NY, k = p / (nx * NY);
          want = expected(s, v, t, k, j, i, kd);
        }
        if (got[q] != want && bad++ == 0)
          fprintf(stderr, "%s: %s[%lld] (frame %lld) = %g, want %g\n", label, s->name,
                  (long long)p, (long long)fr, got[q], want);
      }
    }
    TSR_CHECK_EQ_INT(bad, 0);
    if (rnc >= 0) {
      double *rv = read_var(rnc, s, &rn);
      int64_t diff = 0;
      for (size_t i = 0; rv && i < n && rn == n; i++) diff += rv[i] != got[i];
      if (!rv || rn != n || diff)
        fprintf(stderr, "%s: %s differs from %s (%lld values)\n", label, s->name, ref,
                (long long)diff);
      TSR_CHECK_EQ_INT(rv && rn == n && diff == 0, 1);
      free(rv);
    }
    free(got);
  }
  nc_close(nc);
  if (rnc >= 0) nc_close(rnc);
}

#endif
