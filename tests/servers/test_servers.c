/* strategy=servers, data: for every server layout that fits the rank count
 * (io_groups G in {1, 2} x io_tasks T in {1, 2}, servers last or first, the
 * round-robin and idle group picks), every decomposition kind (even, uneven,
 * holes, halo'd memory, an empty tile) and both backends: two files open at
 * once (1 frame and 3 frames), written through the servers, read back with
 * NetCDF (and B at once with tsr_open in the job) and compared exactly with the check function and with the same data
 * written by strategy=serial. A small ring (buffer_bytes) and small slabs
 * make the model wait for ring space and the root assemble several slabs. */
#include <sys/stat.h>

#include "srv_fields.h"

typedef struct {
  int G, T;
  const char *extra;
} config;
static const config CONFIGS[] = {
    {1, 1, ""},
    {2, 1, ":buffer_bytes=4k"},
    {1, 2, ""},
    {2, 2, ""},
    {2, 1, ":server_pick=idle"},
    {1, 1, ":server_ranks=first:slab_bytes=1k"},
    {1, 2, ":server_ranks=first:buffer_bytes=2k"},
};
enum { NCONFIGS = sizeof CONFIGS / sizeof CONFIGS[0] };
static const char *BACKENDS[] = {"netcdf", "pnetcdf"};

typedef struct {
  char path[512], ref[512];
  int nt, t0;
  kind k;
} pending;

static pending todo[256];
static int ntodo;

/* Two server files open at once plus their serial references. */
static void write_pair(tsr_ctx *ctx, const decomps *D, const char *dir, const char *tag,
                       const char *backend) {
  char pa[512], pb[512], ra[512], rb[512], ha[128], hb[128];
  snprintf(pa, sizeof pa, "%s/%s_%s_%s_A.nc", dir, tag, kind_name[D->k], backend);
  snprintf(pb, sizeof pb, "%s/%s_%s_%s_B.nc", dir, tag, kind_name[D->k], backend);
  snprintf(ra, sizeof ra, "%s/%s_%s_%s_A.ref.nc", dir, tag, kind_name[D->k], backend);
  snprintf(rb, sizeof rb, "%s/%s_%s_%s_B.ref.nc", dir, tag, kind_name[D->k], backend);
  snprintf(ha, sizeof ha, "backend=%s", backend);
  snprintf(hb, sizeof hb, "backend=%s:frames_per_outfile=3", backend);
  wfile A, B, RA, RB;
  int rc = open_file(ctx, pa, ha, D, 0, &A);
  if (rc == TSR_ENOTBUILT) return; /* pnetcdf not built: the same answer everywhere */
  TSR_CHECK_OK(rc);
  TSR_CHECK_OK(open_file(ctx, pb, hb, D, 10, &B));
  TSR_CHECK_OK(put_frame(&A, D, 0));
  TSR_CHECK_OK(put_frame(&B, D, 0));
  TSR_CHECK_OK(tsr_close(&A.f));
  /* tsr_flush waits for every file closed before: A must be complete now. */
  TSR_CHECK_OK(tsr_flush(B.f));
  if (D->rank == 0) {
    char label[600];
    snprintf(label, sizeof label, "%s/%s/%s/A-after-flush", tag, kind_name[D->k], backend);
    verify(pa, NULL, 1, 0, D->k, label);
  }
  TSR_CHECK_OK(put_frame(&B, D, 1));
  TSR_CHECK_OK(put_frame(&B, D, 2));
  TSR_CHECK_OK(tsr_close(&B.f));
  /* tsr_open waits for the servers to finish B: read back at once, in the job. */
  tsr_file *R;
  TSR_CHECK_OK(tsr_open(ctx, pb, NULL, &R));
  int ndims = 0, nvars = 0, ngatts = 0, unlim = -1;
  int64_t nrec = -1;
  TSR_CHECK_OK(tsr_inq(R, &ndims, &nvars, &ngatts, &unlim));
  TSR_CHECK_OK(tsr_inq_dim(R, unlim, NULL, &nrec));
  TSR_CHECK_EQ_INT((int)nrec, 3);
  TSR_CHECK_OK(tsr_close(&R));
  /* References, synchronous, on the model ranks. */
  TSR_CHECK_OK(open_file(ctx, ra, "strategy=serial", D, 0, &RA));
  TSR_CHECK_OK(put_frame(&RA, D, 0));
  TSR_CHECK_OK(tsr_close(&RA.f));
  TSR_CHECK_OK(open_file(ctx, rb, "strategy=serial", D, 10, &RB));
  for (int t = 0; t < 3; t++) TSR_CHECK_OK(put_frame(&RB, D, t));
  TSR_CHECK_OK(tsr_close(&RB.f));
  if (ntodo + 2 <= (int)(sizeof todo / sizeof todo[0])) {
    todo[ntodo++] = (pending){"", "", 1, 0, D->k};
    snprintf(todo[ntodo - 1].path, 512, "%s", pa);
    snprintf(todo[ntodo - 1].ref, 512, "%s", ra);
    todo[ntodo++] = (pending){"", "", 3, 10, D->k};
    snprintf(todo[ntodo - 1].path, 512, "%s", pb);
    snprintf(todo[ntodo - 1].ref, 512, "%s", rb);
  }
}

int main(int argc, char **argv) {
  srv_test_init(&argc, &argv, "test_servers");
  int np;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *dir = argc > 1 ? argv[1] : ".";
  int ran = 0;
  for (int c = 0; c < NCONFIGS; c++) {
    const config *C = &CONFIGS[c];
    int S = C->G * C->T, M = np - S;
    if (M < 1 || M < C->T) continue; /* tests/servers/test_servers_errors.c covers these */
    char hints[256], tag[64];
    snprintf(hints, sizeof hints, "strategy=servers:io_groups=%d:io_tasks=%d%s", C->G, C->T,
             C->extra);
    snprintf(tag, sizeof tag, "srv%d_G%dT%d_np%d", c, C->G, C->T, np);
    tsr_ctx *ctx = NULL;
    MPI_Comm model = MPI_COMM_NULL;
    TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, hints, &ctx, &model));
    if (model == MPI_COMM_NULL) { /* a server: it served until the model finalized */
      TSR_CHECK_EQ_INT(ctx == NULL, 1);
      MPI_Barrier(MPI_COMM_WORLD);
      continue;
    }
    ran++;
    ntodo = 0;
    int mrank;
    MPI_Comm_rank(model, &mrank);
    int msize;
    MPI_Comm_size(model, &msize);
    TSR_CHECK_EQ_INT(msize, M);
    for (int k = 0; k < K_NKINDS; k++) {
      if (k == K_ZERO && M == 1) continue;
      decomps D;
      TSR_CHECK_OK(make_decomps(ctx, model, (kind)k, &D));
      for (int b = 0; b < 2; b++) write_pair(ctx, &D, dir, tag, BACKENDS[b]);
      free_decomps(&D);
    }
    tsr_stats st;
    TSR_CHECK_OK(tsr_get_stats(ctx, &st));
    TSR_CHECK_EQ_INT(st.server_writer_s > 0, 1); /* learned at the flushes */
    TSR_CHECK_OK(tsr_finalize(&ctx));
    TSR_CHECK_EQ_INT(ctx == NULL, 1);
    if (mrank == 0)
      for (int i = 0; i < ntodo; i++) {
        verify(todo[i].path, todo[i].ref, todo[i].nt, todo[i].t0, todo[i].k, todo[i].path);
      }
    MPI_Comm_free(&model);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  (void)ran;
  return srv_test_finish("servers");
}
