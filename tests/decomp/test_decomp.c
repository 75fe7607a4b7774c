/* Any decomposition, any memory order (issue 13): every strategy writes a 3-D
 * record variable and a 2-D fixed one through one kind of decomposition,
 * and the result must read back exactly, through the whole frame and through
 * the same decomposition, and (where no point is left unowned) be
 * byte-identical to the file written through the plain box decomposition.
 *
 * Usage: test_decomp <scenario> <scratch dir>
 *   scenario <strategy>.<kind>: strategy serial | direct | direct_deferred
 *     (put_mode=deferred) | aggregate | split | servers; kind box | boxes | map_inorder | map_shuffled | map_holes |
 *     empty | xzy | map_cells (every column, scattered). servers_par |
 *     servers_rma | servers_conc: servers with a parallel backend, transport=rma,
 *     concentrators; the _float ones (servers_float, servers_par_float) with
 *     precision=float. A flat kind (elements that form no box on some rank)
 *     under split must fail with TSR_EDECOMP on every rank.
 *   scenario errors.overlap | errors.range: the same TSR_EDECOMP everywhere.
 * Exits 77 when the strategy is not built (or servers at one rank).
 * TSR_READ_HINTS (e.g. backend=netcdf) chooses how the files are read back. */
#include <unistd.h>

#include "../c/test_util.h"
#include "../common/tsr_fixtures.h" /* tsr_test_same_bytes */

enum { NZ = 3, NY = 7, NX = 5 };
static const float FILL_T = -999.0f;
static const int FILL_H = -1;

typedef enum { K_BOX, K_BOXES, K_INORDER, K_SHUFFLED, K_HOLES, K_EMPTY, K_XZY, K_CELLS, K_N } kind;
static const char *kind_name[K_N] = {"box",   "boxes", "map_inorder", "map_shuffled",
                                     "map_holes", "empty", "xzy", "map_cells"};

static int P, me;

static uint64_t mix(uint64_t x) { /* splitmix64: a seeded, portable hash */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static int slab_of(int y) {
  for (int r = 0; r < P; r++)
    if (y < (int64_t)NY * (r + 1) / P) return r;
  return P - 1;
}

/* Owner of column (y, x) under a kind, or -1 for nobody. */
static int owner(kind k, int y, int x) {
  uint64_t h = mix((uint64_t)(y * NX + x) * 31u + 7u);
  switch (k) {
  case K_BOXES: return y % P;
  case K_HOLES: {
    int o = (int)(h % (uint64_t)(P + 1));
    return o == P ? -1 : o;
  }
  case K_EMPTY: return P > 1 ? (int)(h % (uint64_t)(P - 1)) : 0;
  case K_CELLS: return (int)(h % (uint64_t)P); /* MPAS-like: every column, dealt at random */
  default: return slab_of(y);
  }
}

/* Kinds whose elements form no box on some rank (row-interleaved boxes from
 * two ranks on; scattered columns when more than one rank holds columns). */
static int flat_kind(kind k) {
  return ((k == K_BOXES || k == K_CELLS) && P > 1) || k == K_HOLES || (k == K_EMPTY && P > 2);
}

static float tval(int64_t t, int64_t g) { return (float)((g * 7 + t * 100003) % 16777216); }
static int hval(int64_t g) { return (int)(g * 13 % 1000003); }

/* One variable's decomposition and, for each buffer position, the global
 * flat index it holds (-1: nothing). */
typedef struct {
  tsr_decomp *d;
  int64_t n, *idx;
} dvar;

static void shuffle(int64_t *a, int64_t n, uint64_t seed) {
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(mix(seed + (uint64_t)i) % (uint64_t)(i + 1)), t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/* nd 3: (z, y, x); nd 2: (y, x). */
static int make(tsr_ctx *ctx, kind k, int nd, dvar *v) {
  int64_t g3[3] = {NZ, NY, NX}, g2[2] = {NY, NX};
  const int64_t *gs = nd == 3 ? g3 : g2;
  int nz = nd == 3 ? NZ : 1;
  int ylo = (int)((int64_t)NY * me / P), yhi = (int)((int64_t)NY * (me + 1) / P);
  v->idx = malloc(sizeof(int64_t) * (size_t)(NZ + 2) * (NY + 2) * (NX + 2) * 2);
  v->n = 0;
  if (k == K_BOX || k == K_INORDER || k == K_SHUFFLED) {
    for (int z = 0; z < nz; z++)
      for (int y = ylo; y < yhi; y++)
        for (int x = 0; x < NX; x++) v->idx[v->n++] = ((int64_t)z * NY + y) * NX + x;
    if (k == K_BOX) {
      int64_t s3[3] = {0, ylo, 0}, c3[3] = {NZ, yhi - ylo, NX};
      return tsr_decomp_box(ctx, nd, gs, nd == 3 ? s3 : s3 + 1, nd == 3 ? c3 : c3 + 1, NULL, NULL,
                            &v->d);
    }
    if (k == K_SHUFFLED) shuffle(v->idx, v->n, 1234u + (uint64_t)me);
    return tsr_decomp_map(ctx, nd, gs, v->n, v->idx, &v->d);
  }
  if (k == K_BOXES) { /* my rows, last first: one box per row */
    int64_t st[NY * 3], ct[NY * 3];
    int nb = 0;
    for (int y = NY - 1; y >= 0; y--) {
      if (owner(k, y, 0) != me) continue;
      int64_t s3[3] = {0, y, 0}, c3[3] = {NZ, 1, NX};
      memcpy(st + nb * nd, nd == 3 ? s3 : s3 + 1, sizeof(int64_t) * (size_t)nd);
      memcpy(ct + nb * nd, nd == 3 ? c3 : c3 + 1, sizeof(int64_t) * (size_t)nd);
      nb++;
      for (int z = 0; z < nz; z++)
        for (int x = 0; x < NX; x++) v->idx[v->n++] = ((int64_t)z * NY + y) * NX + x;
    }
    return tsr_decomp_boxes(ctx, nd, gs, nb, st, ct, &v->d);
  }
  if (k == K_HOLES || k == K_EMPTY || k == K_CELLS) { /* MPAS-like: my columns scattered, levels fastest */
    int64_t cols[NY * NX], nc = 0;
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++)
        if (owner(k, y, x) == me) cols[nc++] = (int64_t)y * NX + x;
    shuffle(cols, nc, 99u + (uint64_t)me);
    for (int64_t c = 0; c < nc; c++) {
      if (c % 3 == 1) v->idx[v->n++] = -1; /* a buffer position left out */
      for (int z = 0; z < nz; z++) v->idx[v->n++] = (int64_t)z * NY * NX + cols[c];
    }
    return tsr_decomp_map(ctx, nd, gs, v->n, v->idx, &v->d);
  }
  /* K_XZY: memory [y][z][x] over a halo'd box (nd 3); the 2-D field keeps
   * file order with the same halo. */
  int mylo = ylo - 1, myn = yhi - ylo + 2, mxlo = -1, mxn = NX + 2;
  for (int my = 0; my < myn; my++)
    for (int z = 0; z < nz; z++)
      for (int mx = 0; mx < mxn; mx++) {
        int y = mylo + my, x = mxlo + mx;
        int in = y >= ylo && y < yhi && x >= 0 && x < NX;
        v->idx[v->n++] = in ? ((int64_t)z * NY + y) * NX + x : -1;
      }
  int64_t s3[3] = {0, ylo, 0}, c3[3] = {NZ, yhi - ylo, NX};
  int64_t ms3[3] = {0, mylo, mxlo}, mc3[3] = {NZ, myn, mxn};
  int order[3] = {1, 0, 2};
  if (nd == 3) return tsr_decomp_box_ordered(ctx, 3, gs, s3, c3, ms3, mc3, order, &v->d);
  return tsr_decomp_box_ordered(ctx, 2, gs, s3 + 1, c3 + 1, ms3 + 1, mc3 + 1, NULL, &v->d);
}

static int owned(kind k, int64_t g2) { return owner(k, (int)(g2 / NX), (int)(g2 % NX)) >= 0; }

/* Write T (2 frames) and H through the decompositions; returns the first error. */
static int write_file(tsr_ctx *ctx, const char *path, const char *hints, dvar *t, dvar *h) {
  tsr_file *f;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) return rc;
  int dT, dz, dy, dx, vt, vh, ids[4];
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  TSR_CHECK_OK(tsr_def_dim(f, "bottom_top", NZ, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dx));
  ids[0] = dT, ids[1] = dz, ids[2] = dy, ids[3] = dx;
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 4, ids, &vt));
  TSR_CHECK_OK(tsr_def_var(f, "H", TSR_INT, 2, ids + 2, &vh));
  TSR_CHECK_OK(tsr_put_att(f, vt, "_FillValue", TSR_FLOAT, 1, &FILL_T));
  TSR_CHECK_OK(tsr_put_att(f, vh, "_FillValue", TSR_INT, 1, &FILL_H));
  int r1 = tsr_def_var_decomp(f, vt, t->d);
  int r2 = tsr_def_var_decomp(f, vh, h->d);
  if (r1 || r2) {
    tsr_close(&f);
    return r1 ? r1 : r2;
  }
  TSR_CHECK_OK(tsr_enddef(f));
  /* A buffer per frame: with put_mode=deferred the caller keeps each until close. */
  float *bt = malloc(sizeof(float) * (size_t)(2 * t->n + 1));
  int *bh = malloc(sizeof(int) * (size_t)(h->n + 1));
  /* Frame 1 from double memory (tsr_put_typed converts, each value exactly
   * the float it came from): maps and other orders must reach the file as
   * they do through tsr_put. */
  double *bd = malloc(sizeof(double) * (size_t)(t->n + 1));
  for (int64_t fr = 0; fr < 2 && !rc; fr++) {
    float *b = bt + fr * t->n;
    for (int64_t i = 0; i < t->n; i++) b[i] = t->idx[i] >= 0 ? tval(fr, t->idx[i]) : 12345.f;
    for (int64_t i = 0; fr == 1 && i < t->n; i++) bd[i] = b[i];
    rc = fr == 0 ? tsr_put(f, vt, fr, NULL, b) : tsr_put_typed(f, vt, fr, NULL, TSR_DOUBLE, bd);
  }
  for (int64_t i = 0; i < h->n; i++) bh[i] = h->idx[i] >= 0 ? hval(h->idx[i]) : 12345;
  if (!rc) rc = tsr_put(f, vh, 0, NULL, bh);
  int crc = tsr_close(&f);
  free(bt);
  free(bd);
  free(bh);
  return rc ? rc : crc;
}

/* Whole frames against the expected values (fill where nobody owns). */
static void verify_whole(tsr_file *f, kind k) {
  float *all = malloc(sizeof(float) * NZ * NY * NX);
  int *allh = malloc(sizeof(int) * NY * NX);
  int bad = 0;
  for (int64_t fr = 0; fr < 2; fr++) {
    TSR_CHECK_OK(tsr_get(f, 0, fr, NULL, all));
    for (int64_t g = 0; g < NZ * NY * NX; g++)
      bad += all[g] != (owned(k, g % (NY * NX)) ? tval(fr, g) : FILL_T);
  }
  TSR_CHECK_OK(tsr_get(f, 1, 0, NULL, allh));
  for (int64_t g = 0; g < NY * NX; g++) bad += allh[g] != (owned(k, g) ? hval(g) : FILL_H);
  TSR_CHECK_EQ_INT(bad, 0);
  free(all);
  free(allh);
}

/* Read back: whole frames, then through the decomposition itself, with
 * read hints @p rh. */
static void verify_with(tsr_ctx *ctx, const char *path, const char *rh, kind k, dvar *t,
                        dvar *h) {
  tsr_file *f;
  TSR_CHECK_OK(tsr_open(ctx, path, rh, &f));
  verify_whole(f, k);
  int bad = 0;
  float *bt = malloc(sizeof(float) * (size_t)(t->n + 1));
  int *bh = malloc(sizeof(int) * (size_t)(h->n + 1));
  bad = 0;
  for (int64_t fr = 0; fr < 2; fr++) {
    for (int64_t i = 0; i < t->n; i++) bt[i] = -5.f;
    TSR_CHECK_OK(tsr_get(f, 0, fr, t->d, bt));
    for (int64_t i = 0; i < t->n; i++) bad += bt[i] != (t->idx[i] >= 0 ? tval(fr, t->idx[i]) : -5.f);
  }
  for (int64_t i = 0; i < h->n; i++) bh[i] = -5;
  TSR_CHECK_OK(tsr_get(f, 1, 0, h->d, bh));
  for (int64_t i = 0; i < h->n; i++) bad += bh[i] != (h->idx[i] >= 0 ? hval(h->idx[i]) : -5);
  TSR_CHECK_EQ_INT(bad, 0);
  TSR_CHECK_OK(tsr_close(&f));
  free(bt);
  free(bh);
}

/* Whole frames of the pieces of a split file, read by rank 0 alone: the
 * reader's rank count need not be the writer's. */
static void verify_alone(const char *path, kind k) {
  if (me != 0) return;
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_SELF, NULL, &ctx, &model));
  tsr_file *f;
  TSR_CHECK_OK(tsr_open(ctx, path, "strategy=split", &f));
  verify_whole(f, k);
  TSR_CHECK_OK(tsr_close(&f));
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

/* Every read strategy reads what every write strategy wrote (issue 16):
 * each rank its own tile (TSR_READ_HINTS, the default, direct), one reader
 * in slabs (first rank, last rank), two aggregators (next to each other,
 * and two ranks apart where there are enough ranks). */
static void verify(tsr_ctx *ctx, const char *path, kind k, dvar *t, dvar *h) {
  char reads[7][64];
  snprintf(reads[0], sizeof reads[0], "%s", getenv("TSR_READ_HINTS") ? getenv("TSR_READ_HINTS") : "");
  snprintf(reads[1], sizeof reads[1], "strategy=direct");
  snprintf(reads[2], sizeof reads[2], "strategy=serial:slab_bytes=1k");
  snprintf(reads[3], sizeof reads[3], "strategy=serial:writer=%d", P - 1);
  snprintf(reads[4], sizeof reads[4], "strategy=aggregate:aggregators=2");
  snprintf(reads[5], sizeof reads[5], "strategy=aggregate:aggregators=2:stride=%d", P > 2 ? 2 : 1);
  snprintf(reads[6], sizeof reads[6], "strategy=aggregate:aggregators=%d:backend=netcdf", P);
  for (int i = 0; i < 7; i++) verify_with(ctx, path, reads[i], k, t, h);
}

static void free_dvar(dvar *v) {
  tsr_decomp_free(&v->d);
  free(v->idx);
}

static int run_strategy(const char *strat, kind k, const char *dir) {
  char hints[256] = "", path[512], ref[512];
  int servers = strncmp(strat, "servers", 7) == 0, split = strcmp(strat, "split") == 0;
  /* servers: a serial backend's root assembles; servers_par: two tasks write
   * a parallel backend; servers_rma and servers_conc: the other transport
   * and concentrators carry the same messages. */
  int par = strncmp(strat, "servers_par", 11) == 0;
  const char *variant = par                                  ? "io_tasks=2"
                        : strcmp(strat, "servers_rma") == 0  ? "io_tasks=1:transport=rma"
                        : strcmp(strat, "servers_conc") == 0 ? "io_tasks=1:concentrators=2"
                                                             : "io_tasks=1";
  /* Every task needs a client (two tasks from four ranks on), and
   * concentrators=2 two model ranks. */
  if (servers && P < (par ? 4 : strcmp(strat, "servers_conc") == 0 ? 3 : 2))
    return 77;
  if (servers) snprintf(hints, sizeof hints, "strategy=servers:io_groups=1:%s", variant);
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, servers ? hints : NULL, &ctx, &model));
  if (model == MPI_COMM_NULL) return 0; /* a server: it served until the model finalized */
  MPI_Comm_size(model, &P);
  MPI_Comm_rank(model, &me);
  if (strcmp(strat, "direct_deferred") == 0) /* the backend writes from the caller's array later */
    snprintf(hints, sizeof hints, "strategy=direct:put_mode=deferred");
  else
    snprintf(hints, sizeof hints, "strategy=%s%s%s", servers ? "servers" : strat,
             strcmp(strat, "aggregate") == 0 && P > 1 ? ":aggregators=2" : "",
             /* frame 1's doubles become floats on the model side */
             strstr(strat, "_float") ? ":precision=float" : "");
  snprintf(path, sizeof path, "%s/%s_%s_np%d.nc", dir, strat, kind_name[k], P);
  snprintf(ref, sizeof ref, "%s/%s_ref_%s_np%d.nc", dir, strat, kind_name[k], P);
  dvar bt = {0}, bh = {0}, t = {0}, h = {0};
  TSR_CHECK_OK(make(ctx, K_BOX, 3, &bt));
  TSR_CHECK_OK(make(ctx, K_BOX, 2, &bh));
  TSR_CHECK_OK(make(ctx, k, 3, &t));
  TSR_CHECK_OK(make(ctx, k, 2, &h));
  int rc = write_file(ctx, ref, hints, &bt, &bh);
  int skip = rc == TSR_ENOTBUILT;
  if (!skip) TSR_CHECK_OK(rc);
  if (!skip) {
    rc = write_file(ctx, path, hints, &t, &h);
    if (split && flat_kind(k)) {
      TSR_CHECK_RC(rc, TSR_EDECOMP);
    } else {
      TSR_CHECK_OK(rc);
      if (split) {
        /* Box-shaped kinds other than the slabs (boxes, empty) have pieces
         * of their own; the others' must equal the box run's piece. */
        char a[600], b[600];
        snprintf(a, sizeof a, "%s.%04d", path, me);
        snprintf(b, sizeof b, "%s.%04d", ref, me);
        if (k != K_BOXES && k != K_EMPTY) TSR_CHECK_EQ_INT(tsr_test_same_bytes(a, b), 1);
        /* The pieces read back as the one file (tsr_open's strategy=split),
         * by this job's ranks and by rank 0 alone. */
        verify_with(ctx, path, "strategy=split", k, &t, &h);
        verify_alone(path, k);
      } else {
        verify(ctx, path, k, &t, &h);
        if (k != K_HOLES && k != K_EMPTY && me == 0) TSR_CHECK_EQ_INT(tsr_test_same_bytes(path, ref), 1);
      }
    }
  }
  free_dvar(&bt);
  free_dvar(&bh);
  free_dvar(&t);
  free_dvar(&h);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  return skip ? 77 : 0;
}

static void run_errors(const char *which) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  int64_t gs[2] = {NY, NX}, total = NY * NX;
  int ylo = (int)((int64_t)NY * me / P), yhi = (int)((int64_t)NY * (me + 1) / P);
  int64_t idx[NY * NX + 4], n = 0;
  for (int64_t g = (int64_t)ylo * NX; g < (int64_t)yhi * NX; g++) idx[n++] = g;
  tsr_decomp *d = NULL;
  int last = me == P - 1;
  if (strcmp(which, "overlap") == 0) {
    int64_t m = n;
    if (last) idx[m++] = 0; /* rank 0's first element (my own when alone) */
    TSR_CHECK_RC(tsr_decomp_map(ctx, 2, gs, m, idx, &d), TSR_EDECOMP);
    TSR_CHECK_EQ_INT(d == NULL, 1);
    /* Two ranks' boxes sharing a row; one rank's own boxes overlapping. */
    int64_t st[4] = {ylo, 0, 0, 0}, ct[4] = {yhi - ylo, NX, last ? 1 : 0, last ? 1 : 0};
    TSR_CHECK_RC(tsr_decomp_boxes(ctx, 2, gs, 2, st, ct, &d), TSR_EDECOMP);
    /* A map that is fine on its own, but another rank's list covers it too. */
    int64_t one = 0;
    TSR_CHECK_RC(tsr_decomp_map(ctx, 2, gs, last || me == 0 ? 1 : 0, &one, &d), P > 1 ? TSR_EDECOMP : 0);
    tsr_decomp_free(&d);
  } else {
    int64_t m = n;
    if (last) idx[m++] = total; /* one past the end */
    TSR_CHECK_RC(tsr_decomp_map(ctx, 2, gs, m, idx, &d), TSR_EDECOMP);
    idx[n] = -2; /* negative, and not the "left out" -1 */
    TSR_CHECK_RC(tsr_decomp_map(ctx, 2, gs, last ? n + 1 : n, idx, &d), TSR_EDECOMP);
    int64_t st[2] = {ylo, 0}, ct[2] = {yhi - ylo, last ? NX + 1 : NX};
    TSR_CHECK_RC(tsr_decomp_boxes(ctx, 2, gs, 1, st, ct, &d), TSR_EDECOMP);
    int order[2] = {0, 0}; /* not a permutation: with the bad box, the decomposition error wins */
    TSR_CHECK_RC(tsr_decomp_box_ordered(ctx, 2, gs, st, ct, NULL, NULL, last ? order : NULL, &d),
          TSR_EDECOMP);
    ct[1] = NX;
    TSR_CHECK_RC(tsr_decomp_box_ordered(ctx, 2, gs, st, ct, NULL, NULL, last ? order : NULL, &d),
          TSR_EINVAL);
    TSR_CHECK_EQ_INT(d == NULL, 1);
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: test_decomp <strategy>.<kind> | errors.<overlap|range> <dir>\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  me = tu_rank;
  char strat[64];
  const char *dot = strchr(argv[1], '.');
  if (!dot || dot - argv[1] >= (long)sizeof strat) {
    fprintf(stderr, "bad scenario %s\n", argv[1]);
    MPI_Finalize();
    return 2;
  }
  snprintf(strat, sizeof strat, "%.*s", (int)(dot - argv[1]), argv[1]);
  int code = 0;
  if (strcmp(strat, "errors") == 0) {
    run_errors(dot + 1);
  } else {
    int k = 0;
    while (k < K_N && strcmp(kind_name[k], dot + 1) != 0) k++;
    if (k == K_N) {
      fprintf(stderr, "unknown kind %s\n", dot + 1);
      MPI_Finalize();
      return 2;
    }
    code = run_strategy(strat, (kind)k, argv[2]);
  }
  int fail = tu_finish(argv[1]);
  return fail ? 1 : code;
}
