/* --decomp cells: an MPAS-like decomposition. The horizontal points of each
 * shape are dealt to the ranks in a seeded pseudo-random order, so a rank's
 * points are scattered over the domain as an unstructured mesh's cells are
 * after graph partitioning, and its buffer holds them in that shuffled order.
 * The fields reach Tessera through tsr_decomp_map, which shows next to the
 * default boxes what an irregular map costs. Cells have no neighbours in the
 * buffer, so the stencil and the halo exchange leave these shapes alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The same seed on every rank and every run: every rank computes the same
 * permutation without communication, and files can be compared across runs. */
#define CELLS_SEED 0x5eed7e55e7aULL

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int64_t horiz_x(const bench_shape *sh) { return sh->xdim >= 0 ? sh->gsize[sh->xdim] : 1; }
static int64_t horiz_y(const bench_shape *sh) { return sh->ydim >= 0 ? sh->gsize[sh->ydim] : 1; }

void bench_cells_shape(const bench_run *run, bench_shape *sh) {
  int64_t hpoints = horiz_x(sh) * horiz_y(sh), other = 1, lo;
  for (int d = 0; d < sh->ndims; d++)
    if (d != sh->xdim && d != sh->ydim) other *= sh->gsize[d];
  bench_tile(hpoints, run->grid.size, run->grid.rank, 0, &lo, &sh->ncells);
  sh->nother = other;
  sh->mem_elems = sh->tile_elems = sh->ncells * other;
  sh->std = 0; /* not stepped: no stencil over scattered cells */
  sh->xzy = 0;
  sh->cells = NULL;
}

/* The global index of element `o` of the other dimensions (row-major over
 * them) at horizontal point h. */
static void cell_gidx(const bench_shape *sh, int64_t h, int64_t o, int64_t gidx[]) {
  int64_t hx = horiz_x(sh);
  for (int d = sh->ndims - 1; d >= 0; d--) {
    if (d == sh->xdim) {
      gidx[d] = h % hx;
    } else if (d == sh->ydim) {
      gidx[d] = h / hx;
    } else {
      gidx[d] = o % sh->gsize[d];
      o /= sh->gsize[d];
    }
  }
}

int bench_cells_decomp(bench_run *run, bench_shape *sh) {
  int64_t hpoints = horiz_x(sh) * horiz_y(sh), lo, cnt;
  bench_tile(hpoints, run->grid.size, run->grid.rank, 0, &lo, &cnt);
  int64_t *perm = malloc(sizeof *perm * (size_t)(hpoints > 0 ? hpoints : 1));
  sh->cells = malloc(sizeof *sh->cells * (size_t)(cnt > 0 ? cnt : 1));
  int64_t *idx = malloc(sizeof *idx * (size_t)(sh->mem_elems > 0 ? sh->mem_elems : 1));
  int fail = !perm || !sh->cells || !idx, anyfail = 0;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, run->grid.comm);
  if (anyfail) {
    free(perm);
    free(idx);
    snprintf(run->err, sizeof run->err, "out of memory for the cells of a %lld-point grid",
             (long long)hpoints);
    return TSR_ENOMEM;
  }
  /* Fisher-Yates over the whole horizontal grid; this rank keeps its block. */
  uint64_t state = CELLS_SEED ^ (uint64_t)hpoints;
  for (int64_t h = 0; h < hpoints; h++) perm[h] = h;
  for (int64_t h = hpoints - 1; h > 0; h--) {
    int64_t k = (int64_t)(splitmix64(&state) % (uint64_t)(h + 1)), t = perm[h];
    perm[h] = perm[k];
    perm[k] = t;
  }
  memcpy(sh->cells, perm + lo, sizeof *perm * (size_t)cnt);
  free(perm);
  int64_t gstride[TSR_MAX_DIMS], s = 1, gidx[TSR_MAX_DIMS];
  for (int d = sh->ndims - 1; d >= 0; d--) gstride[d] = s, s *= sh->gsize[d];
  for (int64_t c = 0; c < cnt; c++)
    for (int64_t o = 0; o < sh->nother; o++) {
      cell_gidx(sh, sh->cells[c], o, gidx);
      int64_t flat = 0;
      for (int d = 0; d < sh->ndims; d++) flat += gidx[d] * gstride[d];
      idx[c * sh->nother + o] = flat;
    }
  double t0 = MPI_Wtime();
  int rc = tsr_decomp_map(run->ctx, sh->ndims, sh->gsize, sh->mem_elems, idx, &sh->d);
  run->tm.blocked_s += MPI_Wtime() - t0;
  free(idx);
  return rc;
}

void bench_cells_rows(const bench_shape *sh, bench_row_fn fn, void *arg) {
  int64_t gidx[TSR_MAX_DIMS];
  for (int64_t c = 0; c < sh->ncells; c++)
    for (int64_t o = 0; o < sh->nother; o++) {
      cell_gidx(sh, sh->cells[c], o, gidx);
      fn(arg, sh, c * sh->nother + o, gidx, 1);
    }
}

int64_t bench_cells_offset(const bench_shape *sh, const int64_t gidx[]) {
  int64_t hx = horiz_x(sh), o = 0;
  int64_t h = (sh->ydim >= 0 ? gidx[sh->ydim] : 0) * hx + (sh->xdim >= 0 ? gidx[sh->xdim] : 0);
  for (int d = 0; d < sh->ndims; d++)
    if (d != sh->xdim && d != sh->ydim) o = o * sh->gsize[d] + gidx[d];
  /* A linear search: only the --inject-error hook asks, once. */
  for (int64_t c = 0; c < sh->ncells; c++)
    if (sh->cells[c] == h) return c * sh->nother + o;
  return -1;
}
