/* Serial backends: the group root writes each variable slab box by slab box.
 * Whole-levels backends (GRIB2): every task of the group does so for its own
 * part of the variable, whole levels cut as aggregate cuts them.
 * Both sides must see the same boxes in the same order (a client sends one
 * piece per box its tile meets, the server receives them in that order), so
 * both use this one walk. The boxes are the plan engine's serial layout
 * (tsr__layout_chunks with slab_bytes, as strategy=serial), built from
 * what both sides know: the variable's shape, element size and hints. */
#ifndef TSR_SERVER_SLABS_H
#define TSR_SERVER_SLABS_H

#include <stddef.h>
#include <stdint.h>

#include "plan/layout.h"

/* One layout per variable (and task) of a file, built on first use. */
typedef struct {
  int nvars;
  int tasks; /* 0: the root's slabs of the whole variable; T: each task's whole levels */
  tsr__layout *lay;
} tsr__srv_slabs;

int tsr__srv_slabs_init(tsr__srv_slabs *sl, int nvars, int tasks);
void tsr__srv_slabs_free(tsr__srv_slabs *sl);
/* The slab layout of variable @p varid (task @p t's part when sl->tasks > 0),
 * @p nd dims of @p shape, elements of @p esize bytes, slabs of at most
 * @p slab_bytes. */
int tsr__srv_slabs_of(tsr__srv_slabs *sl, int varid, int t, int nd, const int64_t shape[],
                      size_t esize, int64_t slab_bytes, const tsr__layout **out);
/* The slab size both sides use: slab_bytes, or less when the servers' memory
 * is bounded (@p chunk: the largest message a server accepts, 0 = none). */
static inline int64_t tsr__srv_slab_bytes(int64_t slab_bytes, int64_t chunk) {
  return chunk > 0 && chunk < slab_bytes ? chunk : slab_bytes;
}
/* Number of slab boxes of a layout. */
static inline int tsr__srv_slab_count(const tsr__layout *L) { return L->first[L->npieces]; }
/* The part of @p tile in slab box @p b: 1 and *piece, or 0 when the tile
 * does not meet it (an empty tile meets nothing). */
int tsr__srv_slab_piece(const tsr__layout *L, int b, int nd, const tsr__box *tile,
                        tsr__box *piece);
/* Slab box @p b as the row-major index range [*lo, *hi) of an array of
 * @p shape, where flat tiles (runs) are cut: 1, or 0 when the box is no
 * contiguous range (the layout never makes one; the caller refuses). */
int tsr__srv_slab_range(const tsr__layout *L, int b, int nd, const int64_t shape[], int64_t *lo,
                        int64_t *hi);

#endif
