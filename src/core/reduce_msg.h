/* reduce= on the I/O servers (docs/reductions.md): what the model ranks
 * tell the server that holds a stream's accumulators, besides the frames'
 * own PUT rounds. Raw bytes of these structs travel (both sides run the
 * same build); only the API layer fills them and only the servers read
 * them, so they sit here, below both. */
#ifndef TSR_CORE_REDUCE_MSG_H
#define TSR_CORE_REDUCE_MSG_H

#include <stdint.h>

#include "core/reduce_spec.h"
#include "tessera.h"

/* The servers tell the frames of a stream's variables apart by message tag
 * (server/server_reduce.c), within a tag space split among this many
 * streams: a context whose servers hold more streams refuses the next one
 * at tsr_enddef (api/reduce.c), where they would have shared tags. */
enum { TSR__RMSG_PATH = 4096, TSR__REDUCE_HELD_STREAMS = 8 };

/* A stream's definition, sent once per job when its first file is defined:
 * the variables' types and shapes (non-record dimensions), the items, and
 * the side file of an incomplete period to continue ("" for none). */
typedef struct {
  int32_t sid, nvars, nitems, pad_;
  int32_t item_op[TSR__REDUCE_MAX], item_var[TSR__REDUCE_MAX];
  int32_t type[TSR__REDUCE_MAX], nd[TSR__REDUCE_MAX];
  int64_t shape[TSR__REDUCE_MAX][TSR_MAX_DIMS];
  char partial[TSR__RMSG_PATH];
} tsr__rdef;

/* tsr_finalize with an incomplete period: every frame up to endseq (per
 * variable) folded, the accumulators saved in @p path after @p header. */
typedef struct {
  int32_t sid, pad_;
  int64_t endseq[TSR__REDUCE_MAX];
  char path[TSR__RMSG_PATH];
  char header[TSR__RMSG_PATH];
} tsr__rsave;

/* What a strategy whose writers hold the accumulators is told
 * (strategy.h, reduce_ctl). */
enum { TSR__RCTL_DEF = 1, TSR__RCTL_SAVE = 2 };

#endif
