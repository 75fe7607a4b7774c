/* Helpers the synchronous strategies share: the exchange buffers a rank
 * keeps for the life of a file, running one phase of a plan into a sink, and
 * the fill value over points no rank owns. */
#ifndef TSR_STRATEGY_COMMON_H
#define TSR_STRATEGY_COMMON_H

#include "handle/handles.h"
#include "strategy/strategy.h"

typedef struct {
  void *region, *stage, *send;
  int64_t region_cap, stage_cap, send_cap;
} tsr__xbufs;

/* Grow the buffers to what @p plan needs on this rank; the caller agrees on
 * the result before any rank starts the exchange, so a failed allocation on
 * one rank cannot leave the others waiting for its messages. */
int tsr__xbufs_fit(tsr__xbufs *b, const tsr__plan *plan, int is_writer);
void tsr__xbufs_free(tsr__xbufs *b);
/* Run one phase of @p plan and, on its writer(s), write the region into
 * @p sink unless *write_err already holds an error; a write error is stored
 * there. The exchange runs whatever happened before, because the other ranks
 * are in it: a writer that stopped after a failed write would leave them
 * waiting. Returns the exchange's status. */
int tsr__plan_phase(tsr_file *f, tsr__sink *sink, const tsr__plan *plan, int phase,
                    tsr__xbufs *b, int varid, int64_t frame, const tsr_decomp *d,
                    const void *buf, int *write_err);
/* Write the fill value over the boxes no rank owns (for strategies where
 * each writer writes only what it owns). Called by the writer given. */
int tsr__write_holes(tsr__sink *sink, int varid, int64_t frame, const tsr_decomp *d);
/* Write a flat decomposition's runs (d->tiles.flat) from @p buf, which holds
 * them packed in index order: each run as the few boxes it spans. */
int tsr__write_runs(tsr__sink *sink, int varid, int64_t frame, const tsr_decomp *d,
                    const void *buf, size_t esize);

/* aggregate.c: where its ranks go, writing and reading alike. The count:
 * aggregators=, else a quarter of the ranks. The i-th of n: every
 * stride-th rank when a stride is given, else spread evenly (rank
 * i*size/n), which on block-placed jobs also spreads them over nodes. */
int tsr__aggregate_count(const tsr__hints *h, int size);
int tsr__aggregate_rank(int i, int n, int stride, int size);

#endif
