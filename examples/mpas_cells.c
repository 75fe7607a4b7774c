/* mpas_cells.c: output of an MPAS-like model (an unstructured mesh) through
 * Tessera: each rank owns a scattered set of cells, as a graph partition
 * (METIS' graph.info.part.N) gives them, and holds them in its own order,
 * followed by halo (ghost) cells it does not own.
 *
 *   mpiexec -n 4 mpas_cells FILE
 *
 * FILE gets NFRAMES records of theta(Time, nCells, nVertLevels) and
 * surface_pressure(Time, nCells), in MPAS' dimension order (levels fastest).
 * Values: the examples' check pattern (check_output.c) with i = level,
 * j = cell, v = 0 for theta and 1 for surface_pressure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera.h>

enum { NCELLS = 642, NLEV = 4, NGHOST = 3, NFRAMES = 3 };

#define CHECK(call)                                                                   \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != 0) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s, %s %s\n", __FILE__, __LINE__, #call,            \
              tsr_errname(rc_), tsr_strerror(rc_), tsr_last_error());                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

static float pattern(int v, int t, int64_t j, int64_t i) {
  return (float)((i + 7 * j + 8191 * (int64_t)t + 524287 * (int64_t)v) % 16777216);
}

/* The partition: which rank owns cell c (a stand-in for graph.info.part.N). */
static int owner(int64_t c, int nranks) { return (int)(c * 37 % NCELLS * nranks / NCELLS); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *path = argc > 1 ? argv[1] : "mpas_cells.nc";
  tsr_ctx *ctx;
  MPI_Comm model;
  CHECK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  if (model == MPI_COMM_NULL) { /* an I/O server, done */
    MPI_Finalize();
    return 0;
  }
  int rank, nranks;
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &nranks);

  /* The rank's cells: its own (in the partition's order), then NGHOST halo
   * cells owned by others. Global cell ids are 0-based (MPAS' indexToCellID-1). */
  int64_t ncells = 0, cell[NCELLS + NGHOST];
  for (int64_t c = NCELLS - 1; c >= 0; c--) /* any order: here descending */
    if (owner(c, nranks) == rank) cell[ncells++] = c;
  int64_t nowned = ncells;
  for (int64_t c = 0; c < NCELLS && ncells < nowned + NGHOST; c++)
    if (owner(c, nranks) != rank) cell[ncells++] = c;

  /* Index maps: buffer position -> flat global index; -1 leaves a position
   * out (the halo cells, which their owners write). */
  int64_t *map2 = malloc(sizeof *map2 * ncells), *map3 = malloc(sizeof *map3 * ncells * NLEV);
  for (int64_t p = 0; p < ncells; p++) {
    map2[p] = p < nowned ? cell[p] : -1;
    for (int64_t k = 0; k < NLEV; k++)
      map3[p * NLEV + k] = p < nowned ? cell[p] * NLEV + k : -1;
  }
  tsr_decomp *d2, *d3;
  int64_t gsize[2] = {NCELLS, NLEV};
  CHECK(tsr_decomp_map(ctx, 1, gsize, ncells, map2, &d2));
  CHECK(tsr_decomp_map(ctx, 2, gsize, ncells * NLEV, map3, &d3));
  free(map2); /* the decomposition keeps what it needs */
  free(map3);

  tsr_file *f;
  int dT, dc, dl, vth, vps;
  CHECK(tsr_create(ctx, path, NULL, &f));
  CHECK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT));
  CHECK(tsr_def_dim(f, "nCells", NCELLS, &dc));
  CHECK(tsr_def_dim(f, "nVertLevels", NLEV, &dl));
  CHECK(tsr_def_var(f, "theta", TSR_FLOAT, 3, (int[]){dT, dc, dl}, &vth));
  CHECK(tsr_def_var(f, "surface_pressure", TSR_FLOAT, 2, (int[]){dT, dc}, &vps));
  CHECK(tsr_def_var_decomp(f, vth, d3));
  CHECK(tsr_def_var_decomp(f, vps, d2));
  CHECK(tsr_enddef(f));

  float *theta = malloc(sizeof *theta * ncells * NLEV), *ps = malloc(sizeof *ps * ncells);
  for (int t = 0; t < NFRAMES; t++) {
    for (int64_t p = 0; p < ncells; p++) { /* the model's work */
      ps[p] = pattern(1, t, 0, cell[p]);
      for (int64_t k = 0; k < NLEV; k++) theta[p * NLEV + k] = pattern(0, t, cell[p], k);
    }
    CHECK(tsr_put(f, vth, t, NULL, theta));
    CHECK(tsr_put(f, vps, t, NULL, ps));
  }
  CHECK(tsr_close(&f));
  if (rank == 0) printf("mpas_cells: wrote %s (%d records)\n", path, (int)NFRAMES);

  tsr_decomp_free(&d2);
  tsr_decomp_free(&d3);
  CHECK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  free(theta);
  free(ps);
  MPI_Finalize();
  return 0;
}
