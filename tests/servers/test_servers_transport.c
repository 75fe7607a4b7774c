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
 * - noroom: transport=shm whose rings do not fit in /dev/shm: TSR_ENOMEM
 *   and the same sentence on every rank, no hang.
 * - shm: transport=p2p and transport=shm, byte for byte, also with a ring
 *   smaller than an op (buffer_bytes=4k: its messages then ride inside
 *   their descriptors).
 * - bound: server_buffer_bytes=4k (messages cut into parts of at most 1 KiB,
 *   slabs of 1 KiB) with either transport, byte for byte against the
 *   unbounded default; then a slow backend (null_delay_ms) behind servers
 *   whose memory is bounded: the servers' peak memory (tsr_get_stats) stays
 *   under the bound, with either transport and with concentrators (whose
 *   bundles count in it), while the same run unbounded goes past it.
 * - float: double memory into a float variable (tsr_put_typed) through the
 *   servers converted on the writer (default) and before the hand-off
 *   (precision=float), and through strategy=serial (converted by the API):
 *   every value equals the C cast (float)x of the double put, the two server
 *   files are byte-identical, and precision=float hands over exactly 4 bytes
 *   less per value.
 * - conc: concentrators (per node, per 1 and per 2 model ranks; with either
 *   transport; with bounded servers, so bundles are cut) byte for byte
 *   against the default, for the layouts above and for NetCDF-4 written by
 *   one server and by two (parallel HDF5; there without the bounded
 *   variants: cutting tiles into parts changes how HDF5 allocates the file
 *   whatever the transport); bad values (0, junk, more than the model ranks)
 *   are TSR_EHINT on every rank; with one concentrator for all model ranks
 *   the server receives fewer messages than without (at 3 ranks and more:
 *   with one model rank both send one message per op). */
#include <sys/statvfs.h>

#include "srv_fields.h"
#include "srv_rows.h"
#include "../c/test_util.h"

typedef struct {
  int G, T;
  const char *extra;
  const char *backend; /* NULL: netcdf for T = 1, pnetcdf for T > 1 */
} config;
static const config CONFIGS[] = {
    {1, 1, ":slab_bytes=1k", NULL},
    {2, 1, ":buffer_bytes=4k", NULL},
    {1, 2, "", NULL},
    {2, 2, ":buffer_bytes=2k", NULL},
};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0] };
/* Scenario conc: the layouts above, and the NetCDF-4 backend written by one
 * server (serial) and by a group of two (parallel HDF5). */
static const config CONC_CONFIGS[] = {
    {1, 1, ":slab_bytes=1k", NULL},
    {2, 1, ":buffer_bytes=4k", NULL},
    {1, 2, "", NULL},
    {2, 2, ":buffer_bytes=2k", NULL},
    {1, 1, ":slab_bytes=1k", "backend=netcdf4"},
    {1, 2, "", "backend=netcdf4"},
};
typedef struct {
  const char *label, *hints;
} variant;
static const variant RMA[] = {{"p2p", ":transport=p2p"}, {"rma", ":transport=rma"}};
/* The configs with buffer_bytes=4k or 2k give shm a ring smaller than an
 * op: the ring then grows outside the shared segment and its messages ride
 * inside their descriptors. */
static const variant SHM[] = {{"p2p", ":transport=p2p"}, {"shm", ":transport=shm"}};
static const variant CONC[] = {
    {"p2p", ""},
    {"node", ":concentrators=per_node"},
    {"c1", ":concentrators=1"},
    {"c2", ":concentrators=2"},
    {"noderma", ":concentrators=per_node:transport=rma"},
    {"nodeshm", ":concentrators=per_node:transport=shm"},
    /* 8k: with concentrators a message is an eighth of the bound less the
     * framing (tsr__srv_chunk), so bundles of about 1 KiB, as in the
     * bound's other variants; smaller ones are too many window attachments
     * in flight for rma. */
    {"c2rmab", ":concentrators=2:transport=rma:server_buffer_bytes=8k"},
    {"c2b", ":concentrators=2:server_buffer_bytes=8k"},
};
static const variant BOUND[] = {{"free", ""},
                                {"bp2p", ":server_buffer_bytes=4k"},
                                {"brma", ":server_buffer_bytes=4k:transport=rma"}};

/* Does variant @p V fit layout @p C with M model ranks (concentrators=N
 * needs N <= M)? Parallel NetCDF-4 files are compared only unbounded: with
 * server_buffer_bytes the servers write a tile in parts, and parallel HDF5
 * then lays the file out otherwise (with or without concentrators). */
static int fits(const config *C, const variant *V, int M) {
  const char *c = strstr(V->hints, "concentrators=");
  if (C->backend && C->T > 1 && strstr(V->hints, "server_buffer_bytes")) return 0;
  return !c || atoi(c + strlen("concentrators=")) <= M;
}

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
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
  if (model == MPI_COMM_NULL) { /* a server: it served until the model finalized */
    TSR_CHECK_EQ_INT(ctx == NULL, 1);
    return;
  }
  int M = np - C->G * C->T;
  const char *backend = C->backend ? C->backend : C->T > 1 ? "backend=pnetcdf" : "backend=netcdf";
  for (int k = 0; k < K_NKINDS; k++) {
    if (k == K_ZERO && M == 1) continue;
    decomps D;
    TSR_CHECK_OK(make_decomps(ctx, model, (kind)k, &D));
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
    TSR_CHECK_OK(rc);
    TSR_CHECK_OK(open_file(ctx, pb, hb, &D, 10, &B));
    TSR_CHECK_OK(put_frame(&A, &D, 0));
    TSR_CHECK_OK(put_frame(&B, &D, 0));
    TSR_CHECK_OK(tsr_close(&A.f));
    TSR_CHECK_OK(tsr_flush(B.f));
    TSR_CHECK_OK(put_frame(&B, &D, 1));
    TSR_CHECK_OK(put_frame(&B, &D, 2));
    TSR_CHECK_OK(tsr_close(&B.f));
    free_decomps(&D);
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

/* The double value put at a point: not representable in float. */
static double dvalue(int t, int64_t k, int64_t j, int64_t i) {
  return (double)tu_value(0, t, k, j, i) + 1.0 / 3.0;
}

/* One context: per kind a file with float variable D (NZ x NY x NX, 2
 * frames) put from halo'd double memory with tsr_put_typed. Returns the
 * bytes this rank handed to the servers (-1 on a server). */
static int64_t float_files(const config *C, const char *label, const char *extra, const char *dir,
                           const char *tag, int np) {
  char hints[256];
  snprintf(hints, sizeof hints, "strategy=servers:io_groups=%d:io_tasks=%d%s", C->G, C->T, extra);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
  if (model == MPI_COMM_NULL) return -1;
  int M = np - C->G * C->T;
  const char *fh = strcmp(label, "serial") == 0 ? "strategy=serial"
                   : C->T > 1                    ? "backend=pnetcdf"
                                                 : "backend=netcdf";
  for (int k = 0; k < K_NKINDS; k++) {
    if (k == K_ZERO && M == 1) continue;
    decomps D;
    TSR_CHECK_OK(make_decomps(ctx, model, (kind)k, &D));
    char path[512];
    path_of(path, sizeof path, dir, tag, (kind)k, label, 'F');
    tsr_file *f = NULL;
    int rc = tsr_create(ctx, path, fh, &f);
    if (rc == TSR_ENOTBUILT) {
      free_decomps(&D);
      break;
    }
    TSR_CHECK_OK(rc);
    int dt, dz, dy, dx, v;
    TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
    TSR_CHECK_OK(tsr_def_dim(f, "z", NZ, &dz));
    TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dy));
    TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dx));
    TSR_CHECK_OK(tsr_def_var(f, "D", TSR_FLOAT, 4, (int[]){dt, dz, dy, dx}, &v));
    TSR_CHECK_OK(tsr_enddef(f));
    const int64_t *mst = D.mst[1], *mct = D.mct[1];
    int64_t n = mct[0] * mct[1] * mct[2];
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    for (int t = 0; t < 2; t++) {
      int64_t q = 0;
      for (int64_t kk = 0; kk < mct[0]; kk++)
        for (int64_t jj = 0; jj < mct[1]; jj++)
          for (int64_t ii = 0; ii < mct[2]; ii++, q++)
            buf[q] = dvalue(t, mst[0] + kk, mst[1] + jj, mst[2] + ii); /* halos too */
      TSR_CHECK_OK(tsr_put_typed(f, v, t, D.d[1], TSR_DOUBLE, buf));
    }
    /* Only double -> float is converted. */
    TSR_CHECK_EQ_INT(tsr_put_typed(f, v, 0, D.d[1], TSR_INT, buf), TSR_EINVAL);
    free(buf);
    TSR_CHECK_OK(tsr_close(&f));
    free_decomps(&D);
  }
  tsr_stats st;
  TSR_CHECK_OK(tsr_get_stats(ctx, &st));
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  return st.server_bytes_sent;
}

/* Every value of D in @p path is (float) of the double put (fill in holes). */
static void verify_float(const char *path, kind kd) {
  int nc, vid;
  TSR_CHECK_EQ_INT(nc_open(path, NC_NOWRITE, &nc), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "D", &vid), NC_NOERR);
  static float got[2 * NZ * NY * NX];
  size_t st[4] = {0, 0, 0, 0}, ct[4] = {2, NZ, NY, NX};
  TSR_CHECK_EQ_INT(nc_get_vara_float(nc, vid, st, ct, got), NC_NOERR);
  int64_t bad = 0, q = 0;
  for (int t = 0; t < 2; t++)
    for (int64_t k = 0; k < NZ; k++)
      for (int64_t j = 0; j < NY; j++)
        for (int64_t i = 0; i < NX; i++, q++) {
          int hole = kd == K_HOLES && (j == 0 || i == NX - 1);
          float want = hole ? NC_FILL_FLOAT : (float)dvalue(t, k, j, i);
          if (memcmp(&got[q], &want, sizeof want) && bad++ == 0)
            fprintf(stderr, "%s: D[%d,%lld,%lld,%lld] = %.9g, want %.9g\n", path, t, (long long)k,
                    (long long)j, (long long)i, got[q], want);
        }
  TSR_CHECK_EQ_INT(bad, 0);
  nc_close(nc);
}

static void float_scenario(const char *dir, int np, int rank) {
  for (int c = 0; c < NCONFIGS; c++) {
    const config *C = &CONFIGS[c];
    int M = np - C->G * C->T;
    if (M < 1 || M < C->T) continue;
    char tag[64];
    snprintf(tag, sizeof tag, "float%d_G%dT%d_np%d", c, C->G, C->T, np);
    int64_t native = float_files(C, "wconv", C->extra, dir, tag, np);
    MPI_Barrier(MPI_COMM_WORLD);
    char ex[128];
    snprintf(ex, sizeof ex, "%s:precision=float", C->extra);
    int64_t single = float_files(C, "mconv", ex, dir, tag, np);
    MPI_Barrier(MPI_COMM_WORLD);
    float_files(C, "serial", C->extra, dir, tag, np);
    MPI_Barrier(MPI_COMM_WORLD);
    if (native >= 0) {
      /* Exactly 4 bytes less per value put on this rank (2 frames per kind;
       * the labels have equal lengths, so the OPEN messages are equal). */
      int64_t values = 0;
      for (int k = 0; k < K_NKINDS; k++) {
        if (k == K_ZERO && M == 1) continue;
        decomps D;
        memset(&D, 0, sizeof D);
        MPI_Comm_rank(MPI_COMM_WORLD, &D.rank); /* model ranks come first: servers last */
        D.size = M;
        D.k = (kind)k;
        int64_t s2[2], c2[2];
        tile2(&D, NX, s2, c2);
        values += 2 * NZ * c2[0] * c2[1];
      }
      TSR_CHECK_EQ_INT(native - single, 4 * values);
    }
    if (rank != 0) continue;
    for (int k = 0; k < K_NKINDS; k++) {
      if (k == K_ZERO && M == 1) continue;
      char a[512], b[512], r[512];
      path_of(a, sizeof a, dir, tag, (kind)k, "wconv", 'F');
      path_of(b, sizeof b, dir, tag, (kind)k, "mconv", 'F');
      path_of(r, sizeof r, dir, tag, (kind)k, "serial", 'F');
      FILE *probe = fopen(a, "rb");
      if (!probe) continue;
      fclose(probe);
      verify_float(a, (kind)k);
      verify_float(b, (kind)k);
      verify_float(r, (kind)k);
      TSR_CHECK_EQ_INT(same_bytes(a, b), 1);
    }
  }
}

/* The slow backend behind bounded servers: one 3-D double field of
 * 4 x 64 x 64 (128 KiB) cut in rows over the model ranks, 6 frames, each
 * block written with a 2 ms sleep; server_buffer_bytes = 64k. Returns the
 * servers' peak memory as the model ranks learned it (-1 on a server). */
static int64_t slow_run(const char *dir, const char *extra, const char *label, int T,
                        const char *backend, int msgs) {
  char hints[256], path[512];
  snprintf(hints, sizeof hints, "strategy=servers:io_tasks=%d:buffer_bytes=256k%s", T, extra);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
  if (model == MPI_COMM_NULL) return -1;
  enum { Z = 4, Y = 64, X = 64 };
  tsr_decomp *d = NULL;
  double *buf = NULL;
  TSR_CHECK_OK(srv_rows(ctx, model, Z, Y, X, &d, &buf));
  snprintf(path, sizeof path, "%s/slow_%s.nc", dir, label);
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, backend, &f));
  int dt, dz, dy, dx, v;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TSR_CHECK_OK(tsr_def_dim(f, "z", Z, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "y", Y, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", X, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "W", TSR_DOUBLE, 4, (int[]){dt, dz, dy, dx}, &v));
  TSR_CHECK_OK(tsr_enddef(f));
  for (int t = 0; t < 6; t++) TSR_CHECK_OK(tsr_put(f, v, t, d, buf));
  /* The servers' peak travels with the flush acknowledgement; the flush
   * comes after every frame was written. */
  TSR_CHECK_OK(tsr_flush(f));
  tsr_stats sts;
  TSR_CHECK_OK(tsr_get_stats(ctx, &sts));
  TSR_CHECK_OK(tsr_close(&f));
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  free(buf);
  MPI_Comm_free(&model);
  return msgs ? sts.server_msgs_received : sts.server_peak_bytes;
}

static int64_t slow_peak(const char *dir, const char *extra, const char *label, int T) {
  return slow_run(dir, extra, label, T, "backend=null:null_delay_ms=2", 0);
}

/* Messages the busiest server received for 6 frames of one field, with
 * @p extra (-1 on a server). */
static int64_t msgs_of(const char *dir, const char *extra, const char *label) {
  return slow_run(dir, extra, label, 1, "backend=null", 1);
}

/* transport=shm with rings that do not fit in /dev/shm: tsr_init fails
 * with TSR_ENOMEM on every rank, each with the sentence that names the
 * transport, the sizes and /dev/shm, before any window is made (Open MPI
 * would otherwise wait for good inside MPI_Win_allocate_shared). */
static void noroom_scenario(int rank) {
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) {
    if (rank == 0) printf("no /dev/shm: nothing to check\n");
    return;
  }
  long long free_bytes = (long long)fs.f_bavail * (long long)fs.f_frsize;
  char hints[160];
  snprintf(hints, sizeof hints, "strategy=servers:transport=shm:buffer_bytes=%lld",
           free_bytes + 4096);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  int rc = tsr_init(MPI_COMM_WORLD, hints, &ctx, &model);
  if (rc == TSR_EHINT) { /* more than this process may allocate: said so, also fine */
    if (rank == 0) printf("buffer_bytes %lld refused as a hint: %s\n", free_bytes, tsr_last_error());
    return;
  }
  TSR_CHECK_EQ_INT(rc, TSR_ENOMEM);
  TSR_CHECK_EQ_INT(ctx == NULL && model == MPI_COMM_NULL, 1);
  const char *m = tsr_last_error();
  if (!strstr(m, "transport=shm") || !strstr(m, "/dev/shm")) fprintf(stderr, "rank %d: %s\n", rank, m);
  TSR_CHECK_EQ_INT(strstr(m, "transport=shm") != NULL && strstr(m, "/dev/shm") != NULL, 1);
  /* The same job goes on with the default transport. */
  TSR_CHECK_EQ_INT(tsr_init(MPI_COMM_WORLD, "strategy=servers", &ctx, &model), TSR_OK);
  if (ctx) tsr_finalize(&ctx);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  int np, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *scenario = argc > 2 ? argv[2] : "rma";
  const variant *V = RMA;
  const config *configs = CONFIGS;
  int nv = 2, nconfigs = NCONFIGS;
  if (strcmp(scenario, "noroom") == 0) {
    noroom_scenario(rank);
    return tu_finish("servers_transport");
  }
  if (strcmp(scenario, "float") == 0) {
    float_scenario(dir, np, rank);
    return tu_finish("servers_transport");
  }
  if (strcmp(scenario, "bound") == 0) {
    V = BOUND;
    nv = 3;
  } else if (strcmp(scenario, "shm") == 0) {
    V = SHM;
  } else if (strcmp(scenario, "conc") == 0) {
    V = CONC;
    nv = (int)(sizeof CONC / sizeof CONC[0]);
    configs = CONC_CONFIGS;
    nconfigs = (int)(sizeof CONC_CONFIGS / sizeof CONC_CONFIGS[0]);
    /* Bad values: the same hint error on every rank, before any split. */
    char more[96];
    snprintf(more, sizeof more, "strategy=servers:concentrators=%d", np); /* M = np - 1 */
    const char *bad_hints[] = {"strategy=servers:concentrators=0",
                               "strategy=servers:concentrators=pigeon",
                               "strategy=servers:concentrators=-2",
                               "strategy=servers:concentrators=per_rack", more};
    for (size_t i = 0; i < sizeof bad_hints / sizeof bad_hints[0]; i++) {
      tsr_ctx *b = NULL;
      MPI_Comm nc = MPI_COMM_NULL;
      int rc = tsr_init(MPI_COMM_WORLD, bad_hints[i], &b, &nc);
      if (rc != TSR_EHINT) fprintf(stderr, "rank %d: %s -> %d\n", rank, bad_hints[i], rc);
      TSR_CHECK_EQ_INT(rc, TSR_EHINT);
      TSR_CHECK_EQ_INT(b == NULL && nc == MPI_COMM_NULL, 1);
    }
  } else if (strcmp(scenario, "rma") != 0 && strcmp(scenario, "shm") != 0) {
    if (rank == 0) fprintf(stderr, "unknown scenario %s\n", scenario);
    TSR_CHECK_EQ_INT(0, 1);
    return tu_finish("servers_transport");
  }
  /* Transport names come from the transport table: anything else is a hint
   * error on every rank, before any rank becomes a server. */
  tsr_ctx *bad = NULL;
  MPI_Comm none = MPI_COMM_NULL;
  TSR_CHECK_EQ_INT(tsr_init(MPI_COMM_WORLD, "strategy=servers:transport=pigeon", &bad, &none), TSR_EHINT);
  TSR_CHECK_EQ_INT(bad == NULL && none == MPI_COMM_NULL, 1);
  for (int c = 0; c < nconfigs; c++) {
    const config *C = &configs[c];
    int M = np - C->G * C->T;
    if (M < 1 || M < C->T) continue;
    char tag[64];
    snprintf(tag, sizeof tag, "%s%d_G%dT%d_np%d", scenario, c, C->G, C->T, np);
    for (int t = 0; t < nv; t++) {
      if (!fits(C, &V[t], M)) continue;
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
          if (!fits(C, &V[t], M)) continue;
          path_of(r, sizeof r, dir, tag, (kind)k, V[t].label, "AB"[fi]);
          verify(r, NULL, fi ? 3 : 1, fi ? 10 : 0, (kind)k, r);
          TSR_CHECK_EQ_INT(same_bytes(p, r), 1);
        }
      }
    }
  }
  if (strcmp(scenario, "conc") == 0) {
    /* One concentrator for every model rank: the server sees bundles, one
     * per op, instead of every rank's messages. */
    char all[64];
    snprintf(all, sizeof all, ":concentrators=%d", np - 1);
    int64_t plain = msgs_of(dir, "", "msgs_plain");
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t conc = msgs_of(dir, all, "msgs_conc");
    MPI_Barrier(MPI_COMM_WORLD);
    if (plain >= 0) {
      if (rank == 0)
        printf("messages received by the server: %lld without, %lld with %s\n",
               (long long)plain, (long long)conc, all + 1);
      /* One model rank sends one message per op either way. */
      TSR_CHECK_EQ_INT(conc > 0 && (np == 2 ? conc <= plain : conc < plain), 1);
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
    /* Concentrators: the bundles a server holds count in its peak too (one
     * per node; one per 2 model ranks over rma where there are 2). */
    int64_t bounded_node =
        slow_peak(dir, ":server_buffer_bytes=64k:concentrators=per_node", "bounded_node", T);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *c2 = np - T >= 2 ? ":server_buffer_bytes=64k:concentrators=2:transport=rma"
                                 : ":server_buffer_bytes=64k:concentrators=1:transport=rma";
    int64_t bounded_c2 = slow_peak(dir, c2, "bounded_c2", T);
    MPI_Barrier(MPI_COMM_WORLD);
    if (free_peak >= 0) {
      if (rank == 0)
        printf("server peak memory: bounded %lld, bounded rma %lld, unbounded %lld, "
               "bounded per_node %lld, bounded %s %lld (bound 65536)\n",
               (long long)bounded, (long long)bounded_rma, (long long)free_peak,
               (long long)bounded_node, c2 + 1, (long long)bounded_c2);
      TSR_CHECK_EQ_INT(bounded > 0 && bounded <= 65536, 1);
      TSR_CHECK_EQ_INT(bounded_rma > 0 && bounded_rma <= 65536, 1);
      TSR_CHECK_EQ_INT(bounded_node > 0 && bounded_node <= 65536, 1);
      TSR_CHECK_EQ_INT(bounded_c2 > 0 && bounded_c2 <= 65536, 1);
      /* Without the bound a server holds at least a whole tile (the
       * largest is no smaller than 128 KiB / M), more than the bound at 2 ranks. */
      TSR_CHECK_EQ_INT(free_peak >= (int64_t)131072 / (np - T), 1);
    }
  }
  return tu_finish("servers_transport");
}
