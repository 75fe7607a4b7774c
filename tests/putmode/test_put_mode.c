/* put_mode=deferred: the caller keeps each buffer unchanged until tsr_flush
 * or tsr_close and Tessera may write from it without a copy. Scenarios (one
 * per strategy): write three frames from three buffers with deferred puts,
 * flush, then scribble over the buffers: the file must hold the values as
 * they were at the puts, exactly as a put_mode=copy file does. A second
 * variable comes from double memory (tsr_put_typed): the floats Tessera
 * converts them into are its own, so they must not be left to the flush. A
 * third, replicated (tsr_put_global), is put before the others in each
 * frame, from a buffer of its own per frame. Deferred puts
 * count against buffer_bytes like copies (a wait over more than 2 GiB per rank
 * fails in PnetCDF): with buffer_bytes=1k the pending bytes never exceed one
 * block, and the file is the same. Usage:
 * test_put_mode SCENARIO DIR (tests/common/tsr_test.h). */
#include "tsr_test.h"

enum { NY = 24, NX = 10, NT = 3 };

static float value(int t, int64_t j, int64_t i) { return (float)(t * 1000 + j * NX + i); }

/* Rows [j0, j0+nj) of the field, held with a halo of one row and column. */
static int write_file(tsr_ctx *ctx, const char *path, const char *hints, int scribble) {
  int g_rank = tsr_test_rank(), g_size = tsr_test_nranks();
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
  int dt, dy, dx, v, w, gv;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "y", NY, &dy);
  tsr_def_dim(f, "x", NX, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  tsr_def_var(f, "w", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &w);
  tsr_def_var_decomp(f, w, d);
  tsr_def_var(f, "g", TSR_FLOAT, 2, (int[]){dt, dx}, &gv);
  rc = tsr_enddef(f);
  size_t n = (size_t)mc[0] * (size_t)mc[1];
  float *buf[NT], gbuf[NT][NX];
  double *dbuf[NT];
  for (int t = 0; t < NT; t++) {
    for (int i = 0; i < NX; i++) gbuf[t][i] = value(t, 0, i) + 0.5f;
    if (!rc) rc = tsr_put_global(f, gv, t, gbuf[t]);
    buf[t] = malloc(n * sizeof(float));
    dbuf[t] = malloc(n * sizeof(double));
    for (int64_t j = 0; j < mc[0]; j++)
      for (int64_t i = 0; i < mc[1]; i++) {
        buf[t][j * mc[1] + i] = value(t, ms[0] + j, ms[1] + i);
        dbuf[t][j * mc[1] + i] = -value(t, ms[0] + j, ms[1] + i);
      }
    if (!rc) rc = tsr_put(f, v, t, NULL, buf[t]);
    if (!rc) rc = tsr_put_typed(f, w, t, NULL, TSR_DOUBLE, dbuf[t]);
  }
  if (!rc) rc = tsr_flush(f);
  /* The promise ends at the flush: what happens to the buffers now must not
   * reach the file. */
  for (int t = 0; scribble && t < NT; t++) {
    memset(buf[t], 0x7f, n * sizeof(float));
    memset(dbuf[t], 0x7f, n * sizeof(double));
    memset(gbuf[t], 0x7f, sizeof gbuf[t]);
  }
  int rc2 = tsr_close(&f);
  for (int t = 0; t < NT; t++) {
    free(buf[t]);
    free(dbuf[t]);
  }
  tsr_decomp_free(&d);
  return rc ? rc : rc2;
}

/* The file (split: its pieces, read as one) holds v and w = -v exactly. */
static void check_file(tsr_ctx *ctx, const char *path, const char *read_hints) {
  tsr_file *f = NULL;
  TSR_CHECKF(tsr_open(ctx, path, read_hints, &f) == 0, "cannot open %s: %s", path,
             tsr_last_error());
  if (!f) return;
  static const char *const names[] = {"v", "w"};
  static float all[NY * NX];
  for (int k = 0; k < 2; k++) {
    int v = -1;
    TSR_CHECK_OK(tsr_inq_varid(f, names[k], &v));
    float sign = k ? -1.0f : 1.0f;
    for (int t = 0; t < NT && v >= 0; t++) {
      TSR_CHECK_OK(tsr_get(f, v, t, NULL, all));
      int bad = 0;
      for (int j = 0; j < NY && !bad; j++)
        for (int i = 0; i < NX && !bad; i++)
          if (all[j * NX + i] != sign * value(t, j, i)) {
            TSR_CHECKF(0, "%s %s frame %d (%d,%d): %g, want %g", path, names[k], t, j, i,
                       (double)all[j * NX + i], (double)(sign * value(t, j, i)));
            bad = 1;
          }
      if (!bad) TSR_CHECK(1);
    }
  }
  int g = -1;
  TSR_CHECK_OK(tsr_inq_varid(f, "g", &g));
  for (int t = 0; t < NT && g >= 0; t++) {
    TSR_CHECK_OK(tsr_get(f, g, t, NULL, all));
    for (int i = 0; i < NX; i++)
      TSR_CHECKF(all[i] == value(t, 0, i) + 0.5f, "%s g frame %d (%d): %g, want %g", path, t, i,
                 (double)all[i], (double)(value(t, 0, i) + 0.5f));
  }
  TSR_CHECK_OK(tsr_close(&f));
}

static void run(const char *strategy) {
  const char *dir = tsr_test_arg(0, ".");
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  /* The bounded file first: the statistics' peak is the context's. */
  static const char *const modes[] = {"deferred:buffer_bytes=1k", "copy", "deferred"};
  static const char *const names[] = {"bounded", "copy", "deferred"};
  for (int m = 0; m < 3; m++) {
    char path[512], hints[96];
    int deferred = m != 1;
    snprintf(path, sizeof path, "%s/put_%s_%s_np%d.nc", dir, strategy, names[m], tsr_test_nranks());
    snprintf(hints, sizeof hints, "strategy=%s:put_mode=%s", strategy, modes[m]);
    tsr_test_case("%s", hints);
    int rc = write_file(ctx, path, hints, deferred);
    if (rc == TSR_ENOTBUILT) {
      tsr_test_skip("strategy %s is not built into this library", strategy);
      break;
    }
    TSR_CHECK_OK(rc);
    if (!rc) check_file(ctx, path, strcmp(strategy, "split") ? NULL : "strategy=split");
    if (m == 0 && strcmp(strategy, "direct") == 0) {
      tsr_stats st;
      TSR_CHECK_OK(tsr_get_stats(ctx, &st));
      int64_t block = (NY * (tsr_test_rank() + 1) / tsr_test_nranks() -
                       NY * tsr_test_rank() / tsr_test_nranks()) * NX * (int64_t)sizeof(float);
      TSR_CHECKF(st.peak_buffer_bytes > 0, "deferred puts were not counted as pending");
      TSR_CHECKF(st.peak_buffer_bytes <= (block > 1024 ? block : 1024),
                 "deferred puts held %lld bytes past buffer_bytes=1k (a block is %lld)",
                 (long long)st.peak_buffer_bytes, (long long)block);
    }
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static void serial(void) { run("serial"); }
static void direct(void) { run("direct"); }
static void aggregate(void) { run("aggregate"); }
static void split(void) { run("split"); }

static const tsr_test_scenario SCENARIOS[] = {{"serial", serial, 0},
                                              {"direct", direct, 0},
                                              {"aggregate", aggregate, 0},
                                              {"split", split, 0}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "put_mode", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
