/* tessera-decomp-bench: the same field written through a box decomposition
 * and through the equivalent index map (in order, shuffled), the same tile
 * held in WRF's XZY memory order, and an MPAS-like map of scattered columns;
 * then the growth of decomposition + plan build with ranks and map size.
 *
 *   mpiexec -n 6 tessera-decomp-bench [--nz 32 --ny 256 --nx 512] [--reps 7]
 *       [--puts 5] [--hints strategy=aggregate:aggregators=2:backend=null]
 *       [--dir /tmp] [--sizes 1e4,1e5,1e6,1e7] [--maxp 6]
 *
 * The side-by-side part runs on the first 4 ranks. Times are the slowest
 * rank's, per call; each figure is the median over reps (puts: reps x puts)
 * with [min, max]. "decomp" is the tsr_decomp_* call (sorting a map, the
 * overlap/hole check); "plan" is building the aggregate strategy's plan
 * (tsr__plan_get with its layout, exactly what the first put would do);
 * "put" is tsr_put once the plan is cached. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"
#include "plan/layout.h"

extern const struct tsr__strategy_ops tsr__strategy_aggregate;

static int64_t NZ = 32, NY = 256, NX = 512;
/* The growth table's widest P (one column per P). */
enum { MAXP_LIMIT = 1024 };
static int REPS = 7, PUTS = 5, MAXP = 6;
static char HINTS[512] = "strategy=aggregate:aggregators=2:backend=null";
static char DIR[512] = "/tmp";
static char SIZES[256] = "1e4,1e5,1e6,1e7";

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static void shuffle(int64_t *a, int64_t n, uint64_t seed) {
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(mix(seed + (uint64_t)i) % (uint64_t)(i + 1)), t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double med, lo, hi;
} stat;

static stat stats_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  stat s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1]};
  return s;
}

static double slowest(MPI_Comm c, double t) {
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, c);
  return m;
}

typedef enum { V_BOX, V_INORDER, V_SHUFFLED, V_XZY, V_CELLS, V_N } variant;
static const char *vname[V_N] = {"box", "map in order", "map shuffled", "box XZY order",
                                 "map of cells"};

/* A 2 x (P/2) grid of (y, x) patches with every level, as WRF's. */
static void patch(int P, int r, int64_t ny, int64_t nx, int64_t *y0, int64_t *yn, int64_t *x0,
                  int64_t *xn) {
  int py = P >= 2 ? 2 : 1, px = P / py, ry = r / px, rx = r % px;
  if (r >= py * px) ry = py - 1, rx = px - 1; /* odd P: last rank shares nothing */
  *y0 = ny * ry / py;
  *yn = ny * (ry + 1) / py - *y0;
  *x0 = nx * rx / px;
  *xn = nx * (rx + 1) / px - *x0;
  if (r >= py * px) *yn = *xn = 0;
}

/* Build variant v's decomposition of (nz, ny, nx) on ctx; fill buf with
 * its elements (value = flat index) in the variant's memory layout. */
static int make(tsr_ctx *ctx, variant v, int64_t nz, int64_t ny, int64_t nx, float **buf,
                tsr_decomp **d, double *td) {
  int P = ctx->size, r = ctx->rank;
  int64_t g[3] = {nz, ny, nx}, y0, yn, x0, xn;
  patch(P, r, ny, nx, &y0, &yn, &x0, &xn);
  int64_t n = nz * yn * xn, *idx = NULL;
  if (v == V_CELLS) { /* columns dealt at random; levels fastest in memory */
    int64_t ncol = 0;
    for (int64_t c = 0; c < ny * nx; c++) ncol += (int)(mix((uint64_t)c) % (uint64_t)P) == r;
    n = ncol * nz;
    idx = malloc(sizeof *idx * (size_t)(n + 1));
    int64_t k = 0;
    int64_t *cols = malloc(sizeof *cols * (size_t)(ncol + 1));
    for (int64_t c = 0, m = 0; c < ny * nx; c++)
      if ((int)(mix((uint64_t)c) % (uint64_t)P) == r) cols[m++] = c;
    shuffle(cols, ncol, 77u + (uint64_t)r);
    for (int64_t c = 0; c < ncol; c++)
      for (int64_t z = 0; z < nz; z++) idx[k++] = z * ny * nx + cols[c];
    free(cols);
  } else if (v != V_BOX && v != V_XZY) {
    idx = malloc(sizeof *idx * (size_t)(n + 1));
    int64_t k = 0;
    for (int64_t z = 0; z < nz; z++)
      for (int64_t y = y0; y < y0 + yn; y++)
        for (int64_t x = x0; x < x0 + xn; x++) idx[k++] = (z * ny + y) * nx + x;
    if (v == V_SHUFFLED) shuffle(idx, n, 1234u + (uint64_t)r);
  }
  *buf = malloc(sizeof **buf * (size_t)(n + 1));
  if (idx)
    for (int64_t i = 0; i < n; i++) (*buf)[i] = (float)idx[i];
  else if (v == V_BOX)
    for (int64_t i = 0; i < n; i++) (*buf)[i] = (float)i;
  else /* [y][z][x] */
    for (int64_t y = 0, i = 0; y < yn; y++)
      for (int64_t z = 0; z < nz; z++)
        for (int64_t x = 0; x < xn; x++) (*buf)[i++] = (float)((z * ny + y0 + y) * nx + x0 + x);
  int64_t s[3] = {0, y0, x0}, c[3] = {nz, yn, xn};
  int order[3] = {1, 0, 2};
  MPI_Barrier(ctx->comm); /* time the call only, not the filling above */
  double t0 = MPI_Wtime();
  int rc = v == V_BOX   ? tsr_decomp_box(ctx, 3, g, s, c, NULL, NULL, d)
           : v == V_XZY ? tsr_decomp_box_ordered(ctx, 3, g, s, c, NULL, NULL, order, d)
                        : tsr_decomp_map(ctx, 3, g, n, idx, d);
  *td = slowest(ctx->comm, MPI_Wtime() - t0);
  free(idx);
  return rc;
}

static int writers_n(int P) { return P >= 2 ? 2 : 1; }

static int agg_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  (void)arg;
  int n = writers_n(d->ctx->size), w[2];
  for (int i = 0; i < n; i++) w[i] = (int)((int64_t)i * d->ctx->size / n);
  return tsr__layout_slabs(d->ndims, d->gsize, n, w, out);
}

/* Decomposition and plan build times of one variant (slowest rank). */
static int build(tsr_ctx *ctx, variant v, int64_t nz, int64_t ny, int64_t nx, double *td,
                 double *tp, float **buf, tsr_decomp **d) {
  int rc = make(ctx, v, nz, ny, nx, buf, d, td);
  if (rc) return rc;
  tsr_decomp *c = (*d)->canon ? (*d)->canon : *d; /* what the strategy plans for */
  tsr__plan *plan;
  MPI_Barrier(ctx->comm);
  double a = MPI_Wtime();
  rc = tsr__plan_get(c, &tsr__strategy_aggregate, writers_n(ctx->size), 0, sizeof(float), 0,
                     agg_layout, NULL, &plan);
  *tp = slowest(ctx->comm, MPI_Wtime() - a);
  return rc;
}

static void usage_exit(void) {
  fprintf(stderr, "usage: tessera-decomp-bench [--nz N --ny N --nx N] [--reps N] [--puts N] "
                  "[--hints H] [--dir D] [--sizes a,b,..] [--maxp P]\n");
  MPI_Finalize();
  exit(2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int wr, ws;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &ws);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage_exit();
    if (!strcmp(a, "--nz")) NZ = atoll(v);
    else if (!strcmp(a, "--ny")) NY = atoll(v);
    else if (!strcmp(a, "--nx")) NX = atoll(v);
    else if (!strcmp(a, "--reps")) REPS = atoi(v);
    else if (!strcmp(a, "--puts")) PUTS = atoi(v);
    else if (!strcmp(a, "--maxp")) MAXP = atoi(v);
    else if (!strcmp(a, "--hints")) snprintf(HINTS, sizeof HINTS, "%s", v);
    else if (!strcmp(a, "--dir")) snprintf(DIR, sizeof DIR, "%s", v);
    else if (!strcmp(a, "--sizes")) snprintf(SIZES, sizeof SIZES, "%s", v);
    else usage_exit();
    i++;
  }
  if (ws < 4) {
    if (wr == 0) fprintf(stderr, "tessera-decomp-bench needs at least 4 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (MAXP > ws) MAXP = ws;
  if (MAXP > MAXP_LIMIT) MAXP = MAXP_LIMIT;

  /* ---- side by side at 4 ranks ---- */
  MPI_Comm c4;
  MPI_Comm_split(MPI_COMM_WORLD, wr < 4 ? 0 : MPI_UNDEFINED, wr, &c4);
  stat sd[V_N], sp[V_N], su[V_N];
  if (c4 != MPI_COMM_NULL) {
    tsr_ctx *ctx;
    MPI_Comm model;
    if (tsr_init(c4, NULL, &ctx, &model)) MPI_Abort(MPI_COMM_WORLD, 1);
    /* Variants take turns within each rep, so a load change on a shared
     * machine hits all of them alike instead of one variant's whole series. */
    double *td = malloc(sizeof(double) * (size_t)(V_N * REPS));
    double *tp = malloc(sizeof(double) * (size_t)(V_N * REPS));
    double *tu = malloc(sizeof(double) * (size_t)(V_N * REPS * PUTS));
    for (int r = 0; r < REPS; r++)
      for (int v = 0; v < V_N; v++) {
        float *buf;
        tsr_decomp *d;
        if (build(ctx, (variant)v, NZ, NY, NX, &td[v * REPS + r], &tp[v * REPS + r], &buf, &d))
          MPI_Abort(MPI_COMM_WORLD, 1);
        char path[600];
        snprintf(path, sizeof path, "%s/decomp_bench_%d.nc", DIR, v);
        tsr_file *f;
        int dims[3], var;
        if (tsr_create(ctx, path, HINTS, &f)) MPI_Abort(MPI_COMM_WORLD, 1);
        tsr_def_dim(f, "bottom_top", NZ, &dims[0]);
        tsr_def_dim(f, "south_north", NY, &dims[1]);
        tsr_def_dim(f, "west_east", NX, &dims[2]);
        tsr_def_var(f, "T", TSR_FLOAT, 3, dims, &var);
        tsr_enddef(f);
        for (int p = 0; p < PUTS; p++) {
          MPI_Barrier(model);
          double a = MPI_Wtime();
          if (tsr_put(f, var, 0, d, buf)) MPI_Abort(MPI_COMM_WORLD, 1);
          tu[(v * REPS + r) * PUTS + p] = slowest(model, MPI_Wtime() - a);
        }
        tsr_close(&f);
        tsr_decomp_free(&d);
        free(buf);
      }
    for (int v = 0; v < V_N; v++) {
      sd[v] = stats_of(td + v * REPS, REPS);
      sp[v] = stats_of(tp + v * REPS, REPS);
      su[v] = stats_of(tu + v * REPS * PUTS, REPS * PUTS);
    }
    free(td);
    free(tp);
    free(tu);
    tsr_finalize(&ctx);
    MPI_Comm_free(&model);
    if (wr == 0) {
      double mb = (double)(NZ * NY * NX) * 4 / 1e6;
      printf("tessera-decomp-bench: field %lld x %lld x %lld float (%.1f MB) on 4 ranks, hints %s\n",
             (long long)NZ, (long long)NY, (long long)NX, mb, HINTS);
      printf("median [min, max] in ms over %d reps (put: %d reps x %d puts), slowest rank\n",
             REPS, REPS, PUTS);
      printf("%-15s %-26s %-26s %-26s\n", "decomposition", "decomp", "plan build", "put");
      for (int v = 0; v < V_N; v++)
        printf("%-15s %7.3f [%7.3f, %7.3f]  %7.3f [%7.3f, %7.3f]  %7.3f [%7.3f, %7.3f]\n", vname[v],
               sd[v].med * 1e3, sd[v].lo * 1e3, sd[v].hi * 1e3, sp[v].med * 1e3, sp[v].lo * 1e3,
               sp[v].hi * 1e3, su[v].med * 1e3, su[v].lo * 1e3, su[v].hi * 1e3);
      printf("ratios (medians)                          value   goal\n");
      printf("  map in order / box, plan build          %5.2f   <= 1.1\n", sp[V_INORDER].med / sp[V_BOX].med);
      printf("  map in order / box, decomp + plan       %5.2f\n",
             (sd[V_INORDER].med + sp[V_INORDER].med) / (sd[V_BOX].med + sp[V_BOX].med));
      printf("  map in order / box, put                 %5.2f   <= 1.1\n", su[V_INORDER].med / su[V_BOX].med);
      printf("  map shuffled / box, put                 %5.2f   <= 2.0\n", su[V_SHUFFLED].med / su[V_BOX].med);
      printf("  XZY order / file order, put             %5.2f   <= 1.2\n", su[V_XZY].med / su[V_BOX].med);
      printf("  map of cells / box, put (scattered)     %5.2f\n", su[V_CELLS].med / su[V_BOX].med);
      fflush(stdout);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* ---- growth: decomposition + plan build at P = 1..MAXP, N = sizes ---- */
  int64_t sizes[16];
  int nsz = 0;
  for (char *tok = strtok(SIZES, ","); tok && nsz < 16; tok = strtok(NULL, ","))
    sizes[nsz++] = (int64_t)atof(tok);
  variant gv[2] = {V_INORDER, V_CELLS};
  static double res[2][16][MAXP_LIMIT + 1]; /* [variant][size][P] */
  for (int P = 1; P <= MAXP; P++) {
    MPI_Comm cp;
    MPI_Comm_split(MPI_COMM_WORLD, wr < P ? 0 : MPI_UNDEFINED, wr, &cp);
    if (cp != MPI_COMM_NULL) {
      tsr_ctx *ctx;
      MPI_Comm model;
      if (tsr_init(cp, NULL, &ctx, &model)) MPI_Abort(MPI_COMM_WORLD, 1);
      for (int k = 0; k < 2; k++)
        for (int s = 0; s < nsz; s++) {
          int64_t nz = 10, cols = sizes[s] / nz, ny = (int64_t)sqrt((double)cols), nx = cols / ny;
          double t[3];
          for (int r = 0; r < 3; r++) {
            double td, tp;
            float *buf;
            tsr_decomp *d;
            if (build(ctx, gv[k], nz, ny, nx, &td, &tp, &buf, &d)) MPI_Abort(MPI_COMM_WORLD, 1);
            t[r] = td + tp;
            tsr_decomp_free(&d);
            free(buf);
          }
          res[k][s][P] = stats_of(t, 3).med;
        }
      tsr_finalize(&ctx);
      MPI_Comm_free(&model);
      MPI_Comm_free(&cp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (wr == 0) {
    for (int k = 0; k < 2; k++) {
      printf("decomp + plan build, %s (ms, median of 3; nz = 10, columns ~ N/10)\n",
             k ? "map of scattered cells" : "map in order (a box per rank)");
      printf("%12s", "N \\ P");
      for (int P = 1; P <= MAXP; P++) printf(" %9d", P);
      printf("\n");
      for (int s = 0; s < nsz; s++) {
        printf("%12.0e", (double)sizes[s]);
        for (int P = 1; P <= MAXP; P++) printf(" %9.2f", res[k][s][P] * 1e3);
        printf("\n");
      }
    }
  }
  MPI_Finalize();
  return 0;
}
