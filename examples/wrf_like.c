/* wrf_like.c: the history output of a WRF-like model through Tessera.
 *
 * A 3-D domain (NX x NY x NZ) on a 2-D grid of patches, one per model rank;
 * each rank holds its patch with a halo of H points in x and y (WRF's
 * ims..ime around ips..ipe). Every EVERY steps the model writes one history
 * file, wrfout_d01_<date>, holding Times, T(Time, bottom_top, south_north,
 * west_east) and T2(Time, south_north, west_east).
 *
 *   mpiexec -n 4 wrf_like OUTDIR [NSTEPS]
 *
 * The strategy comes from TESSERA_HINTS at run time (docs/guide.md). The
 * values are those of the design guide's check pattern, so check_output can
 * verify every one: f(v, t, k, j, i) = (i + 7j + 131k + 8191t + 524287v) mod
 * 2^24, v = 0 for T and 1 for T2, t the output's number over the run. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera.h>

enum { NX = 40, NY = 30, NZ = 5, H = 1, EVERY = 2 };

/* Every Tessera call returns 0 or the same TSR_E* code on every rank. */
#define CHECK(call)                                                                   \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != 0) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s, %s %s\n", __FILE__, __LINE__, #call,            \
              tsr_errname(rc_), tsr_strerror(rc_), tsr_last_error());                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

static float pattern(int v, int t, int64_t k, int64_t j, int64_t i) {
  return (float)((i + 7 * j + 131 * k + 8191 * (int64_t)t + 524287 * (int64_t)v) % 16777216);
}

/* One history file: define its schema, put every field once, close. */
static void write_history(tsr_ctx *ctx, const char *path, const char *times,
                          const tsr_decomp *d3, const tsr_decomp *d2, const float *t3,
                          const float *t2) {
  tsr_file *f;
  int dT, dS, dz, dy, dx, vTimes, vT, vT2;
  CHECK(tsr_create(ctx, path, NULL, &f));
  CHECK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  CHECK(tsr_def_dim(f, "DateStrLen", 19, &dS));
  CHECK(tsr_def_dim(f, "bottom_top", NZ, &dz));
  CHECK(tsr_def_dim(f, "south_north", NY, &dy));
  CHECK(tsr_def_dim(f, "west_east", NX, &dx));
  CHECK(tsr_def_var(f, "Times", TSR_CHAR, 2, (int[]){dT, dS}, &vTimes));
  CHECK(tsr_def_var(f, "T", TSR_FLOAT, 4, (int[]){dT, dz, dy, dx}, &vT));
  CHECK(tsr_def_var(f, "T2", TSR_FLOAT, 3, (int[]){dT, dy, dx}, &vT2));
  CHECK(tsr_put_att(f, vT, "units", TSR_CHAR, 1, "K"));
  CHECK(tsr_put_att(f, vT2, "units", TSR_CHAR, 1, "K"));
  CHECK(tsr_put_att(f, TSR_GLOBAL, "TITLE", TSR_CHAR, 8, "wrf_like"));
  CHECK(tsr_def_var_decomp(f, vT, d3)); /* each variable's decomposition: split needs it */
  CHECK(tsr_def_var_decomp(f, vT2, d2));
  CHECK(tsr_enddef(f));
  CHECK(tsr_put_global(f, vTimes, 0, times)); /* replicated: the same on every rank */
  CHECK(tsr_put(f, vT, 0, NULL, t3));         /* NULL: the variable's decomposition */
  CHECK(tsr_put(f, vT2, 0, NULL, t2));
  CHECK(tsr_close(&f)); /* 0: the file is complete under its final name */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *outdir = argc > 1 ? argv[1] : ".";
  int nsteps = argc > 2 ? atoi(argv[2]) : 6;

  /* Once: start Tessera. With strategy=servers some ranks become I/O servers:
   * tsr_init returns on them when the model ranks call tsr_finalize. */
  tsr_ctx *ctx;
  MPI_Comm model;
  CHECK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  if (model == MPI_COMM_NULL) { /* an I/O server, done */
    MPI_Finalize();
    return 0;
  }

  /* The model's own decomposition, on the model communicator: a 2-D grid of
   * patches, patch (py, px) owns rows j0 .. j0+nj-1 and columns i0 .. i0+ni-1. */
  int rank, nranks, dims[2] = {0, 0};
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &nranks);
  MPI_Dims_create(nranks, 2, dims);
  int py = rank / dims[1], px = rank % dims[1];
  int64_t j0 = NY * py / dims[0], nj = NY * (py + 1) / dims[0] - j0;
  int64_t i0 = NX * px / dims[1], ni = NX * (px + 1) / dims[1] - i0;
  int64_t mj = nj + 2 * H, mi = ni + 2 * H; /* memory: the patch and its halo */
  float *t3 = malloc(sizeof *t3 * NZ * mj * mi), *t2 = malloc(sizeof *t2 * mj * mi);

  /* Once per field shape: the patch in the file, and the memory box around it,
   * so that tsr_put reads the model's halo'd array in place. */
  tsr_decomp *d3, *d2;
  int64_t gsize[3] = {NZ, NY, NX}, start[3] = {0, j0, i0}, count[3] = {NZ, nj, ni};
  int64_t mstart[3] = {0, j0 - H, i0 - H}, mcount[3] = {NZ, mj, mi};
  CHECK(tsr_decomp_box(ctx, 3, gsize, start, count, mstart, mcount, &d3));
  CHECK(tsr_decomp_box(ctx, 2, gsize + 1, start + 1, count + 1, mstart + 1, mcount + 1, &d2));

  for (int step = 0, t = 0; step <= nsteps; step++) {
    /* The model's work; here the fields of output t, halos -1 (never written). */
    for (int64_t k = 0; k < NZ; k++)
      for (int64_t j = j0 - H; j < j0 + nj + H; j++)
        for (int64_t i = i0 - H; i < i0 + ni + H; i++) {
          int inside = j >= j0 && j < j0 + nj && i >= i0 && i < i0 + ni;
          int64_t m = (j - j0 + H) * mi + (i - i0 + H);
          t3[k * mj * mi + m] = inside ? pattern(0, t, k, j, i) : -1.0f;
          if (k == 0) t2[m] = inside ? pattern(1, t, 0, j, i) : -1.0f;
        }
    if (step % EVERY != 0) continue;
    /* Output time: one file per output, as WRF with frames_per_outfile=1. */
    char times[32], path[4096];
    snprintf(times, sizeof times, "2026-01-01_%02d:%02d:00", step * 10 / 60, step * 10 % 60);
    snprintf(path, sizeof path, "%s/wrfout_d01_%s", outdir, times);
    write_history(ctx, path, times, d3, d2, t3, t2);
    if (rank == 0) printf("wrf_like: wrote %s\n", path);
    t++;
  }

  /* Once: free the decompositions, stop Tessera (waits for the servers). */
  tsr_decomp_free(&d3);
  tsr_decomp_free(&d2);
  CHECK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  free(t3);
  free(t2);
  MPI_Finalize();
  return 0;
}
