/* The narrow description of a decomposition the plan engine works on: the
 * global shape, every rank's tile, and this rank's tile inside its memory
 * box. The API layer's decompositions (src/core/decomp.c) build one; the plan
 * engine knows nothing else about them. */
#ifndef TSR_PLAN_TILES_H
#define TSR_PLAN_TILES_H

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
} tsr__tiles;

/* Rank r's tile as a box. */
void tsr__tiles_tile_of(const tsr__tiles *t, int r, tsr__box *out);

#endif
