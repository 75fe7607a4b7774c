/* strategy=aggregate on tsr_open (PIO, WRF io_form=12 input): `aggregators`
 * readers placed as aggregate.c places its writers (every stride-th rank, or
 * spread evenly; a quarter of the ranks by default) each read one contiguous
 * share (tsr__layout_slabs), rearranged to the tiles (read_plans.c); with a
 * parallel backend they read collectively on their own communicator. */
#include <stdio.h>

#include "strategy/read_common.h"
#include "strategy/strategy_common.h"

/* Its plans' owner in a decomposition's cache: distinct from the aggregate
 * writer's (a decomposition may be written and read). */
static const char plans = 0;

static int ar_setup(tsr_file *f, int parallel, tsr__readers *r) {
  int size = f->ctx->size, rc = 0;
  int n = tsr__aggregate_count(&f->hints, size);
  if (n > size) n = size;
  if (f->hints.stride > 0 && (int64_t)(n - 1) * f->hints.stride >= size) {
    snprintf(f->berr.message, sizeof f->berr.message,
             "strategy=aggregate: %d readers every %d ranks need more than %d ranks", n,
             f->hints.stride, size);
    rc = TSR_EHINT;
  }
  if (!rc) rc = tsr__readers_alloc(r, n);
  for (int i = 0; !rc && i < n; i++)
    r->ranks[i] = tsr__aggregate_rank(i, n, f->hints.stride, size);
  return tsr__readers_setup(f, parallel, r, rc);
}

static int ar_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  const tsr__read_layout_arg *a = arg;
  return tsr__layout_slabs(d->ndims, d->gsize, a->r->n, a->r->ranks, out);
}

static int ar_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid, int64_t frame,
                  const tsr_decomp *d, void *buf) {
  const tsr__read_plan plan = {&plans, r->n, f->hints.stride, 0, ar_layout};
  return tsr__readers_get(f, sk, r, &plan, varid, frame, d, buf);
}

const tsr__read_ops tsr__aggregate_read = {
    .setup = ar_setup,
    .opened = tsr__readers_opened,
    .get = ar_get,
};
