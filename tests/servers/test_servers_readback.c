/* strategy=servers, read back in the same job: tsr_close returns before the
 * servers have written the file, so tsr_open must wait until they finished
 * it (renamed into place) and then see every value. The field is large
 * enough (8 frames of 512x512 floats, 8 MiB) that the servers are still
 * writing when the model calls tsr_open; a file that is not there yet gives
 * TSR_EACCES, a half-written one wrong values or frames. */
#include "tsr_test.h"

enum { NY = 512, NX = 512, NT = 8, NFILES = 3 };

static float value(int64_t t, int64_t y, int64_t x) { return (float)(t * 1000000 + y * NX + x); }

static void write_then_read(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=1:io_tasks=1", &ctx, &model));
  if (model == MPI_COMM_NULL) return; /* a server: it served until the model finalized */
  int me, P;
  MPI_Comm_rank(model, &me);
  MPI_Comm_size(model, &P);
  /* Row slabs: rank r holds rows [y0, y1). */
  int64_t y0 = (int64_t)NY * me / P, y1 = (int64_t)NY * (me + 1) / P;
  int64_t gsize[2] = {NY, NX}, start[2] = {y0, 0}, count[2] = {y1 - y0, NX};
  tsr_decomp *d;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, gsize, start, count, NULL, NULL, &d));
  float *buf = malloc(sizeof(float) * (size_t)((y1 - y0) * NX + 1));
  float *all = malloc(sizeof(float) * NY * NX);
  const char *dir = tsr_test_arg(0, ".");
  for (int n = 0; n < NFILES; n++) {
    char path[512];
    snprintf(path, sizeof path, "%s/readback_np%d_%d.nc", dir, tsr_test_nranks(), n);
    tsr_test_case("%s", path);
    if (me == 0) remove(path); /* a file from an earlier run would hide a missing one */
    MPI_Barrier(model);
    tsr_file *f;
    int dims[3], v;
    TSR_CHECK_OK(tsr_create(ctx, path, NULL, &f));
    TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
    TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dims[1]));
    TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dims[2]));
    TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 3, dims, &v));
    TSR_CHECK_OK(tsr_enddef(f));
    for (int64_t t = 0; t < NT; t++) {
      for (int64_t y = y0; y < y1; y++)
        for (int64_t x = 0; x < NX; x++) buf[(y - y0) * NX + x] = value(t + n, y, x);
      TSR_CHECK_OK(tsr_put(f, v, t, d, buf));
    }
    TSR_CHECK_OK(tsr_close(&f));
    tsr_file *r;
    TSR_CHECK_OK(tsr_open(ctx, path, NULL, &r));
    if (!r) continue;
    int unlim = -1, vid = -1;
    int64_t nrec = -1;
    TSR_CHECK_OK(tsr_inq(r, NULL, NULL, NULL, &unlim));
    TSR_CHECK_OK(tsr_inq_dim(r, unlim, NULL, &nrec));
    TSR_CHECK_EQ_INT((int)nrec, NT);
    TSR_CHECK_OK(tsr_inq_varid(r, "T", &vid));
    long bad = 0;
    for (int64_t t = 0; t < NT; t++) {
      TSR_CHECK_OK(tsr_get(r, vid, t, NULL, all));
      for (int64_t y = 0; y < NY; y++)
        for (int64_t x = 0; x < NX; x++) bad += all[y * NX + x] != value(t + n, y, x);
    }
    TSR_CHECK_EQ_INT((int)bad, 0);
    TSR_CHECK_OK(tsr_close(&r));
  }
  free(buf);
  free(all);
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"write_then_read", write_then_read, 2},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "servers_readback", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
