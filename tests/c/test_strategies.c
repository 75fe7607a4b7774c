/* One test body over every strategy x decomposition kind: write a small
 * WRF-like file (record and fixed variables, float/double/int/char, 2-D and
 * 3-D, a staggered dimension, halo'd memory), read every value back with
 * NetCDF and compare exactly, then check that all strategies wrote the same
 * data. Points no rank owns must hold the variable's fill value.
 *
 * One scenario per strategy (serial, direct, aggregate, split), each over its
 * variants and every decomposition kind; a strategy that is not built is
 * skipped (exit 77), not passed. */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NZ = 3, NY = 10, NX = 13, NT = 2, HALO = 2 };

typedef enum { D_EVEN, D_UNEVEN, D_ROW, D_COL, D_ZERO, D_HOLES, D_HALO, D_NKINDS } dkind;
static const char *dkind_name[] = {"even", "uneven", "1xN", "Nx1", "zero", "holes", "halo"};

static const tsr_test_var VARS[] = {
    {"T", TSR_FLOAT, 3, 0, 1},    {"U", TSR_FLOAT, 3, 1, 1},   {"PS", TSR_DOUBLE, 2, 0, 1},
    {"MASK", TSR_INT, 2, 0, 0},   {"HGT", TSR_FLOAT, 2, 0, 0}, {"ZNU", TSR_FLOAT, 0, 0, 1},
    {"Times", TSR_CHAR, 0, 0, 1},
};
enum { NVARS = sizeof VARS / sizeof VARS[0] };
static const float T_FILL = -999.0f;

static int nranks;

/* Split n points into parts: balanced, or skewed (first parts double). */
static void split1(int64_t n, int parts, int p, int skew, int64_t *start, int64_t *count) {
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

/* This rank's 2-D tile (y, x) for a kind, over an x extent of nx. */
static void tile2(dkind k, int64_t nx, int64_t st[2], int64_t ct[2]) {
  int r = tsr_test_rank(), n = nranks, px = 1, py = 1;
  if (k == D_ROW) px = n;
  else if (k == D_COL) py = n;
  else if (k == D_ZERO && n > 1) n--; /* the last rank owns nothing */
  if (k != D_ROW && k != D_COL) {
    int dims[2] = {0, 0};
    MPI_Dims_create(n, 2, dims);
    py = dims[0];
    px = dims[1];
  }
  if (k == D_ZERO && r >= n) {
    st[0] = st[1] = 0;
    ct[0] = ct[1] = 0;
    return;
  }
  int skew = k == D_UNEVEN;
  int64_t ny = NY;
  int64_t y0 = 0;
  if (k == D_HOLES) { /* nobody owns row 0 nor the last column */
    ny = NY - 1;
    y0 = 1;
    nx -= 1;
  }
  split1(ny, py, r / px, skew, &st[0], &ct[0]);
  split1(nx, px, r % px, skew, &st[1], &ct[1]);
  st[0] += y0;
}

typedef struct {
  tsr_decomp *d2, *d3, *d3s; /* (y,x), (z,y,x), (z,y,x+1) */
  int64_t mst[3][3], mct[3][3]; /* memory boxes of d2, d3, d3s */
} decomps;

static int make_decomps(tsr_ctx *ctx, dkind k, decomps *D) {
  int64_t st[2], ct[2], sst[2], sct[2];
  tile2(k, NX, st, ct);
  tile2(k, NX + 1, sst, sct); /* staggered: its own split; last in x gets one more */
  int64_t g2[2] = {NY, NX}, g3[3] = {NZ, NY, NX}, g3s[3] = {NZ, NY, NX + 1};
  int64_t s3[3] = {0, st[0], st[1]}, c3[3] = {NZ, ct[0], ct[1]};
  int64_t s3s[3] = {0, sst[0], sst[1]}, c3s[3] = {NZ, sct[0], sct[1]};
  const int64_t *starts[3] = {st, s3, s3s}, *counts[3] = {ct, c3, c3s};
  int nds[3] = {2, 3, 3};
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < nds[m]; i++) {
      int h = k == D_HALO && i >= nds[m] - 2 ? HALO : 0;
      D->mst[m][i] = starts[m][i] - h; /* may be negative: halos beyond the edge */
      D->mct[m][i] = counts[m][i] + 2 * h;
    }
  int rc = tsr_decomp_box(ctx, 2, g2, st, ct, D->mst[0], D->mct[0], &D->d2);
  if (!rc) rc = tsr_decomp_box(ctx, 3, g3, s3, c3, D->mst[1], D->mct[1], &D->d3);
  if (!rc) rc = tsr_decomp_box(ctx, 3, g3s, s3s, c3s, D->mst[2], D->mct[2], &D->d3s);
  return rc;
}

/* Fill a memory array (over the memory box) with the check values; halo
 * points get garbage so a write that reads them shows. */
static void *fill_mem(const tsr_test_var *v, int vi, int t, const tsr_decomp *d, const int64_t *mst,
                      const int64_t *mct, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= mct[i];
  size_t es = v->type == TSR_DOUBLE ? 8 : 4;
  char *buf = malloc((size_t)(n > 0 ? n : 1) * es);
  int64_t idx = 0;
  int64_t nk = nd == 3 ? mct[0] : 1;
  for (int64_t kk = 0; kk < nk; kk++)
    for (int64_t jj = 0; jj < mct[nd - 2]; jj++)
      for (int64_t ii = 0; ii < mct[nd - 1]; ii++, idx++) {
        int64_t k = nd == 3 ? mst[0] + kk : 0, j = mst[nd - 2] + jj, i = mst[nd - 1] + ii;
        int inside = j >= 0 && i >= 0 && j < (nd == 3 ? NY : NY) && i < (v->stag ? NX + 1 : NX);
        int64_t val = inside ? tsr_test_value(vi, t, k, j, i) : -7777;
        if (v->type == TSR_FLOAT) ((float *)buf)[idx] = (float)val;
        else if (v->type == TSR_DOUBLE) ((double *)buf)[idx] = (double)val;
        else ((int32_t *)buf)[idx] = (int32_t)val;
      }
  (void)d;
  return buf;
}

static int write_file(tsr_ctx *ctx, const char *path, const char *hints, decomps *D) {
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) return rc;
  int vid[NVARS];
  tsr_test_def_wrf_schema(f, VARS, NVARS, NZ, NY, NX, vid);
  for (int v = 0; v < NVARS; v++) {
    const tsr_test_var *s = &VARS[v];
    tsr_decomp *d = s->nd == 3 ? (s->stag ? D->d3s : D->d3) : s->nd == 2 ? D->d2 : NULL;
    if (d) TSR_CHECK_OK(tsr_def_var_decomp(f, vid[v], d));
  }
  TSR_CHECK_OK(tsr_put_att(f, vid[0], "_FillValue", TSR_FLOAT, 1, &T_FILL));
  TSR_CHECK_OK(tsr_put_att(f, vid[0], "units", TSR_CHAR, 1, "K"));
  int ft = 104;
  TSR_CHECK_OK(tsr_put_att(f, vid[1], "FieldType", TSR_INT, 1, &ft));
  double dx_m = 3000.0;
  TSR_CHECK_OK(tsr_put_att(f, TSR_GLOBAL, "DX", TSR_DOUBLE, 1, &dx_m));
  TSR_CHECK_OK(tsr_put_att(f, TSR_GLOBAL, "TITLE", TSR_CHAR, 9, "tessera ."));
  rc = tsr_enddef(f);
  TSR_CHECK_OK(rc);
  for (int t = 0; t < NT && !rc; t++)
    for (int v = 0; v < NVARS; v++) {
      const tsr_test_var *s = &VARS[v];
      if (!s->record && t > 0) continue;
      if (s->nd == 0) {
        char times[20];
        float znu[NZ];
        snprintf(times, sizeof times, "2026-01-01_0%d:00:00", t);
        for (int k = 0; k < NZ; k++) znu[k] = (float)tsr_test_value(v, t, k, 0, 0);
        TSR_CHECK_OK(tsr_put_global(f, vid[v], t, s->type == TSR_CHAR ? (void *)times : (void *)znu));
        continue;
      }
      int m = s->nd == 2 ? 0 : s->stag ? 2 : 1;
      tsr_decomp *d = m == 0 ? D->d2 : m == 1 ? D->d3 : D->d3s;
      void *buf = fill_mem(s, v, t, d, D->mst[m], D->mct[m], s->nd);
      TSR_CHECK_OK(tsr_put(f, vid[v], t, d, buf));
      free(buf); /* tsr_put returns when the buffer may be reused */
    }
  return tsr_close(&f);
}

/* Read a whole variable of a file (or assemble it from split pieces) as
 * doubles; char variables as their bytes. */
static double *read_var(const char *path, int split, const tsr_test_var *s, int64_t *n_out) {
  int64_t nk = s->nd == 3 ? NZ : 1, nx = s->stag ? NX + 1 : NX;
  int64_t per = s->nd == 0 ? (strcmp(s->name, "Times") == 0 ? 19 : NZ) : nk * NY * nx;
  int64_t nt = s->record ? NT : 1, n = nt * per;
  double *out = malloc((size_t)n * sizeof *out);
  /* Never written: -12345 in a whole file; in split pieces, points no rank
   * owns are absent, and a joiner fills them with the fill value. */
  double unset = -12345;
  if (split && s->nd > 0)
    unset = s->type == TSR_FLOAT ? (strcmp(s->name, "T") == 0 ? T_FILL : (double)9.9692099683868690e+36f)
            : s->type == TSR_DOUBLE ? 9.9692099683868690e+36 : -2147483647;
  for (int64_t q = 0; q < n; q++) out[q] = unset;
  int pieces = split ? nranks : 1;
  for (int p = 0; p < pieces; p++) {
    char name[600];
    if (split) snprintf(name, sizeof name, "%s.%04d", path, p);
    else snprintf(name, sizeof name, "%s", path);
    int nc, vid;
    if (nc_open(name, NC_NOWRITE, &nc) != NC_NOERR) {
      TSR_CHECK_EQ_INT(1, 0 * fprintf(stderr, "cannot open %s\n", name));
      continue;
    }
    if (nc_inq_varid(nc, s->name, &vid) != NC_NOERR) { /* empty tile: left out */
      nc_close(nc);
      continue;
    }
    int gs[3] = {(int)nk, NY, (int)nx}, ts[3] = {0, 0, 0}, nd = s->nd;
    size_t cnt[4], st[4] = {0, 0, 0, 0};
    int o = 0;
    if (split && nd > 0) nc_get_att_int(nc, vid, "tessera_tile_start", nd == 3 ? ts : ts + 1);
    int ndims;
    int dimids[4];
    nc_inq_varndims(nc, vid, &ndims);
    nc_inq_vardimid(nc, vid, dimids);
    for (int i = 0; i < ndims; i++) nc_inq_dimlen(nc, dimids[i], &cnt[i]);
    if (s->record) cnt[0] = NT, o = 1;
    size_t tot = 1;
    for (int i = 0; i < ndims; i++) tot *= cnt[i];
    double *tmp = malloc(tot * sizeof *tmp);
    if (s->type == TSR_CHAR) {
      char *c = malloc(tot);
      nc_get_vara_text(nc, vid, st, cnt, c);
      for (size_t q = 0; q < tot; q++) tmp[q] = c[q];
      free(c);
    } else {
      nc_get_vara_double(nc, vid, st, cnt, tmp);
    }
    /* scatter into the global array */
    int64_t lk = nd == 3 ? (int64_t)cnt[o] : 1, lj = nd >= 2 ? (int64_t)cnt[ndims - 2] : 1,
            li = nd >= 2 ? (int64_t)cnt[ndims - 1] : (int64_t)cnt[ndims - 1];
    int64_t q = 0;
    for (int64_t t = 0; t < nt; t++)
      for (int64_t k = 0; k < lk; k++)
        for (int64_t j = 0; j < lj; j++)
          for (int64_t i = 0; i < li; i++, q++) {
            int64_t gidx = nd == 0 ? t * per + i
                                   : t * per + ((k + ts[0]) * gs[1] + (j + ts[1])) * gs[2] + i + ts[2];
            out[gidx] = tmp[q];
          }
    free(tmp);
    nc_close(nc);
  }
  *n_out = n;
  return out;
}

/* Expected value of a point: check value, or the fill value where no rank
 * owns the point (the "holes" kind). */
static double expected(const tsr_test_var *s, int v, int64_t t, int64_t k, int64_t j, int64_t i,
                       dkind kind) {
  if (kind == D_HOLES && s->nd > 0 && (j == 0 || i == (s->stag ? NX : NX - 1))) {
    if (v == 0) return T_FILL;
    if (s->type == TSR_FLOAT) return (double)9.9692099683868690e+36f;
    if (s->type == TSR_DOUBLE) return 9.9692099683868690e+36;
    return -2147483647;
  }
  return (double)tsr_test_value(v, t, k, j, i);
}

static void verify(const char *path, int split, dkind kind, const char *label) {
  for (int v = 0; v < NVARS; v++) {
    const tsr_test_var *s = &VARS[v];
    int64_t n;
    double *got = read_var(path, split, s, &n);
    int64_t nx = s->stag ? NX + 1 : NX, nk = s->nd == 3 ? NZ : 1, bad = 0, q = 0;
    for (int64_t t = 0; t < (s->record ? NT : 1); t++) {
      if (s->nd == 0) {
        for (int64_t i = 0; i < (s->type == TSR_CHAR ? 19 : NZ); i++, q++) {
          double want = s->type == TSR_CHAR ? (double)("2026-01-01_00:00:00"[i] + (i == 12 ? t : 0))
                                            : (double)tsr_test_value(v, t, i, 0, 0);
          if (got[q] != want && bad++ == 0)
            fprintf(stderr, "%s: %s[t=%ld,%ld] = %g, want %g\n", label, s->name, (long)t, (long)i,
                    got[q], want);
        }
        continue;
      }
      for (int64_t k = 0; k < nk; k++)
        for (int64_t j = 0; j < NY; j++)
          for (int64_t i = 0; i < nx; i++, q++) {
            double want = expected(s, v, t, k, j, i, kind);
            if (s->type == TSR_FLOAT) want = (float)want;
            if (got[q] != want && bad++ == 0)
              fprintf(stderr, "%s: %s[t=%ld,k=%ld,j=%ld,i=%ld] = %g, want %g\n", label, s->name,
                      (long)t, (long)k, (long)j, (long)i, got[q], want);
          }
    }
    TSR_CHECK_EQ_INT(bad, 0);
    free(got);
  }
}

/* Strategies under test, with hints that force their interesting paths:
 * several slabs for serial, buffer drains for direct, several writers. A
 * variant that needs more ranks than the run has is left out of that run. */
typedef struct {
  const char *strategy, *label, *hints;
  int split, min_ranks;
} variant;
static const variant VARIANTS[] = {
    {"serial", "serial", "strategy=serial:slab_bytes=1k", 0, 1},
    {"serial", "serial-lastwriter", "strategy=serial:writer=LAST", 0, 1},
    {"direct", "direct", "strategy=direct:buffer_bytes=2k", 0, 1},
    {"direct", "direct-cdf5", "strategy=direct:format=cdf5", 0, 1},
    {"aggregate", "aggregate", "strategy=aggregate", 0, 1},
    {"aggregate", "aggregate-2", "strategy=aggregate:aggregators=2:romio_cb_write=enable", 0, 2},
    {"aggregate", "aggregate-a2a", "strategy=aggregate:aggregators=3:exchange=alltoall", 0, 3},
    {"aggregate", "aggregate-stride", "strategy=aggregate:aggregators=2:stride=2", 0, 3},
    {"split", "split", "strategy=split", 1, 1},
};
enum { NVARIANTS = sizeof VARIANTS / sizeof VARIANTS[0] };

/* Every variant of @p strategy over every decomposition kind. */
static void run_strategy(const char *strategy) {
  nranks = tsr_test_nranks();
  const char *dir = tsr_test_arg(0, ".");
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  int not_built = 0;
  for (int k = 0; k < D_NKINDS && !not_built; k++) {
    if (k == D_ZERO && nranks == 1) continue;
    decomps D = {0};
    TSR_CHECK_OK(make_decomps(ctx, (dkind)k, &D));
    for (int s = 0; s < NVARIANTS && !not_built; s++) {
      const variant *S = &VARIANTS[s];
      if (strcmp(S->strategy, strategy) != 0 || nranks < S->min_ranks) continue;
      char hints[256], path[512], label[128];
      snprintf(hints, sizeof hints, "%s", S->hints);
      char *last = strstr(hints, "LAST");
      if (last) snprintf(last, (size_t)(hints + sizeof hints - last), "%d", nranks - 1);
      snprintf(path, sizeof path, "%s/strat_%s_%s_np%d.nc", dir, S->label, dkind_name[k], nranks);
      snprintf(label, sizeof label, "%s/%s/np%d", S->label, dkind_name[k], nranks);
      tsr_test_case("%s/%s", S->label, dkind_name[k]);
      int rc = write_file(ctx, path, hints, &D);
      if (rc == TSR_ENOTBUILT) { /* agreed by every rank */
        not_built = 1;
        break;
      }
      TSR_CHECK_RC(rc, 0);
      if (tsr_test_rank() == 0 && rc == 0) verify(path, S->split, (dkind)k, label);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    tsr_decomp_free(&D.d2);
    tsr_decomp_free(&D.d3);
    tsr_decomp_free(&D.d3s);
  }
  tsr_test_case("%s", "");
  TSR_CHECK_OK(tsr_finalize(&ctx));
  if (model != MPI_COMM_NULL) MPI_Comm_free(&model);
  if (not_built) tsr_test_skip("strategy %s is not built into this library", strategy);
}

static void serial(void) { run_strategy("serial"); }
static void direct(void) { run_strategy("direct"); }
static void aggregate(void) { run_strategy("aggregate"); }
static void split(void) { run_strategy("split"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"serial", serial, 0}, {"direct", direct, 0}, {"aggregate", aggregate, 0}, {"split", split, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "strategies", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
