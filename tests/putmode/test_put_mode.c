/* put_mode=deferred: the caller keeps each buffer unchanged until tsr_flush
 * or tsr_close and Tessera may write from it without a copy. Scenarios (one
 * per strategy): write three frames from three buffers with deferred puts,
 * flush, then scribble over the buffers: the file must hold the values as
 * they were at the puts, exactly as a put_mode=copy file does. Usage:
 * test_put_mode STRATEGY DIR; exit 77 when the strategy is not built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

enum { NY = 24, NX = 10, NT = 3 };

static int g_rank, g_size, g_fail;

static float value(int t, int64_t j, int64_t i) { return (float)(t * 1000 + j * NX + i); }

/* Rows [j0, j0+nj) of the field, held with a halo of one row and column. */
static int write_file(tsr_ctx *ctx, const char *path, const char *hints, int scribble) {
  int64_t j0 = NY * g_rank / g_size, nj = NY * (g_rank + 1) / g_size - j0;
  int64_t g[2] = {NY, NX}, st[2] = {j0, 0}, ct[2] = {nj, NX};
  int64_t ms[2] = {j0 - 1, -1}, mc[2] = {nj + 2, NX + 2};
  tsr_decomp *d;
  tsr_file *f;
  if (tsr_decomp_box(ctx, 2, g, st, ct, ms, mc, &d)) return -1;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    tsr_decomp_free(&d);
    return rc;
  }
  int dt, dy, dx, v;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "y", NY, &dy);
  tsr_def_dim(f, "x", NX, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  rc = tsr_enddef(f);
  float *buf[NT];
  for (int t = 0; t < NT; t++) {
    buf[t] = malloc((size_t)mc[0] * (size_t)mc[1] * sizeof(float));
    for (int64_t j = 0; j < mc[0]; j++)
      for (int64_t i = 0; i < mc[1]; i++)
        buf[t][j * mc[1] + i] = value(t, ms[0] + j, ms[1] + i);
    if (!rc) rc = tsr_put(f, v, t, NULL, buf[t]);
  }
  if (!rc) rc = tsr_flush(f);
  /* The promise ends at the flush: what happens to the buffers now must not
   * reach the file. */
  if (scribble)
    for (int t = 0; t < NT; t++) memset(buf[t], 0x7f, (size_t)mc[0] * (size_t)mc[1] * sizeof(float));
  int rc2 = tsr_close(&f);
  for (int t = 0; t < NT; t++) free(buf[t]);
  tsr_decomp_free(&d);
  return rc ? rc : rc2;
}

static void check_file(tsr_ctx *ctx, const char *path) {
  tsr_file *f;
  if (tsr_open(ctx, path, NULL, &f)) {
    fprintf(stderr, "rank %d: cannot open %s: %s\n", g_rank, path, tsr_last_error());
    g_fail = 1;
    return;
  }
  int v;
  tsr_inq_varid(f, "v", &v);
  static float all[NY * NX];
  for (int t = 0; t < NT; t++) {
    tsr_get(f, v, t, NULL, all);
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        if (all[j * NX + i] != value(t, j, i)) {
          if (!g_fail)
            fprintf(stderr, "rank %d: %s frame %d (%d,%d): %g, want %g\n", g_rank, path, t, j, i,
                    (double)all[j * NX + i], (double)value(t, j, i));
          g_fail = 1;
        }
  }
  tsr_close(&f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char *strategy = argc > 1 ? argv[1] : "direct", *dir = argc > 2 ? argv[2] : ".";
  tsr_ctx *ctx;
  MPI_Comm model;
  int skip = 0;
  if (tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model)) g_fail = 1;
  for (int deferred = 0; deferred <= 1 && !g_fail && !skip; deferred++) {
    char path[512], hints[96];
    snprintf(path, sizeof path, "%s/put_%s_%s_np%d.nc", dir, strategy, deferred ? "deferred" : "copy",
             g_size);
    snprintf(hints, sizeof hints, "strategy=%s:put_mode=%s", strategy, deferred ? "deferred" : "copy");
    int rc = write_file(ctx, path, hints, deferred);
    if (rc == TSR_ENOTBUILT) skip = 77;
    else if (rc) {
      fprintf(stderr, "rank %d: %s: %s (%s)\n", g_rank, hints, tsr_errname(rc), tsr_last_error());
      g_fail = 1;
    } else {
      check_file(ctx, path);
    }
  }
  tsr_finalize(&ctx);
  MPI_Comm_free(&model);
  int any = 0, skipped = 0;
  MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&skip, &skipped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : skipped;
}
