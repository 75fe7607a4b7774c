/* strategy=servers, transports: the same files written with transport=p2p
 * (the default) and transport=rma must be byte-identical, for every server
 * layout that fits the rank count (io_groups G in {1, 2} x io_tasks T in
 * {1, 2}) with the group's backend (netcdf for T = 1, pnetcdf for T > 1),
 * every decomposition kind, two files open at once (1 and 3 frames), and a
 * ring small enough that the model waits for the servers to fetch. Each
 * file is also checked value by value against the check function.
 *
 * Scenario: rma. */
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
static const char *TRANSPORTS[] = {"p2p", "rma"};

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

/* One context with @p transport: files A (1 frame) and B (3 frames) per kind. */
static void write_all(const config *C, const char *transport, const char *dir, const char *tag,
                      int np) {
  char hints[256];
  snprintf(hints, sizeof hints, "strategy=servers:io_groups=%d:io_tasks=%d:transport=%s%s", C->G,
           C->T, transport, C->extra);
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

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  int np, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *scenario = argc > 2 ? argv[2] : "rma";
  if (strcmp(scenario, "rma") != 0) {
    if (rank == 0) fprintf(stderr, "unknown scenario %s\n", scenario);
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
    snprintf(tag, sizeof tag, "tp%d_G%dT%d_np%d", c, C->G, C->T, np);
    for (int t = 0; t < 2; t++) {
      write_all(C, TRANSPORTS[t], dir, tag, np);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank != 0) continue;
    for (int k = 0; k < K_NKINDS; k++) {
      if (k == K_ZERO && M == 1) continue;
      for (int fi = 0; fi < 2; fi++) {
        char p[512], r[512];
        path_of(p, sizeof p, dir, tag, (kind)k, "p2p", "AB"[fi]);
        path_of(r, sizeof r, dir, tag, (kind)k, "rma", "AB"[fi]);
        FILE *probe = fopen(p, "rb");
        if (!probe) continue; /* backend not built: nothing was written by either */
        fclose(probe);
        verify(r, NULL, fi ? 3 : 1, fi ? 10 : 0, (kind)k, r);
        TU_EQ(same_bytes(p, r), 1);
      }
    }
  }
  return tu_finish("servers_transport");
}
