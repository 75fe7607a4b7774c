/* strategy=direct (WRF io_form=11): every rank writes its own tile with a
 * parallel backend. Writes are buffered nonblocking requests
 * completed together, so tsr_put returns as soon as the tile is copied into
 * the backend's buffer; the buffer is drained collectively at tsr_flush,
 * tsr_close, or by the sink's drain rule. tsr_create has already refused a
 * serial backend on more than one rank (needs_parallel_backend). */
#include <stdlib.h>

#include "strategy/read_common.h" /* tsr__read_each: each rank reads its tile */
#include "strategy/strategy_common.h"

typedef struct {
  tsr__sink sink;
} direct_state;

static int d_want(const tsr__hints *h) {
  (void)h;
  return TSR__BACKEND_WANT_PARALLEL;
}

static int d_enddef(tsr_file *f) {
  direct_state *s = calloc(1, sizeof *s);
  if (!s) return TSR_ENOMEM;
  f->sdata = s;
  tsr__file_sink(f, &s->sink);
  MPI_Comm comm = tsr__sink_parallel(&s->sink) ? f->ctx->comm : MPI_COMM_SELF;
  int rc = tsr__sink_create(&s->sink, comm, f->path, &f->schema);
  return rc ? rc : tsr__file_created(f, &s->sink, NULL, f->ctx->size);
}

/* Drain first when this write would overflow any rank's buffer: the drain is
 * collective, so the sink agrees on it. */
static int make_room(tsr_file *f, direct_state *s, int64_t bytes) {
  int drain_err;
  int rc = tsr__sink_drain_if_needed(&s->sink, f->ctx->comm, bytes, 0, &drain_err);
  return rc ? rc : drain_err;
}

static int d_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  direct_state *s = f->sdata;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  int rc = make_room(f, s, d->my_elems * (int64_t)es);
  if (rc) return rc;
  int64_t moff[TSR_MAX_DIMS];
  tsr__memview mem = tsr__decomp_tile_view(d, moff);
  /* put_mode=deferred: the caller keeps buf until flush/close, so the
   * backend may write from it instead of copying it now (not a buffer the
   * API layer packed or converted into: f->put_lent says which). */
  mem.deferred = f->put_lent;
  if (d->tiles.flat) /* runs packed in index order: each run is a few boxes */
    rc = tsr__write_runs(&s->sink, varid, frame, d, buf, es);
  else if (d->my_elems > 0)
    rc = tsr__sink_write(&s->sink, varid, frame, d->tile.start, d->tile.count, buf, mem);
  /* Box holes are known to every rank (rank 0 writes them); a flat
   * decomposition's are found in slabs, each rank writing its own. */
  if (!rc && d->nholes && (f->ctx->rank == 0 || d->holes_here))
    rc = tsr__write_holes(&s->sink, varid, frame, d);
  return rc;
}

static int d_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  direct_state *s = f->sdata;
  int64_t bytes = tsr__var_frame_elems(&f->schema, varid) *
                  (int64_t)tsr__type_size(f->schema.vars[varid].type);
  int rc = make_room(f, s, f->ctx->rank == 0 ? bytes : 0);
  if (!rc && f->ctx->rank == 0) rc = tsr__sink_write_whole(&s->sink, varid, frame, buf, 0);
  return rc;
}

static int d_flush(tsr_file *f) { return tsr__sink_flush(&((direct_state *)f->sdata)->sink); }

static int d_close(tsr_file *f) { return tsr__sink_close(&((direct_state *)f->sdata)->sink); }

static int d_finish(tsr_file *f, int ok) {
  direct_state *s = f->sdata;
  int rc = tsr__sink_finish(&s->sink, ok);
  free(s);
  f->sdata = NULL;
  return rc;
}

static void d_abort(tsr_file *f) {
  direct_state *s = f->sdata;
  if (!s) return;
  tsr__sink_abort(&s->sink);
  free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_direct = {
    .name = "direct",
    .read = &tsr__read_each,
    .backend_want = d_want,
    .needs_parallel_backend = 1,
    .enddef = d_enddef,
    .put = d_put,
    .put_global = d_put_global,
    .flush = d_flush,
    .close = d_close,
    .finish = d_finish,
    .abort = d_abort,
};
