/* The narrow description of a decomposition the plan engine works on: the
 * global shape, every rank's tile, and this rank's tile inside its memory
 * box. The decomposition handles (src/handle/decomp.c) build one; the plan
 * engine knows nothing else about them. */
#ifndef TSR_PLAN_TILES_H
#define TSR_PLAN_TILES_H

#include <mpi.h>
#include <stdint.h>

#include "plan/box.h"

typedef struct tsr__tiles {
  int ndims;
  int64_t gsize[TSR_MAX_DIMS];
  int nranks, rank;   /* ranks of the communicator the exchanges run on; mine */
  const int64_t *all; /* nranks * 2 * ndims: every rank's tile start, then count */
  tsr__box tile;      /* my tile */
  tsr__box mem;       /* my memory box (contains the tile) */
  int64_t my_elems;
  /* The memory box is C-ordered over dimensions order[0..ndims) (file
   * dimension numbers, slowest first) instead of the file's order, e.g.
   * WRF's a(i,k,j); exchanges pack straight from it. */
  int ordered;
  int order[TSR_MAX_DIMS];
  /* A shuffled index map read in place: the buffer holds my elements (the
   * tile's in its C order, or the flat runs' in index order) permuted, the
   * o-th of them at buffer position perm[o]; mem is the tile. Exchanges
   * gather through it straight into their messages, so the elements move
   * once instead of being packed into index order first. */
  const int32_t *perm;
  /* Flat tiles (index maps, several boxes per rank, plan/runs.h): when set,
   * this rank's elements are the sorted, disjoint runs [runs[2i], runs[2i+1])
   * of the row-major flat index, held one after the other in the caller's
   * buffer; `all`, `tile` and `mem` are unused. No rank knows the others'
   * runs: exchanges are built collectively over @p comm (a directory). */
  int flat;
  int64_t nruns;
  const int64_t *runs;
  MPI_Comm comm;
} tsr__tiles;

/* Rank r's tile as a box. */
void tsr__tiles_tile_of(const tsr__tiles *t, int r, tsr__box *out);

#endif
