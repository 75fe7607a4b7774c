#include "strategy/strategy_common.h"

#include <stdlib.h>

/* The sink of a file's strategy (or reader): the file's backend, hints,
 * statistics and error slot. Here, with the strategies that call it, rather
 * than with the file handle, so that they call nothing above them. */
void tsr__file_sink(tsr_file *f, tsr__sink *s) {
  tsr__sink_init(s, f->backend, &f->hints, &f->st, &f->berr);
}

int tsr__xbufs_fit(tsr__xbufs *b, const tsr__plan *plan, int is_writer) {
  int rc = tsr__grow(&b->send, &b->send_cap, plan->max_send_bytes > 0 ? plan->max_send_bytes : 1);
  if (!rc && is_writer) {
    rc = tsr__grow(&b->region, &b->region_cap,
                   plan->max_region_elems * (int64_t)plan->esize + 1);
    if (!rc) rc = tsr__grow(&b->stage, &b->stage_cap, plan->max_stage_bytes + 1);
  }
  return rc;
}

void tsr__xbufs_free(tsr__xbufs *b) {
  free(b->region);
  free(b->stage);
  free(b->send);
  b->region = b->stage = b->send = NULL;
  b->region_cap = b->stage_cap = b->send_cap = 0;
}

int tsr__plan_phase(tsr_file *f, tsr__sink *sink, const tsr__plan *plan, int phase,
                    tsr__xbufs *b, int varid, int64_t frame, const tsr_decomp *d,
                    const void *buf, int *write_err) {
  const tsr__exchange *ex = &plan->phases[phase];
  char fill[8];
  tsr__var_fill(&f->schema, varid, fill);
  int rc = tsr__exchange_run(f->ctx->comm, ex, &d->tiles, buf, b->send, b->stage,
                             ex->nmybox ? b->region : NULL,
                             d->owned_elems < d->total_elems ? fill : NULL,
                             f->hints.exchange_alltoall);
  for (int p = 0; p < ex->nsend; p++)
    if (ex->send[p].peer != f->ctx->rank) f->st.rearranged_bytes += ex->send[p].bytes;
  for (int t = 0; t < ex->nmybox && !rc && !*write_err; t++)
    *write_err = tsr__sink_write(sink, varid, frame, ex->mybox[t].start, ex->mybox[t].count,
                                 (char *)b->region + ex->mybox_off[t] * (int64_t)ex->esize,
                                 (tsr__memview){0});
  int64_t held = b->region_cap + b->stage_cap + b->send_cap;
  tsr__fstats_buffer(&f->st, held);
  return rc;
}

int tsr__write_holes(tsr__sink *sink, int varid, int64_t frame, const tsr_decomp *d) {
  int rc = 0;
  for (int h = 0; h < d->nholes && !rc; h++)
    rc = tsr__sink_write_fill(sink, varid, frame, d->holes[h].start, d->holes[h].count);
  return rc;
}

int tsr__write_runs(tsr__sink *sink, int varid, int64_t frame, const tsr_decomp *d,
                    const void *buf, size_t esize) {
  const char *at = buf;
  int rc = 0;
  for (int64_t r = 0; r < d->tiles.nruns && !rc; r++) {
    tsr__box bx[2 * TSR_MAX_DIMS];
    int nb = tsr__flat_range_boxes(d->ndims, d->gsize, d->tiles.runs[2 * r],
                                   d->tiles.runs[2 * r + 1], bx);
    for (int b = 0; b < nb && !rc; b++) {
      rc = tsr__sink_write(sink, varid, frame, bx[b].start, bx[b].count, at,
                           (tsr__memview){0});
      at += tsr__box_elems(d->ndims, &bx[b]) * (int64_t)esize;
    }
  }
  return rc;
}
