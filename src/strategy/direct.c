/* strategy=direct (WRF io_form=11): every rank writes its own tile with a
 * parallel backend (PnetCDF). Writes are buffered nonblocking requests
 * completed together, so tsr_put returns as soon as the tile is copied into
 * the backend's buffer; the buffer is drained collectively at tsr_flush,
 * tsr_close, or when any rank's pending bytes would pass buffer_bytes. */
#include <stdlib.h>

#include "strategy/strategy_common.h"

typedef struct {
  tsr__bfile *bf;
} direct_state;

static int d_enddef(tsr_file *f) {
  direct_state *s = calloc(1, sizeof *s);
  if (!s) return TSR_ENOMEM;
  f->sdata = s;
  MPI_Comm comm = f->backend->parallel ? f->ctx->comm : MPI_COMM_SELF;
  if (!f->backend->parallel && f->ctx->size > 1) return TSR_EHINT; /* checked at create too */
  int rc = tsr__backend_create(f, comm, f->path, &f->schema, &s->bf);
  return rc ? rc : tsr__file_created(f, s->bf, NULL, f->ctx->size);
}

/* Drain the backend's buffer first when this write would overflow it on any
 * rank: the drain is collective, so the decision must be agreed. */
static int make_room(tsr_file *f, direct_state *s, int64_t bytes) {
  int64_t pending = f->backend->pending_bytes ? f->backend->pending_bytes(s->bf) : 0;
  int flag = pending > 0 && pending + bytes > f->hints.buffer_bytes;
  int rc = tsr__agree_flag(f->ctx->comm, 0, &flag);
  if (!rc && flag) rc = tsr__backend_flush(f, s->bf);
  return rc;
}

static int d_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  direct_state *s = f->sdata;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  int64_t bytes = d->my_elems * (int64_t)es;
  int rc = make_room(f, s, bytes);
  if (rc) return rc;
  int64_t moff[TSR_MAX_DIMS];
  if (d->my_elems > 0)
    rc = tsr__write_block(f, s->bf, varid, frame, d->tile.start, d->tile.count, buf,
                          tsr__tile_view(d, moff));
  if (!rc && d->nholes && f->ctx->rank == 0) rc = tsr__write_holes(f, s->bf, varid, frame, d);
  return rc;
}

static int d_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  direct_state *s = f->sdata;
  int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
  tsr__var_shape(&f->schema, varid, count);
  int64_t bytes = tsr__var_frame_elems(&f->schema, varid) *
                  (int64_t)tsr__type_size(f->schema.vars[varid].type);
  int rc = make_room(f, s, f->ctx->rank == 0 ? bytes : 0);
  if (!rc && f->ctx->rank == 0)
    rc = tsr__write_block(f, s->bf, varid, frame, start, count, buf, (tsr__memview){NULL, NULL});
  return rc;
}

static int d_flush(tsr_file *f) { return tsr__backend_flush(f, ((direct_state *)f->sdata)->bf); }

static int d_close(tsr_file *f) {
  direct_state *s = f->sdata;
  int rc = tsr__backend_close(f, s->bf);
  free(s);
  f->sdata = NULL;
  return rc;
}

static void d_abort(tsr_file *f) {
  direct_state *s = f->sdata;
  if (!s) return;
  if (s->bf) f->backend->abort(s->bf, f->path);
  free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_direct = {
    .name = "direct",
    .enddef = d_enddef,
    .put = d_put,
    .put_global = d_put_global,
    .flush = d_flush,
    .close = d_close,
    .abort = d_abort,
};
