/* Reading with tsr_open / tsr_get: files written with the serial, direct and
 * aggregate strategies by rows are read back with each backend through other
 * decompositions (columns, columns with an empty rank, a 2-D grid with halo'd
 * memory, a grid with holes) and every value is compared exactly; halo points
 * and points outside the tile must stay untouched. Then the errors: each one
 * the documented code on every rank, handles NULL after a failed open.
 *
 * Scenarios: serial, direct, aggregate (a file written with that strategy,
 * read back with every built backend) and errors-netcdf, errors-pnetcdf (the
 * errors of that backend); each skipped when its strategy or backend is not
 * built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NZ = 3, NY = 10, NX = 13, NT = 2, HALO = 2, NSTR = 19 };
static const double SENTINEL = -4242.0; /* in every buffer point a read must not touch */

static const tsr_test_var VARS[] = {
    {"T", TSR_FLOAT, 3, 0, 1},   {"U", TSR_FLOAT, 3, 1, 1},    {"PS", TSR_DOUBLE, 2, 0, 1},
    {"MASK", TSR_INT, 2, 0, 0},  {"Times", TSR_CHAR, 0, 0, 1},
};
enum { NVARS = sizeof VARS / sizeof VARS[0], V_TIMES = 4 };

static int nranks, nranks_saved;
static const char *dir;
/* The files the errors scenarios open: a serial file, a split file. */
static char serial_path[512], split_path[512];

/* Decomposition kinds: ROWS is the one files are written with. */
typedef enum { K_ROWS, K_COLS, K_COLS_EMPTY, K_HALO, K_HOLES, K_NKINDS } kind;
static const char *kind_name[] = {"rows", "cols", "cols-empty", "halo", "holes"};

/* This rank's (y, x) tile and memory box of kind k over an x extent of nx. */
static void tile2(kind k, int64_t nx, int64_t st[2], int64_t ct[2], int64_t mst[2],
                  int64_t mct[2]) {
  int r = tsr_test_rank(), n = nranks, py = 1, px = 1, h = k == K_HALO ? HALO : 0;
  int64_t y0 = 0, ny = NY;
  if (k == K_ROWS) py = n;
  else if (k == K_COLS) px = n;
  else if (k == K_COLS_EMPTY) px = n > 1 ? n - 1 : 1;
  else {
    int dims[2] = {0, 0};
    MPI_Dims_create(n, 2, dims);
    py = dims[0];
    px = dims[1];
  }
  if (k == K_HOLES) { /* nobody owns row 0 nor the last column */
    y0 = 1;
    ny -= 1;
    nx -= 1;
  }
  if (r >= py * px) { /* the last rank of cols-empty owns nothing */
    st[0] = st[1] = ct[0] = ct[1] = 0;
  } else {
    tsr_test_split1(ny, py, r / px, &st[0], &ct[0]);
    tsr_test_split1(nx, px, r % px, &st[1], &ct[1]);
    st[0] += y0;
  }
  for (int i = 0; i < 2; i++) {
    mst[i] = st[i] - h; /* may reach beyond the domain: halos at the edge */
    mct[i] = ct[i] + 2 * h;
  }
}

/* One decomposition per variable shape: (z,y,x), (z,y,x+1), (y,x). */
typedef struct {
  tsr_decomp *d[3];
  int64_t mst[3][3], mct[3][3], st[3][3], ct[3][3];
} decomps;

static int shape_of(const tsr_test_var *v) { return v->nd == 2 ? 2 : v->stag ? 1 : 0; }

static int make_decomps(tsr_ctx *ctx, kind k, decomps *D) {
  int rc = 0;
  for (int m = 0; m < 3 && !rc; m++) {
    int64_t st[2], ct[2], mst[2], mct[2], nx = m == 1 ? NX + 1 : NX;
    tile2(k, nx, st, ct, mst, mct);
    int nd = m == 2 ? 2 : 3, o = nd - 2;
    int64_t g[3] = {NZ, NY, nx};
    if (nd == 3) {
      D->st[m][0] = D->mst[m][0] = 0;
      D->ct[m][0] = D->mct[m][0] = NZ;
    } else {
      g[0] = NY;
      g[1] = nx;
    }
    for (int i = 0; i < 2; i++) {
      D->st[m][o + i] = st[i];
      D->ct[m][o + i] = ct[i];
      D->mst[m][o + i] = mst[i];
      D->mct[m][o + i] = mct[i];
    }
    rc = tsr_decomp_box(ctx, nd, g, D->st[m], D->ct[m], D->mst[m], D->mct[m], &D->d[m]);
  }
  return rc;
}

static void free_decomps(decomps *D) {
  for (int m = 0; m < 3; m++) tsr_decomp_free(&D->d[m]);
}

static void times_of(int t, char out[NSTR + 1]) {
  snprintf(out, NSTR + 1, "2026-01-01_0%d:00:00", t);
}

static size_t esize(tsr_type t) { return tsr_type_size(t); }

static double get_elem(const void *buf, tsr_type t, int64_t q) {
  switch (t) {
  case TSR_FLOAT: return ((const float *)buf)[q];
  case TSR_DOUBLE: return ((const double *)buf)[q];
  case TSR_INT: return ((const int32_t *)buf)[q];
  case TSR_CHAR: return ((const char *)buf)[q];
  default: return 0; /* this test's variables use the four types above */
  }
}

static void set_elem(void *buf, tsr_type t, int64_t q, double x) {
  switch (t) {
  case TSR_FLOAT: ((float *)buf)[q] = (float)x; break;
  case TSR_DOUBLE: ((double *)buf)[q] = x; break;
  case TSR_INT: ((int32_t *)buf)[q] = (int32_t)x; break;
  case TSR_CHAR: ((char *)buf)[q] = (char)x; break;
  default: break;
  }
}

/* A buffer over the memory box of shape m: check values inside the tile
 * (fill = 1), the sentinel everywhere (fill = 0). */
static void *mem_buffer(const decomps *D, int m, int vi, int t, int fill, int64_t *n_out) {
  const tsr_test_var *v = &VARS[vi];
  int nd = m == 2 ? 2 : 3;
  const int64_t *mst = D->mst[m], *mct = D->mct[m];
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= mct[i];
  void *buf = malloc((size_t)(n > 0 ? n : 1) * esize(v->type));
  int64_t q = 0;
  for (int64_t kk = 0; kk < (nd == 3 ? mct[0] : 1); kk++)
    for (int64_t jj = 0; jj < mct[nd - 2]; jj++)
      for (int64_t ii = 0; ii < mct[nd - 1]; ii++, q++) {
        int64_t k = nd == 3 ? mst[0] + kk : 0, j = mst[nd - 2] + jj, i = mst[nd - 1] + ii;
        set_elem(buf, v->type, q, fill ? (double)tsr_test_value(vi, t, k, j, i) : SENTINEL);
      }
  *n_out = n;
  return buf;
}

static int write_file(tsr_ctx *ctx, const char *path, const char *hints, decomps *W) {
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) return rc;
  int vid[NVARS];
  tsr_test_def_wrf_schema(f, VARS, NVARS, NZ, NY, NX, vid);
  for (int v = 0; v < NVARS; v++) TSR_CHECK_EQ_INT(vid[v], v); /* ids are the VARS indices */
  float fill = -999.0f;
  TSR_CHECK_OK(tsr_put_att(f, 0, "_FillValue", TSR_FLOAT, 1, &fill));
  TSR_CHECK_OK(tsr_put_att(f, TSR_GLOBAL, "TITLE", TSR_CHAR, 7, "tessera"));
  if (strstr(hints, "split")) /* pieces are laid out for each variable's tile */
    for (int v = 0; v < NVARS; v++)
      if (VARS[v].nd > 0) TSR_CHECK_OK(tsr_def_var_decomp(f, v, W->d[shape_of(&VARS[v])]));
  TSR_CHECK_OK(tsr_enddef(f));
  for (int t = 0; t < NT; t++)
    for (int v = 0; v < NVARS; v++) {
      const tsr_test_var *s = &VARS[v];
      if (!s->record && t > 0) continue;
      if (s->nd == 0) {
        char times[NSTR + 1];
        times_of(t, times);
        TSR_CHECK_OK(tsr_put_global(f, v, t, times));
        continue;
      }
      int64_t n;
      int m = shape_of(s);
      void *buf = mem_buffer(W, m, v, t, 1, &n);
      TSR_CHECK_OK(tsr_put(f, v, t, W->d[m], buf));
      free(buf);
    }
  return tsr_close(&f);
}

/* Read every variable and frame through decomposition kind k and compare
 * every point of the memory box: tile points hold the check value, all
 * others the sentinel they had before the read. */
static void read_and_compare(tsr_file *f, const decomps *D, const char *label) {
  for (int v = 0; v < NVARS; v++) {
    const tsr_test_var *s = &VARS[v];
    if (s->nd == 0) continue;
    int m = shape_of(s), nd = m == 2 ? 2 : 3;
    for (int t = 0; t < (s->record ? NT : 1); t++) {
      int64_t n, bad = 0, q = 0;
      void *buf = mem_buffer(D, m, v, t, 0, &n);
      int empty = D->ct[m][nd - 1] * D->ct[m][nd - 2] == 0; /* NULL is allowed then */
      TSR_CHECK_OK(tsr_get(f, v, t, D->d[m], empty ? NULL : buf));
      const int64_t *mst = D->mst[m], *mct = D->mct[m], *st = D->st[m], *ct = D->ct[m];
      for (int64_t kk = 0; kk < (nd == 3 ? mct[0] : 1); kk++)
        for (int64_t jj = 0; jj < mct[nd - 2]; jj++)
          for (int64_t ii = 0; ii < mct[nd - 1]; ii++, q++) {
            int64_t k = nd == 3 ? mst[0] + kk : 0, j = mst[nd - 2] + jj, i = mst[nd - 1] + ii;
            int in = j >= st[nd - 2] && j < st[nd - 2] + ct[nd - 2] && i >= st[nd - 1] &&
                     i < st[nd - 1] + ct[nd - 1];
            double want = in ? (double)tsr_test_value(v, t, k, j, i) : SENTINEL;
            if (s->type == TSR_FLOAT) want = (float)want;
            double got = get_elem(buf, s->type, q);
            if (got != want && bad++ == 0)
              fprintf(stderr, "[rank %d] %s: %s[t=%d,k=%lld,j=%lld,i=%lld] = %g, want %g\n",
                      tsr_test_rank(), label, s->name, t, (long long)k, (long long)j, (long long)i, got,
                      want);
          }
      TSR_CHECK_EQ_INT(bad, 0);
      free(buf);
    }
  }
}

/* Replicated reads (d NULL): Times at each frame, and all of MASK. */
static void read_replicated(tsr_file *f, const char *label) {
  for (int t = 0; t < NT; t++) {
    char got[NSTR + 1] = {0}, want[NSTR + 1];
    times_of(t, want);
    TSR_CHECK_OK(tsr_get(f, V_TIMES, t, NULL, got));
    if (memcmp(got, want, NSTR) != 0)
      fprintf(stderr, "[rank %d] %s: Times[%d] = '%.19s', want '%s'\n", tsr_test_rank(), label, t, got,
              want);
    TSR_CHECK_EQ_INT(memcmp(got, want, NSTR), 0);
  }
  int32_t *mask = malloc(NY * NX * sizeof *mask);
  TSR_CHECK_OK(tsr_get(f, 3, 0, NULL, mask));
  int64_t bad = 0;
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) bad += mask[j * NX + i] != tsr_test_value(3, 0, 0, j, i);
  TSR_CHECK_EQ_INT(bad, 0);
  free(mask);
}

static void check_ids(tsr_file *f) {
  for (int v = 0; v < NVARS; v++) {
    int id = -1;
    TSR_CHECK_OK(tsr_inq_varid(f, VARS[v].name, &id));
    TSR_CHECK_EQ_INT(id, v);
  }
  int id;
  TSR_CHECK_RC(tsr_inq_varid(f, "nope", &id), TSR_ENAME);
}

static const char *const BACKENDS[] = {"netcdf", "pnetcdf"};
/* Read strategies (tsr_open's strategy=): every rank its own tile (none,
 * direct), one reader in slabs of 1 KiB (several per 3-D field), two
 * aggregators; and what tsr_file_strategy answers for each. */
static const char *const READS[] = {"", "strategy=direct", "strategy=serial:slab_bytes=1k",
                                    "strategy=aggregate:aggregators=2"};
static const char *const READ_NAMES[] = {"", "direct", "serial", "aggregate"};
enum { NREADS = sizeof READS / sizeof READS[0] };
static const char *const SPLIT_READS[] = {"strategy=split"}, *const SPLIT_NAMES[] = {"split"};

/* The file of @p strategy (written by rows), read back with every built
 * backend through every decomposition kind; for serial also with the default
 * backend. */
static void round_trip(tsr_ctx *ctx, const char *strategy) {
  decomps W = {0}, R[K_NKINDS] = {0};
  TSR_CHECK_OK(make_decomps(ctx, K_ROWS, &W));
  for (int k = 0; k < K_NKINDS; k++) TSR_CHECK_OK(make_decomps(ctx, (kind)k, &R[k]));
  char path[512], hints[64];
  snprintf(path, sizeof path, "%s/read_%s_np%d.nc", dir, strategy, nranks);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  tsr_test_case("write");
  int rc = write_file(ctx, path, hints, &W);
  if (rc == TSR_ENOTBUILT) { /* direct/aggregate need PnetCDF */
    tsr_test_skip("strategy %s is not built into this library", strategy);
    goto out;
  }
  TSR_CHECK_OK(rc);
  /* Split pieces read only as pieces (strategy=split), the others every way. */
  int split = strcmp(strategy, "split") == 0;
  const char *const *reads = split ? SPLIT_READS : READS, *const *names = split ? SPLIT_NAMES : READ_NAMES;
  size_t nreads = split ? 1 : NREADS;
  for (size_t rb = 0; rb < nreads * sizeof BACKENDS / sizeof BACKENDS[0]; rb++) {
    size_t b = rb / nreads, rs = rb % nreads;
    snprintf(hints, sizeof hints, "backend=%s%s%s", BACKENDS[b], reads[rs][0] ? ":" : "",
             reads[rs]);
    tsr_test_case("%s", hints);
    tsr_file *f = NULL;
    rc = tsr_open(ctx, path, hints, &f);
    if (rc == TSR_ENOTBUILT) { /* shown as the skip of errors-<backend> */
      if (tsr_test_rank() == 0)
        printf("read %s: backend %s is not built, not read with it\n", strategy, BACKENDS[b]);
      continue;
    }
    TSR_CHECK_OK(rc);
    if (rc) continue;
    check_ids(f);
    TSR_CHECK_EQ_STR(tsr_file_strategy(f), names[rs]);
    for (int k = 0; k < K_NKINDS; k++) {
      if (k == K_COLS_EMPTY && nranks == 1) continue;
      char label[160];
      snprintf(label, sizeof label, "%s/%s/%s/np%d", strategy, hints, kind_name[k], nranks);
      read_and_compare(f, &R[k], label);
    }
    read_replicated(f, path);
    TSR_CHECK_OK(tsr_close(&f));
    TSR_CHECK_NULL(f);
  }
  if (split && tsr_test_rank() == 0) {
    /* The pieces of every rank, read by rank 0 alone: the reader's rank
     * count is not the writer's. */
    tsr_test_case("split alone");
    tsr_ctx *one = NULL;
    MPI_Comm self = MPI_COMM_NULL;
    TSR_CHECK_OK(tsr_init(MPI_COMM_SELF, NULL, &one, &self));
    tsr_file *f = NULL;
    TSR_CHECK_OK(tsr_open(one, path, "strategy=split", &f));
    if (f) {
      decomps A = {0};
      nranks_saved = nranks;
      nranks = 1; /* decompositions of the one-rank context */
      TSR_CHECK_OK(make_decomps(one, K_HALO, &A));
      read_and_compare(f, &A, "split/alone/halo");
      read_replicated(f, "split/alone");
      free_decomps(&A);
      nranks = nranks_saved;
    }
    TSR_CHECK_OK(tsr_close(&f));
    TSR_CHECK_OK(tsr_finalize(&one));
    MPI_Comm_free(&self);
  }
  if (strcmp(strategy, "serial") == 0) {
    /* The default backend (no hint) reads too. */
    tsr_test_case("default");
    tsr_file *f = NULL;
    TSR_CHECK_OK(tsr_open(ctx, path, NULL, &f));
    if (f) read_and_compare(f, &R[K_HALO], "default/halo");
    TSR_CHECK_OK(tsr_close(&f));
  }
out:
  free_decomps(&W);
  for (int k = 0; k < K_NKINDS; k++) free_decomps(&R[k]);
}

/* Write a split file (one piece per rank) of one 2-D variable. */
static void write_split(tsr_ctx *ctx, const char *path) {
  int64_t g[2] = {NY, NX}, st[2], ct[2], mst[2], mct[2];
  tile2(K_ROWS, NX, st, ct, mst, mct);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, "strategy=split", &f));
  int dy, dx, v;
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "HGT", TSR_FLOAT, 2, (int[]){dy, dx}, &v));
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  /* Replicated, over a dimension the tiles cut: its pieces name the whole
   * extent south_north_t1 (a twin), which a reader folds back. */
  int vl;
  TSR_CHECK_OK(tsr_def_var(f, "LAT", TSR_INT, 1, &dy, &vl));
  TSR_CHECK_OK(tsr_enddef(f));
  float *buf = calloc((size_t)(ct[0] * ct[1] + 1), sizeof *buf);
  for (int64_t j = 0; j < ct[0]; j++)
    for (int64_t i = 0; i < ct[1]; i++) buf[j * ct[1] + i] = (float)((st[0] + j) * NX + i);
  TSR_CHECK_OK(tsr_put(f, v, 0, d, buf));
  int32_t lat[NY];
  for (int j = 0; j < NY; j++) lat[j] = 100 + j;
  TSR_CHECK_OK(tsr_put_global(f, vl, 0, lat));
  TSR_CHECK_OK(tsr_close(&f));
  free(buf);
  tsr_decomp_free(&d);
}

/* The split fixture read back as one file: dimensions folded, the tiled
 * and the replicated variable whole on every rank. */
static void read_split_fixture(tsr_ctx *ctx, const char *path) {
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_open(ctx, path, "strategy=split", &f));
  if (!f) return;
  int ndims = 0, nvars = 0, id;
  int64_t len = 0;
  TSR_CHECK_OK(tsr_inq(f, &ndims, &nvars, NULL, NULL));
  TSR_CHECK_EQ_INT(ndims, 2);
  TSR_CHECK_EQ_INT(nvars, 2);
  TSR_CHECK_OK(tsr_inq_dimid(f, "south_north", &id));
  TSR_CHECK_OK(tsr_inq_dim(f, id, NULL, &len));
  TSR_CHECK_EQ_INT(len, NY);
  float hgt[NY * NX];
  int32_t lat[NY];
  int64_t bad = 0;
  TSR_CHECK_OK(tsr_get(f, 0, 0, NULL, hgt));
  for (int g = 0; g < NY * NX; g++) bad += hgt[g] != (float)g;
  TSR_CHECK_OK(tsr_get(f, 1, 0, NULL, lat));
  for (int j = 0; j < NY; j++) bad += lat[j] != 100 + j;
  TSR_CHECK_EQ_INT(bad, 0);
  TSR_CHECK_OK(tsr_close(&f));
}

static void open_errors(tsr_ctx *ctx, const char *backend, const char *read) {
  char hints[96], path[600];
  snprintf(hints, sizeof hints, "backend=%s%s%s", backend, read[0] ? ":" : "", read);
  tsr_file *f = (tsr_file *)&f; /* must come back NULL */

  /* A file that does not exist. */
  tsr_test_path(path, sizeof path, "read_missing");
  TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), TSR_EACCES);
  TSR_CHECK_NULL(f);

  /* Bytes that are no NetCDF file, and an empty file. */
  tsr_test_path(path, sizeof path, "read_garbage");
  if (tsr_test_rank() == 0) {
    FILE *fp = fopen(path, "wb");
    for (int i = 0; i < 64; i++) fputs("this is not a NetCDF file\n", fp);
    fclose(fp);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), TSR_EFORMAT);
  TSR_CHECK_NULL(f);
  tsr_test_path(path, sizeof path, "read_empty");
  if (tsr_test_rank() == 0) fclose(fopen(path, "wb"));
  MPI_Barrier(MPI_COMM_WORLD);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), TSR_EFORMAT);
  TSR_CHECK_NULL(f);

  /* A piece of a split file is not the file. */
  snprintf(path, sizeof path, "%s.0000", split_path);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), TSR_EFORMAT);
  TSR_CHECK_NULL(f);

  /* Bad arguments. */
  snprintf(path, sizeof path, "%s", serial_path);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, "", hints, &f), TSR_EINVAL);
  TSR_CHECK_NULL(f);
  TSR_CHECK_RC(tsr_open(ctx, path, hints, NULL), TSR_EINVAL);
  TSR_CHECK_RC(tsr_open(NULL, path, hints, &f), TSR_ESTATE);
  /* A bad hint on one rank only: every rank fails, before anything opens. */
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, tsr_test_rank() == nranks - 1 ? "backend=nosuch" : hints, &f), TSR_EHINT);
  TSR_CHECK_NULL(f);
  /* Strategies that cannot read, and a serial reader that is no rank. */
  const char *no_read[] = {"strategy=servers", "strategy=serial:writer=99",
                           "strategy=aggregate:aggregators=2:stride=99"};
  for (int i = 0; i < (nranks > 1 ? 3 : 2); i++) { /* one rank: aggregators are clamped to 1 */
    char h[160];
    snprintf(h, sizeof h, "backend=%s:%s", backend, no_read[i]);
    f = (tsr_file *)&f;
    TSR_CHECK_RC(tsr_open(ctx, path, h, &f), TSR_EHINT);
    TSR_CHECK_NULL(f);
    TSR_CHECK_EQ_INT(strstr(tsr_last_error(), i == 0 ? "strategy=servers" : i == 1 ? "writer=99" : "99") != NULL, 1);
  }
  /* strategy=split on a file that has no pieces: piece 0 is missing. */
  char h[160];
  snprintf(h, sizeof h, "backend=%s:strategy=split", backend);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, h, &f), TSR_EACCES);
  TSR_CHECK_NULL(f);
  TSR_CHECK_EQ_INT(strstr(tsr_last_error(), ".0000") != NULL, 1); /* the message names the piece */
  /* and on a piece given for the base path: '<piece>.0000' is missing too. */
  char piece[600];
  snprintf(piece, sizeof piece, "%s.0000", split_path);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, piece, h, &f), TSR_EACCES);
  TSR_CHECK_NULL(f);
  /* A path missing on one rank only: every rank fails. Only where each rank
   * opens on its own: MPI-IO requires the same name on every rank, and with
   * strategy=serial or aggregate only the readers look at the path. */
  int every_rank_opens = !read[0] || strcmp(read, "strategy=direct") == 0;
  if (nranks > 1 && strcmp(backend, "netcdf") == 0 && every_rank_opens) {
    char bad[700];
    snprintf(bad, sizeof bad, "%s%s", path, tsr_test_rank() == nranks - 1 ? ".nothere" : "");
    f = (tsr_file *)&f;
    TSR_CHECK_RC(tsr_open(ctx, bad, hints, &f), TSR_EACCES);
    TSR_CHECK_NULL(f);
  }
}

static void get_errors(tsr_ctx *ctx, const char *backend, const char *read) {
  char hints[96], path[512];
  snprintf(hints, sizeof hints, "backend=%s%s%s", backend, read[0] ? ":" : "", read);
  snprintf(path, sizeof path, "%s", serial_path);
  decomps D = {0};
  TSR_CHECK_OK(make_decomps(ctx, K_COLS, &D));
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_open(ctx, path, hints, &f));
  if (!f) {
    free_decomps(&D);
    return;
  }
  int64_t n;
  float *buf = mem_buffer(&D, 0, 0, 0, 0, &n);
  double *wide = malloc((size_t)(NZ * NY * (NX + 1)) * sizeof *wide);
  int empty = D.ct[0][1] * D.ct[0][2] == 0;

  /* Frames beyond the records, or negative; fixed variables ignore the frame. */
  TSR_CHECK_RC(tsr_get(f, 0, NT, D.d[0], buf), TSR_ERANGE);
  TSR_CHECK_RC(tsr_get(f, 0, -1, D.d[0], buf), TSR_ERANGE);
  TSR_CHECK_RC(tsr_get(f, V_TIMES, NT, NULL, wide), TSR_ERANGE);
  int32_t *mbuf = (int32_t *)mem_buffer(&D, 2, 3, 0, 0, &n);
  TSR_CHECK_OK(tsr_get(f, 3, 99, D.d[2], empty ? NULL : mbuf));
  free(mbuf);
  /* A frame out of range on one rank only. */
  TSR_CHECK_RC(tsr_get(f, 0, tsr_test_rank() == nranks - 1 ? NT : 0, D.d[0], buf), TSR_ERANGE);
  /* A bad variable id on one rank only (all ranks when there is one). */
  TSR_CHECK_RC(tsr_get(f, tsr_test_rank() == 0 ? 99 : 0, 0, D.d[0], buf), TSR_EBADID);
  TSR_CHECK_RC(tsr_get(f, -1, 0, D.d[0], buf), TSR_EBADID);
  /* A decomposition of another shape: 2-D for a 3-D variable, x for x_stag. */
  TSR_CHECK_RC(tsr_get(f, 0, 0, D.d[2], buf), TSR_ESHAPE);
  TSR_CHECK_RC(tsr_get(f, 1, 0, D.d[0], buf), TSR_ESHAPE);
  /* NULL buffer with a tile (on rank 0, which always has one here). */
  TSR_CHECK_RC(tsr_get(f, 0, 0, D.d[0], tsr_test_rank() == 0 ? NULL : buf), TSR_EINVAL);
  /* Writing to a file opened for reading. */
  int id;
  TSR_CHECK_RC(tsr_put(f, 0, 0, D.d[0], buf), TSR_EMODE);
  TSR_CHECK_RC(tsr_put_global(f, V_TIMES, 0, "2026-01-01_00:00:00"), TSR_EMODE);
  TSR_CHECK_RC(tsr_def_dim(f, "extra", 3, &id), TSR_EMODE);
  TSR_CHECK_RC(tsr_def_var(f, "extra", TSR_INT, 0, NULL, &id), TSR_EMODE);
  TSR_CHECK_RC(tsr_put_att(f, TSR_GLOBAL, "extra", TSR_CHAR, 1, "x"), TSR_EMODE);
  TSR_CHECK_RC(tsr_enddef(f), TSR_EMODE);
  TSR_CHECK_RC(tsr_flush(f), TSR_EMODE);
  /* After all that the file still reads. */
  TSR_CHECK_OK(tsr_get(f, 0, 1, D.d[0], empty ? NULL : buf));
  TSR_CHECK_EQ_INT(tsr_backend_error(f, NULL, NULL) != 0, 1); /* the last error is remembered */
  TSR_CHECK_OK(tsr_close(&f));
  TSR_CHECK_NULL(f);

  /* Reading from a file open for writing. */
  tsr_test_path(path, sizeof path, "read_writing");
  TSR_CHECK_OK(tsr_create(ctx, path, "strategy=serial", &f));
  int dz, dy, dx, v;
  TSR_CHECK_OK(tsr_def_dim(f, "bottom_top", NZ, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 3, (int[]){dz, dy, dx}, &v));
  TSR_CHECK_OK(tsr_enddef(f));
  TSR_CHECK_RC(tsr_get(f, v, 0, D.d[0], buf), TSR_EMODE);
  TSR_CHECK_OK(tsr_close(&f));

  /* Backends that cannot read, and unknown ones. */
  snprintf(path, sizeof path, "%s", serial_path);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, "backend=null", &f), TSR_ENOTBUILT);
  TSR_CHECK_NULL(f);
  f = (tsr_file *)&f;
  TSR_CHECK_RC(tsr_open(ctx, path, "backend=nosuch", &f), TSR_EHINT);
  TSR_CHECK_NULL(f);
  TSR_CHECK_RC(tsr_get(NULL, 0, 0, D.d[0], buf), TSR_EINVAL);
  free(buf);
  free(wide);
  free_decomps(&D);
}

static tsr_ctx *start(MPI_Comm *model) {
  nranks = tsr_test_nranks();
  dir = tsr_test_arg(0, ".");
  tsr_ctx *ctx = NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, model));
  return ctx;
}

static void stop(tsr_ctx *ctx, MPI_Comm *model) {
  TSR_CHECK_OK(tsr_finalize(&ctx));
  if (*model != MPI_COMM_NULL) MPI_Comm_free(model);
}

static void one_strategy(const char *strategy) {
  MPI_Comm model = MPI_COMM_NULL;
  tsr_ctx *ctx = start(&model);
  round_trip(ctx, strategy);
  stop(ctx, &model);
}

static void serial(void) { one_strategy("serial"); }
static void direct(void) { one_strategy("direct"); }
static void aggregate(void) { one_strategy("aggregate"); }
static void split(void) {
  one_strategy("split");
  MPI_Comm model = MPI_COMM_NULL;
  tsr_ctx *ctx = start(&model);
  tsr_test_path(split_path, sizeof split_path, "read_split_twin");
  tsr_test_case("twin dimensions");
  write_split(ctx, split_path);
  read_split_fixture(ctx, split_path);
  stop(ctx, &model);
}

/* The open and get errors of one backend, on a serial file and a split file
 * of this scenario's own. */
static void backend_errors(const char *backend) {
  MPI_Comm model = MPI_COMM_NULL;
  tsr_ctx *ctx = start(&model);
  tsr_test_path(serial_path, sizeof serial_path, "read_serial");
  tsr_test_path(split_path, sizeof split_path, "read_split");
  tsr_test_case("fixtures");
  decomps W = {0};
  TSR_CHECK_OK(make_decomps(ctx, K_ROWS, &W));
  TSR_CHECK_OK(write_file(ctx, serial_path, "strategy=serial", &W));
  free_decomps(&W);
  write_split(ctx, split_path);
  char hints[64];
  snprintf(hints, sizeof hints, "backend=%s", backend);
  tsr_file *f = NULL;
  int rc = tsr_open(ctx, serial_path, hints, &f);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("backend %s is not built into this library", backend);
  } else {
    TSR_CHECK_OK(rc);
    TSR_CHECK_OK(tsr_close(&f));
    /* The same errors through every read strategy. */
    for (int i = 0; i < NREADS; i++) {
      tsr_test_case("open %s", READS[i]);
      open_errors(ctx, backend, READS[i]);
      tsr_test_case("get %s", READS[i]);
      get_errors(ctx, backend, READS[i]);
    }
  }
  tsr_test_case("%s", "");
  stop(ctx, &model);
}

static void errors_netcdf(void) { backend_errors("netcdf"); }
static void errors_pnetcdf(void) { backend_errors("pnetcdf"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"serial", serial, 0},
    {"direct", direct, 0},
    {"aggregate", aggregate, 0},
    {"split", split, 0},
    {"errors-netcdf", errors_netcdf, 0},
    {"errors-pnetcdf", errors_pnetcdf, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "read", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
