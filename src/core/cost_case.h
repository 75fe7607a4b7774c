/* The geometry the cost model prices (python/tessera/model/case.py, whose
 * functions these follow one for one): a frame's variables, the process
 * grid, the tiles, and how many tiles each slab of a variable meets. */
#ifndef TSR_CORE_COST_CASE_H
#define TSR_CORE_COST_CASE_H

#include <stdint.h>

#include "core/schema.h"

typedef struct {
  int nd;                          /* dimensions without the record one, slowest first */
  int64_t shape[TSR_MAX_DIMS];
  int esize;                       /* bytes per element */
  int decomposed;                  /* tiled over its last two dimensions (tsr_put); else
                                      replicated (tsr_put_global) */
  int ystag, xstag;                /* the last tile along y (x) has one more point */
} tsr__cost_var;

typedef struct {
  int nvars;
  tsr__cost_var *vars; /* owned */
  int64_t nx, ny;      /* the domain: the shortest last (x) and next-to-last (y) extents */
} tsr__cost_case;

/* The record variables of @p sc (what one frame writes), as the model sees
 * a WRF history schema: a variable of two or more dimensions is tiled over
 * its last two, and one whose extent there is one more than the domain's is
 * staggered. 0, -1 (out of memory) or 1 (no variable is tiled: nothing to
 * rank). */
int tsr__cost_case_from_schema(const tsr__schema *sc, tsr__cost_case *c);
void tsr__cost_case_free(tsr__cost_case *c);
/* The domain's extents from the tiled variables (after vars are filled). */
void tsr__cost_case_domain(tsr__cost_case *c);

double tsr__cost_var_bytes(const tsr__cost_var *v);
/* tessera-bench's process grid for @p ranks: MPI_Dims_create's most square
 * factors, the larger along the longer axis (process_grid). */
void tsr__cost_grid(const tsr__cost_case *c, int ranks, int *px, int *py);
/* Pieces tsr__layout_chunks cuts @p v into, none above @p max_elems (slab_count). */
int64_t tsr__cost_slab_count(const tsr__cost_var *v, int64_t max_elems);
/* Piece @p p of @p n balanced slabs of @p v: the tiles it meets (*m) and
 * its bytes (slab_fanins' entry p). */
void tsr__cost_fanin(const tsr__cost_var *v, int64_t n, int64_t p, int px, int py, int64_t *m,
                     double *bytes);
/* Write requests of one frame of @p v cut into @p n slabs (boxes). */
int64_t tsr__cost_boxes(const tsr__cost_var *v, int64_t n);
/* Bytes of @p v's largest tile (tile_bytes_max of the one variable). */
double tsr__cost_tile_bytes(const tsr__cost_var *v, int px, int py);
/* Contiguous file pieces of a frame of @p v cut in px x py tiles (file_pieces). */
int64_t tsr__cost_file_pieces(const tsr__cost_var *v, int px, int py);

#endif
