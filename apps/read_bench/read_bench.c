/* tessera-read-bench: how long reading one file takes with each read
 * strategy (strategy= on tsr_open), measured side by side in one run.
 *
 *   mpiexec -n 4 tessera-read-bench [--reps N] FILE [SPLIT_BASE]
 *
 * Every repetition reads frame 0 of every variable of FILE once per strategy
 * (default, direct, serial, aggregate with 2 readers, in rotation; and split
 * on the pieces SPLIT_BASE.NNNN when given), through a 2-D grid of boxes
 * over the last two dimensions (variables of fewer dimensions are read
 * whole, as replicated data). A strategy's time is the slowest rank's, from
 * tsr_open to tsr_close. Prints the median, min and max per strategy, the
 * ratio of medians to the default, and whether every strategy read the same
 * values (a checksum over all ranks). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

enum { MAXS = 6, MAXD = 64 };

typedef struct {
  int nd;
  int64_t shape[TSR_MAX_DIMS];
  tsr_decomp *d;
  int64_t elems;
} dcache;

static dcache cache[MAXD];
static int ncache;

/* My box of a variable of this shape: the last two dimensions cut by a
 * px x py grid, the others whole. */
static dcache *decomp_for(tsr_ctx *ctx, int nd, const int64_t *shape) {
  for (int i = 0; i < ncache; i++)
    if (cache[i].nd == nd && memcmp(cache[i].shape, shape, sizeof(int64_t) * (size_t)nd) == 0)
      return &cache[i];
  if (ncache == MAXD) return NULL;
  int P, me, dims[2] = {0, 0};
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Dims_create(P, 2, dims);
  int64_t st[TSR_MAX_DIMS] = {0}, ct[TSR_MAX_DIMS];
  for (int i = 0; i < nd; i++) ct[i] = shape[i];
  int cut[2] = {me / dims[1], me % dims[1]};
  for (int k = 0; k < 2; k++) {
    int i = nd - 2 + k;
    st[i] = shape[i] * cut[k] / dims[k];
    ct[i] = shape[i] * (cut[k] + 1) / dims[k] - st[i];
  }
  dcache *c = &cache[ncache];
  c->nd = nd;
  memcpy(c->shape, shape, sizeof(int64_t) * (size_t)nd);
  c->elems = 1;
  for (int i = 0; i < nd; i++) c->elems *= ct[i];
  if (tsr_decomp_box(ctx, nd, shape, st, ct, NULL, NULL, &c->d) != 0) return NULL;
  ncache++;
  return c;
}

/* Read frame 0 of every variable; *sum gets a checksum of the bytes read. */
static int read_all(tsr_ctx *ctx, const char *path, const char *hints, double *secs,
                    uint64_t *sum) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  tsr_file *f = NULL;
  int rc = tsr_open(ctx, path, hints, &f), nvars = 0, unlim = -1;
  if (!rc) rc = tsr_inq(f, NULL, &nvars, NULL, &unlim);
  void *buf = NULL;
  size_t cap = 0;
  *sum = 0;
  for (int v = 0; v < nvars && !rc; v++) {
    tsr_type t;
    int nd, dimids[TSR_MAX_DIMS];
    int64_t shape[TSR_MAX_DIMS];
    rc = tsr_inq_var(f, v, NULL, &t, &nd, dimids, shape);
    int rec = nd > 0 && dimids[0] == unlim;
    int64_t *s = shape + rec, whole = 1;
    nd -= rec;
    for (int i = 0; i < nd; i++) whole *= s[i];
    dcache *c = nd >= 2 ? decomp_for(ctx, nd, s) : NULL;
    if (nd >= 2 && !c) rc = TSR_ENOMEM;
    size_t need = (size_t)(c ? c->elems : whole) * tsr_type_size(t) + 1;
    if (!rc && need > cap) {
      free(buf);
      buf = malloc(need);
      cap = buf ? need : 0;
      if (!buf) rc = TSR_ENOMEM;
    }
    if (!rc) rc = tsr_get(f, v, 0, c ? c->d : NULL, buf);
    for (size_t i = 0; !rc && i + 1 < need; i++) *sum = *sum * 1099511628211ull + ((unsigned char *)buf)[i];
  }
  int crc = f ? tsr_close(&f) : 0;
  double dt = MPI_Wtime() - t0;
  MPI_Allreduce(&dt, secs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(buf);
  return rc ? rc : crc;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, P, reps = 5, a = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc > 2 && strcmp(argv[1], "--reps") == 0) reps = atoi(argv[2]), a = 3;
  if (argc - a < 1 || reps < 1) {
    if (me == 0) fprintf(stderr, "usage: tessera-read-bench [--reps N] FILE [SPLIT_BASE]\n");
    MPI_Finalize();
    return 2;
  }
  const char *file = argv[a], *split = argc - a > 1 ? argv[a + 1] : NULL;
  const char *names[MAXS] = {"default", "direct", "serial", "aggregate", "split"};
  const char *hints[MAXS] = {NULL, "strategy=direct", "strategy=serial",
                             "strategy=aggregate:aggregators=2", "strategy=split"};
  int ns = split ? 5 : 4;
  tsr_ctx *ctx;
  MPI_Comm model;
  if (tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
  double *t = calloc((size_t)(ns * reps), sizeof *t);
  uint64_t sums[MAXS] = {0};
  int rc = 0;
  for (int r = 0; r < reps && !rc; r++)
    for (int s = 0; s < ns && !rc; s++) {
      uint64_t sum;
      rc = read_all(ctx, s == 4 ? split : file, hints[s], &t[s * reps + r], &sum);
      if (rc && me == 0)
        fprintf(stderr, "tessera-read-bench: %s with %s: %s: %s\n", s == 4 ? split : file,
                names[s], tsr_errname(rc), tsr_last_error());
      sums[s] = sum;
    }
  /* The same values everywhere: every rank's checksum, per strategy. */
  uint64_t all[MAXS] = {0};
  for (int s = 0; s < ns; s++) all[s] = sums[s];
  MPI_Allreduce(MPI_IN_PLACE, all, MAXS, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
  if (me == 0 && !rc) {
    printf("read %s at %d ranks, %d repetitions (slowest rank, open to close)\n", file, P, reps);
    printf("%-10s %10s %10s %10s %8s %s\n", "strategy", "median_s", "min_s", "max_s", "ratio",
           "same values");
    double base = 0;
    for (int s = 0; s < ns; s++) {
      qsort(t + s * reps, (size_t)reps, sizeof *t, cmp);
      double med = reps % 2 ? t[s * reps + reps / 2]
                            : (t[s * reps + reps / 2 - 1] + t[s * reps + reps / 2]) / 2;
      if (s == 0) base = med;
      printf("%-10s %10.4f %10.4f %10.4f %8.2f %s\n", names[s], med, t[s * reps],
             t[s * reps + reps - 1], med / base, all[s] == all[0] ? "yes" : "NO");
    }
  }
  for (int i = 0; i < ncache; i++) tsr_decomp_free(&cache[i].d);
  free(t);
  tsr_finalize(&ctx);
  MPI_Finalize();
  return rc ? 1 : 0;
}
