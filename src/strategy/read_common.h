/* What the strategies' read sides (strategy.h: tsr__read_ops) share.
 *
 *   read_each.c   every rank reads its own tile: the default (no strategy=),
 *                 direct, and split over its pieces (collectively through a
 *                 parallel backend; else every rank opens the file itself)
 *   read_plans.c  a few readers open the file and run a write plan
 *                 backwards (plan/exchange.h tsr__exchange_run_reverse):
 *                 serial_read.c, aggregate_read.c; the first reader
 *                 broadcasts the schema, so the metadata is read by as many
 *                 ranks as read data, not by every rank
 *   split_read.c  the pieces `<path>.NNNN` of strategy=split behind the
 *                 backend interface, read as the one file
 */
#ifndef TSR_STRATEGY_READ_COMMON_H
#define TSR_STRATEGY_READ_COMMON_H

#include "handle/handles.h"
#include "strategy/strategy.h"

/* read_each.c: the steps of tsr__read_each, for read sides that read each
 * rank's tile through a reader of their own (split). */
extern const tsr__read_ops tsr__read_each;
int tsr__read_each_setup(tsr_file *f, int parallel, tsr__readers *r);
int tsr__read_each_opened(tsr_file *f, const tsr__readers *r, int64_t *nrecs);
int tsr__read_each_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid,
                       int64_t frame, const tsr_decomp *d, void *buf);
/* A reader's boxes of one phase of a read plan (ex->mybox) into @p region,
 * then empty reads up to @p nreads (a collective backend's agreed count).
 * Every read is made whatever failed before; the first error is returned. */
int tsr__read_each_region(tsr__sink *sk, const tsr__exchange *ex, int varid, int64_t frame,
                          void *region, int nreads);

/* read_plans.c: a read side whose readers run a write plan backwards. */

/* Room for @p n reader ranks in r->ranks, which the caller fills. Local. */
int tsr__readers_alloc(tsr__readers *r, int n);
/* The setup step once r->ranks are chosen (@p rc: this rank's status of
 * choosing them): agree, then give the readers their communicator for a
 * backend that is @p parallel. Collective; an agreed code. */
int tsr__readers_setup(tsr_file *f, int parallel, tsr__readers *r, int rc);
/* The opened step: the first reader's schema and record count to every
 * rank, then tsr__read_each_opened's check. Collective; an agreed code. */
int tsr__readers_opened(tsr_file *f, const tsr__readers *r, int64_t *nrecs);

/* The plan a read side runs: its cache key in a decomposition (owner, key1,
 * key2, phased as tsr__plan_get takes them) and its layout, which gets a
 * tsr__read_layout_arg. */
typedef struct {
  const void *owner;
  int64_t key1, key2;
  int phased;
  tsr__layout_fn layout;
} tsr__read_plan;
typedef struct {
  const tsr_file *f;
  const tsr__readers *r;
  size_t esize;
} tsr__read_layout_arg;
/* The get step through @p plan: this rank's status. Collective. */
int tsr__readers_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, const tsr__read_plan *plan,
                     int varid, int64_t frame, const tsr_decomp *d, void *buf);

/* @p root's schema @p s (and @p *extra, when given) to every rank of @p comm,
 * unpacked into @p s on the others. @p rc is the root's status: when it is
 * not 0 nothing more is sent and every rank returns it. Collective; an
 * agreed code. */
int tsr__readers_share_schema(tsr__schema *s, int rc, int root, MPI_Comm comm, int64_t *extra);

#endif
