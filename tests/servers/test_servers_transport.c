/* strategy=servers, transports: the same files written with transport=p2p
 * (the default) and transport=rma must be byte-identical, for every server
 * layout that fits the rank count (io_groups G in {1, 2} x io_tasks T in
 * {1, 2}) with the group's backend (netcdf for T = 1, pnetcdf for T > 1),
 * every decomposition kind, two files open at once (1 and 3 frames), and a
 * ring small enough that the model waits for the servers to fetch. Each
 * file is also checked value by value against the check function.
 *
 * Scenarios:
 * - rma: transport=p2p and transport=rma, byte for byte.
 * - bound: server_buffer_bytes=4k (messages cut into parts of at most 1 KiB,
 *   slabs of 1 KiB) with either transport, byte for byte against the
 *   unbounded default; then a slow backend (null_delay_ms) behind servers
 *   whose memory is bounded: the servers' peak memory (tsr_get_stats) stays
 *   under the bound while the same run unbounded goes past it. */
#include "srv_fields.h"

typedef struct {
  int G, T;
  const char *extra;
} config;
static const config CONFIGS[] = {
    {1, 1, ":slab_bytes=1k"},
    {2, 1, ":buffer_bytes=4k"},
    {1, 2, ""},
    {2, 2, ":buffer_bytes=2k"},
};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0] };
typedef struct {
  const char *label, *hints;
} variant;
static const variant RMA[] = {{"p2p", ":transport=p2p"}, {"rma", ":transport=rma"}};
static const variant BOUND[] = {{"free", ""},
                                {"bp2p", ":server_buffer_bytes=4k"},
                                {"brma", ":server_buffer_bytes=4k:transport=rma"}};

/* Are two files the same bytes? Prints the first difference. */
static int same_bytes(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  long at = 0;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb) {
      fprintf(stderr, "%s and %s differ at byte %ld\n", a, b, at);
      same = 0;
    }
    if (ca == EOF || cb == EOF) break;
    at++;
  }
  if (!fa || !fb) fprintf(stderr, "cannot open %s or %s\n", a, b);
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static void path_of(char *out, size_t n, const char *dir, const char *tag, kind k, const char *tp,
                    char file) {
  snprintf(out, n, "%s/%s_%s_%s_%c.nc", dir, tag, kind_name[k], tp, file);
}

/* One context with variant @p V: files A (1 frame) and B (3 frames) per kind. */
static void write_all(const config *C, const variant *V, const char *dir, const char *tag,
                      int np) {
  const char *transport = V->label;
  char hints[256];
  snprintf(hints, sizeof hints, "strategy=servers:io_groups=%d:io_tasks=%d%s%s", C->G, C->T,
           V->hints, C->extra);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TU_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
  if (model == MPI_COMM_NULL) { /* a server: it served until the model finalized */
    TU_EQ(ctx == NULL, 1);
    return;
  }
  int M = np - C->G * C->T;
  const char *backend = C->T > 1 ? "backend=pnetcdf" : "backend=netcdf";
  for (int k = 0; k < K_NKINDS; k++) {
    if (k == K_ZERO && M == 1) continue;
    decomps D;
    TU_OK(make_decomps(ctx, model, (kind)k, &D));
    char pa[512], pb[512], hb[64];
    path_of(pa, sizeof pa, dir, tag, (kind)k, transport, 'A');
    path_of(pb, sizeof pb, dir, tag, (kind)k, transport, 'B');
    snprintf(hb, sizeof hb, "%s:frames_per_outfile=3", backend);
    wfile A, B;
    int rc = open_file(ctx, pa, backend, &D, 0, &A);
    if (rc == TSR_ENOTBUILT) { /* the same answer on every rank */
      free_decomps(&D);
      break;
    }
    TU_OK(rc);
    TU_OK(open_file(ctx, pb, hb, &D, 10, &B));
    TU_OK(put_frame(&A, &D, 0));
    TU_OK(put_frame(&B, &D, 0));
    TU_OK(tsr_close(&A.f));
    TU_OK(tsr_flush(B.f));
    TU_OK(put_frame(&B, &D, 1));
    TU_OK(put_frame(&B, &D, 2));
    TU_OK(tsr_close(&B.f));
    free_decomps(&D);
  }
  TU_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

/* The slow backend behind bounded servers: one 3-D double field of
 * 4 x 64 x 64 (128 KiB) cut in rows over the model ranks, 6 frames, each
 * block written with a 2 ms sleep; server_buffer_bytes = 64k. Returns the
 * servers' peak memory as the model ranks learned it (-1 on a server). */
static int64_t slow_peak(const char *dir, const char *extra, const char *label, int T) {
  char hints[256], path[512];
  snprintf(hints, sizeof hints, "strategy=servers:io_tasks=%d:buffer_bytes=256k%s", T, extra);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TU_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
  if (model == MPI_COMM_NULL) return -1;
  int m, M;
  MPI_Comm_rank(model, &m);
  MPI_Comm_size(model, &M);
  enum { Z = 4, Y = 64, X = 64 };
  int64_t g[3] = {Z, Y, X}, st[3] = {0, (int64_t)Y * m / M, 0}, ct[3] = {Z, 0, X};
  ct[1] = (int64_t)Y * (m + 1) / M - st[1];
  tsr_decomp *d = NULL;
  TU_OK(tsr_decomp_box(ctx, 3, g, st, ct, NULL, NULL, &d));
  double *buf = malloc((size_t)(Z * ct[1] * X) * sizeof *buf);
  for (int64_t i = 0; i < Z * ct[1] * X; i++) buf[i] = (double)i;
  snprintf(path, sizeof path, "%s/slow_%s.nc", dir, label);
  tsr_file *f = NULL;
  TU_OK(tsr_create(ctx, path, "backend=null:null_delay_ms=2", &f));
  int dt, dz, dy, dx, v;
  TU_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TU_OK(tsr_def_dim(f, "z", Z, &dz));
  TU_OK(tsr_def_dim(f, "y", Y, &dy));
  TU_OK(tsr_def_dim(f, "x", X, &dx));
  TU_OK(tsr_def_var(f, "W", TSR_DOUBLE, 4, (int[]){dt, dz, dy, dx}, &v));
  TU_OK(tsr_enddef(f));
  for (int t = 0; t < 6; t++) TU_OK(tsr_put(f, v, t, d, buf));
  /* The servers' peak travels with the flush acknowledgement; the flush
   * comes after every frame was written. */
  TU_OK(tsr_flush(f));
  tsr_stats sts;
  TU_OK(tsr_get_stats(ctx, &sts));
  TU_OK(tsr_close(&f));
  tsr_decomp_free(&d);
  TU_OK(tsr_finalize(&ctx));
  free(buf);
  MPI_Comm_free(&model);
  return sts.server_peak_bytes;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  int np, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *scenario = argc > 2 ? argv[2] : "rma";
  const variant *V = RMA;
  int nv = 2;
  if (strcmp(scenario, "bound") == 0) {
    V = BOUND;
    nv = 3;
  } else if (strcmp(scenario, "rma") != 0) {
    if (rank == 0) fprintf(stderr, "unknown scenario %s\n", scenario);
    TU_EQ(0, 1);
    return tu_finish("servers_transport");
  }
  /* Transport names come from the transport table: anything else is a hint
   * error on every rank, before any rank becomes a server. */
  tsr_ctx *bad = NULL;
  MPI_Comm none = MPI_COMM_NULL;
  TU_EQ(tsr_init(MPI_COMM_WORLD, "strategy=servers:transport=pigeon", &bad, &none), TSR_EHINT);
  TU_EQ(bad == NULL && none == MPI_COMM_NULL, 1);
  for (int c = 0; c < NCONFIGS; c++) {
    const config *C = &CONFIGS[c];
    int M = np - C->G * C->T;
    if (M < 1 || M < C->T) continue;
    char tag[64];
    snprintf(tag, sizeof tag, "%s%d_G%dT%d_np%d", scenario, c, C->G, C->T, np);
    for (int t = 0; t < nv; t++) {
      write_all(C, &V[t], dir, tag, np);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank != 0) continue;
    for (int k = 0; k < K_NKINDS; k++) {
      if (k == K_ZERO && M == 1) continue;
      for (int fi = 0; fi < 2; fi++) {
        char p[512], r[512];
        path_of(p, sizeof p, dir, tag, (kind)k, V[0].label, "AB"[fi]);
        FILE *probe = fopen(p, "rb");
        if (!probe) continue; /* backend not built: nothing was written by either */
        fclose(probe);
        for (int t = 1; t < nv; t++) {
          path_of(r, sizeof r, dir, tag, (kind)k, V[t].label, "AB"[fi]);
          verify(r, NULL, fi ? 3 : 1, fi ? 10 : 0, (kind)k, r);
          TU_EQ(same_bytes(p, r), 1);
        }
      }
    }
  }
  if (strcmp(scenario, "bound") == 0) {
    int T = np >= 4 ? 2 : 1; /* M >= T model ranks */
    int64_t bounded = slow_peak(dir, ":server_buffer_bytes=64k", "bounded", T);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t bounded_rma =
        slow_peak(dir, ":server_buffer_bytes=64k:transport=rma", "bounded_rma", T);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t free_peak = slow_peak(dir, "", "free", T);
    MPI_Barrier(MPI_COMM_WORLD);
    if (free_peak >= 0) {
      if (rank == 0)
        printf("server peak memory: bounded %lld, bounded rma %lld, unbounded %lld (bound 65536)\n",
               (long long)bounded, (long long)bounded_rma, (long long)free_peak);
      TU_EQ(bounded > 0 && bounded <= 65536, 1);
      TU_EQ(bounded_rma > 0 && bounded_rma <= 65536, 1);
      /* Without the bound a server holds at least a whole tile (the
       * largest is no smaller than 128 KiB / M), more than the bound at 2 ranks. */
      TU_EQ(free_peak >= (int64_t)131072 / (np - T), 1);
    }
  }
  return tu_finish("servers_transport");
}
