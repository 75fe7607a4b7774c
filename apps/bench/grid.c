/* The process grid and the rule that cuts a dimension into tiles: below
 * fields.c and cells.c, which both lay their shapes out with bench_tile
 * (moved here from fields.c so that cells.c does not call back into it). */
#include <stdio.h>
#include <string.h>

#include "bench.h"

int bench_grid_setup(bench_grid *g, MPI_Comm comm, const bench_config *c, char *err,
                     size_t errlen) {
  memset(g, 0, sizeof *g);
  g->comm = comm;
  MPI_Comm_rank(comm, &g->rank);
  MPI_Comm_size(comm, &g->size);
  int px = c->px, py = c->py;
  if (px && py) {
    if (px * py != g->size) {
      snprintf(err, errlen, "process grid %d x %d does not match %d model ranks", px, py, g->size);
      return -1;
    }
  } else if (px || py) {
    int given = px ? px : py;
    if (g->size % given != 0) {
      snprintf(err, errlen, "%s = %d does not divide %d model ranks", px ? "px" : "py", given,
               g->size);
      return -1;
    }
    if (px)
      py = g->size / px;
    else
      px = g->size / py;
  } else {
    int dims[2] = {0, 0};
    MPI_Dims_create(g->size, 2, dims); /* dims[0] >= dims[1] */
    px = c->nx >= c->ny ? dims[0] : dims[1];
    py = c->nx >= c->ny ? dims[1] : dims[0];
  }
  if (px > c->nx || py > c->ny) {
    snprintf(err, errlen, "process grid %d x %d is larger than the domain %d x %d", px, py, c->nx,
             c->ny);
    return -1;
  }
  g->px = px;
  g->py = py;
  g->cx = g->rank % px;
  g->cy = g->rank / px;
  g->west = g->cx > 0 ? g->rank - 1 : MPI_PROC_NULL;
  g->east = g->cx < px - 1 ? g->rank + 1 : MPI_PROC_NULL;
  g->south = g->cy > 0 ? g->rank - px : MPI_PROC_NULL;
  g->north = g->cy < py - 1 ? g->rank + px : MPI_PROC_NULL;
  g->nx = c->nx;
  g->ny = c->ny;
  g->nz = c->nz;
  return 0;
}

void bench_tile(int64_t n, int p, int c, int stag, int64_t *start, int64_t *count) {
  int64_t base = n / p, rem = n % p;
  *start = c * base + (c < rem ? c : rem);
  *count = base + (c < rem ? 1 : 0);
  if (stag && c == p - 1) *count += 1;
}
