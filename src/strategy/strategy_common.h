/* Helpers the synchronous strategies share: the exchange buffers a rank
 * keeps for the life of a file, and writing a writer's region box by box. */
#ifndef TSR_STRATEGY_COMMON_H
#define TSR_STRATEGY_COMMON_H

#include "core/internal.h"

typedef struct {
  void *region, *stage, *send;
  int64_t region_cap, stage_cap, send_cap;
} tsr__xbufs;

/* Grow the buffers to what @p plan needs on this rank; the caller agrees on
 * the result before any rank starts the exchange, so a failed allocation on
 * one rank cannot leave the others waiting for its messages. */
int tsr__xbufs_fit(tsr__xbufs *b, const tsr__plan *plan, int is_writer);
void tsr__xbufs_free(tsr__xbufs *b);
/* Run one phase of @p plan and, on its writer(s), write the region unless
 * *write_err already holds an error; a write error is stored there. The
 * exchange runs whatever happened before, because the other ranks are in it:
 * a writer that stopped after a failed write would leave them waiting.
 * Returns the exchange's status. */
int tsr__plan_phase(tsr_file *f, tsr__bfile *bf, const tsr__plan *plan, int phase,
                    tsr__xbufs *b, int varid, int64_t frame, const tsr_decomp *d,
                    const void *buf, int *write_err);
/* Variables' start[]/count[] of a tile in the memory box, as a memview. */
tsr__memview tsr__tile_view(const tsr_decomp *d, int64_t moffset[TSR_MAX_DIMS]);

#endif
