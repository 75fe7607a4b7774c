/* echam_bands.c: output of an ECHAM-like model (a Gaussian grid in grid-point
 * space; the spectral fields are not written) through Tessera. As in ECHAM's
 * decomposition, the ranks form an nproca x nprocb grid: set A splits the
 * latitudes into bands, each a northern band and its mirror in the southern
 * hemisphere, set B splits the longitudes. So every rank owns two boxes.
 *
 *   mpiexec -n 4 echam_bands FILE
 *
 * FILE gets NFRAMES records of st(time, lev, lat, lon) and aps(time, lat, lon)
 * and the latitudes. Values: the examples' check pattern (check_output.c),
 * v = 0 for st and 1 for aps. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera.h>

enum { NLON = 64, NLAT = 32, NLEV = 4, NFRAMES = 2 }; /* T21's grid */

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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *path = argc > 1 ? argv[1] : "echam_bands.nc";
  tsr_ctx *ctx;
  MPI_Comm model;
  CHECK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  if (model == MPI_COMM_NULL) { /* an I/O server, done */
    MPI_Finalize();
    return 0;
  }
  int rank, nranks, dims[2] = {0, 0};
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &nranks);
  MPI_Dims_create(nranks, 2, dims);
  int nproca = dims[0], nprocb = dims[1], a = rank / nprocb, b = rank % nprocb;
  /* Set A: rows n0 .. n0+nn-1 of the northern hemisphere (lat index 0 is the
   * northernmost row) and their mirror rows NLAT-n0-nn .. NLAT-n0-1. */
  int64_t n0 = NLAT / 2 * a / nproca, nn = NLAT / 2 * (a + 1) / nproca - n0;
  int64_t i0 = NLON * b / nprocb, ni = NLON * (b + 1) / nprocb - i0; /* set B */

  /* Two boxes per rank, north then south; in the buffer they follow one
   * another, each C-ordered over its own extent. */
  int64_t g3[3] = {NLEV, NLAT, NLON};
  int64_t s3[6] = {0, n0, i0, 0, NLAT - n0 - nn, i0}, c3[6] = {NLEV, nn, ni, NLEV, nn, ni};
  int64_t s2[4] = {n0, i0, NLAT - n0 - nn, i0}, c2[4] = {nn, ni, nn, ni};
  tsr_decomp *d3, *d2;
  CHECK(tsr_decomp_boxes(ctx, 3, g3, 2, s3, c3, &d3));
  CHECK(tsr_decomp_boxes(ctx, 2, g3 + 1, 2, s2, c2, &d2));

  tsr_file *f;
  int dt, dlev, dlat, dlon, vlat, vst, vaps;
  CHECK(tsr_create(ctx, path, NULL, &f));
  CHECK(tsr_def_dim(f, "time", TSR_UNLIMITED, &dt));
  CHECK(tsr_def_dim(f, "lev", NLEV, &dlev));
  CHECK(tsr_def_dim(f, "lat", NLAT, &dlat));
  CHECK(tsr_def_dim(f, "lon", NLON, &dlon));
  CHECK(tsr_def_var(f, "lat", TSR_DOUBLE, 1, &dlat, &vlat));
  CHECK(tsr_def_var(f, "st", TSR_FLOAT, 4, (int[]){dt, dlev, dlat, dlon}, &vst));
  CHECK(tsr_def_var(f, "aps", TSR_FLOAT, 3, (int[]){dt, dlat, dlon}, &vaps));
  CHECK(tsr_put_att(f, vlat, "units", TSR_CHAR, 13, "degrees_north"));
  CHECK(tsr_def_var_decomp(f, vst, d3));
  CHECK(tsr_def_var_decomp(f, vaps, d2));
  CHECK(tsr_enddef(f));

  double lat[NLAT]; /* equally spaced here; a model writes its Gaussian latitudes */
  for (int j = 0; j < NLAT; j++) lat[j] = 90.0 - 180.0 * (j + 0.5) / NLAT;
  CHECK(tsr_put_global(f, vlat, 0, lat)); /* a fixed variable: the frame is ignored */

  int64_t npts = 2 * nn * ni;
  float *st = malloc(sizeof *st * NLEV * npts), *aps = malloc(sizeof *aps * npts);
  for (int t = 0; t < NFRAMES; t++) {
    float *p3 = st, *p2 = aps;
    for (int box = 0; box < 2; box++) { /* the model's work, box by box */
      int64_t j0 = box == 0 ? n0 : NLAT - n0 - nn;
      for (int64_t k = 0; k < NLEV; k++)
        for (int64_t j = j0; j < j0 + nn; j++)
          for (int64_t i = i0; i < i0 + ni; i++) *p3++ = pattern(0, t, k, j, i);
      for (int64_t j = j0; j < j0 + nn; j++)
        for (int64_t i = i0; i < i0 + ni; i++) *p2++ = pattern(1, t, 0, j, i);
    }
    CHECK(tsr_put(f, vst, t, NULL, st));
    CHECK(tsr_put(f, vaps, t, NULL, aps));
  }
  CHECK(tsr_close(&f));
  if (rank == 0) printf("echam_bands: wrote %s (%d records)\n", path, (int)NFRAMES);

  tsr_decomp_free(&d3);
  tsr_decomp_free(&d2);
  CHECK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  free(st);
  free(aps);
  MPI_Finalize();
  return 0;
}
