/* strategy=serial (WRF io_form=2): one writer rank, a serial backend. Tiles
 * reach the writer one slab at a time (slab_bytes), so the writer never
 * holds more than one slab of a field, however large the field. */
#include <stdlib.h>

#include "strategy/strategy_common.h"

/* Its plans are cached under its ops (tsr__plan_get's owner). */
extern const tsr__strategy_ops tsr__strategy_serial;
extern const tsr__read_ops tsr__serial_read; /* serial_read.c */

typedef struct {
  int writer;
  tsr__sink sink; /* open on the writer only */
  tsr__xbufs bufs;
} serial_state;

typedef struct {
  const tsr_file *f;
  size_t esize;
} layout_arg;

static int s_want(const tsr__hints *h) {
  (void)h;
  return TSR__BACKEND_WANT_SERIAL;
}

static int serial_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  const layout_arg *a = arg;
  int64_t max_elems = a->f->hints.slab_bytes / (int64_t)a->esize;
  return tsr__layout_chunks(d->ndims, d->gsize, max_elems, ((serial_state *)a->f->sdata)->writer,
                            out);
}

static int s_enddef(tsr_file *f) {
  serial_state *s = calloc(1, sizeof *s);
  if (!s) return TSR_ENOMEM;
  f->sdata = s;
  s->writer = f->hints.writer;
  tsr__file_sink(f, &s->sink);
  if (f->ctx->rank != s->writer) return 0;
  int rc = tsr__sink_create(&s->sink, MPI_COMM_SELF, f->path, &f->schema);
  return rc ? rc : tsr__file_created(f, &s->sink, &s->writer, 1);
}

static int s_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  serial_state *s = f->sdata;
  layout_arg a = {f, tsr__type_size(f->schema.vars[varid].type)};
  tsr__plan *plan = NULL;
  int rc = tsr__plan_get((tsr_decomp *)d, &tsr__strategy_serial, f->hints.slab_bytes, s->writer,
                         a.esize, 1, serial_layout, &a, &plan);
  if (!rc) rc = tsr__xbufs_fit(&s->bufs, plan, f->ctx->rank == s->writer);
  rc = tsr__agree(f->ctx->comm, rc);
  int werr = 0;
  for (int p = 0; !rc && p < plan->nphases; p++)
    rc = tsr__plan_phase(f, &s->sink, plan, p, &s->bufs, varid, frame, d, buf, &werr);
  return rc ? rc : werr;
}

static int s_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  serial_state *s = f->sdata;
  if (f->ctx->rank != s->writer) return 0;
  return tsr__sink_write_whole(&s->sink, varid, frame, buf, 0);
}

static int s_flush(tsr_file *f) { return tsr__sink_flush(&((serial_state *)f->sdata)->sink); }

static int s_close(tsr_file *f) { return tsr__sink_close(&((serial_state *)f->sdata)->sink); }

static int s_finish(tsr_file *f, int ok) {
  serial_state *s = f->sdata;
  int rc = tsr__sink_finish(&s->sink, ok);
  tsr__xbufs_free(&s->bufs);
  free(s);
  f->sdata = NULL;
  return rc;
}

static void s_abort(tsr_file *f) {
  serial_state *s = f->sdata;
  if (!s) return;
  tsr__sink_abort(&s->sink);
  tsr__xbufs_free(&s->bufs);
  free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_serial = {
    .name = "serial",
    .read = &tsr__serial_read,
    .backend_want = s_want,
    .reads_in_place = 1,
    .enddef = s_enddef,
    .put = s_put,
    .put_global = s_put_global,
    .flush = s_flush,
    .close = s_close,
    .finish = s_finish,
    .abort = s_abort,
};
