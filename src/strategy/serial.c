/* strategy=serial (WRF io_form=2): one writer rank, serial NetCDF. Tiles
 * reach the writer one slab at a time (slab_bytes), so the writer never
 * holds more than one slab of a field, however large the field. */
#include <stdlib.h>

#include "strategy/strategy_common.h"

typedef struct {
  int writer;
  tsr__bfile *bf;
  tsr__xbufs bufs;
} serial_state;

typedef struct {
  const tsr_file *f;
  size_t esize;
} layout_arg;

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
  if (f->ctx->rank != s->writer) return 0;
  int rc = tsr__backend_create(f, MPI_COMM_SELF, f->path, &f->schema, &s->bf);
  return rc ? rc : tsr__file_created(f, s->bf, &s->writer, 1);
}

static int s_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  serial_state *s = f->sdata;
  layout_arg a = {f, tsr__type_size(f->schema.vars[varid].type)};
  tsr__plan *plan = NULL;
  int rc = tsr__plan_get((tsr_decomp *)d, TSR__STRAT_SERIAL, f->hints.slab_bytes, s->writer,
                         a.esize, 1, serial_layout, &a, &plan);
  if (!rc) rc = tsr__xbufs_fit(&s->bufs, plan, f->ctx->rank == s->writer);
  rc = tsr__agree(f->ctx->comm, rc);
  int werr = 0;
  for (int p = 0; !rc && p < plan->nphases; p++)
    rc = tsr__plan_phase(f, s->bf, plan, p, &s->bufs, varid, frame, d, buf, &werr);
  return rc ? rc : werr;
}

static int s_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  serial_state *s = f->sdata;
  if (f->ctx->rank != s->writer) return 0;
  int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
  tsr__var_shape(&f->schema, varid, count);
  return tsr__write_block(f, s->bf, varid, frame, start, count, buf, (tsr__memview){NULL, NULL});
}

static int s_flush(tsr_file *f) {
  serial_state *s = f->sdata;
  return s->bf ? tsr__backend_flush(f, s->bf) : 0;
}

static int s_close(tsr_file *f) {
  serial_state *s = f->sdata;
  int rc = s->bf ? tsr__backend_close(f, s->bf) : 0;
  tsr__xbufs_free(&s->bufs);
  free(s);
  f->sdata = NULL;
  return rc;
}

static void s_abort(tsr_file *f) {
  serial_state *s = f->sdata;
  if (!s) return;
  if (s->bf) f->backend->abort(s->bf, f->path);
  tsr__xbufs_free(&s->bufs);
  free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_serial = {
    .name = "serial",
    .enddef = s_enddef,
    .put = s_put,
    .put_global = s_put_global,
    .flush = s_flush,
    .close = s_close,
    .abort = s_abort,
};
