/* strategy=aggregate (PIO's box rearranger, WRF io_form=12): tiles are
 * rearranged onto `aggregators` writer ranks, each owning a contiguous slab
 * of every variable, and the writers write collectively (a parallel backend) on a
 * communicator of their own; the other ranks never touch the file. A backend
 * with whole_levels (GRIB2) gets slabs of whole horizontal levels and a flush
 * after every put, which places each writer's messages in put order. */
#include <stdlib.h>

#include "strategy/strategy_common.h"

/* Its plans are cached under its ops (tsr__plan_get's owner). */
extern const tsr__strategy_ops tsr__strategy_aggregate;
extern const tsr__read_ops tsr__aggregate_read; /* aggregate_read.c */

typedef struct {
  int nwriters, stride, is_writer;
  int keep; /* trailing dimensions a slab never cuts: 2 for whole_levels */
  int *writers;
  MPI_Comm wcomm; /* the writers' communicator, MPI_COMM_NULL elsewhere */
  tsr__sink sink; /* open on the writers only */
  tsr__xbufs bufs;
} agg_state;

/* One writer asked for (aggregators=1) writes the whole file from one
 * process: a serial backend does that with plain POSIX writes, where a
 * parallel one would push every byte through MPI-IO's collective machinery
 * on a communicator of one (3.3x the time of a gather + serial NetCDF on
 * the 1024 x 1024 x 28 case; apps/bench/README.md). */
static int a_want(const tsr__hints *h) {
  return h->aggregators == 1 ? TSR__BACKEND_WANT_SERIAL : TSR__BACKEND_WANT_PARALLEL;
}

int tsr__aggregate_count(const tsr__hints *h, int size) {
  return h->aggregators > 0 ? h->aggregators : (size / 4 > 0 ? size / 4 : 1);
}

int tsr__aggregate_rank(int i, int n, int stride, int size) {
  return stride > 0 ? i * stride : (int)((int64_t)i * size / n);
}

static int pick_writers(tsr_file *f, agg_state *s) {
  int size = f->ctx->size;
  int n = tsr__aggregate_count(&f->hints, size);
  if (!tsr__sink_parallel(&s->sink)) n = 1; /* a serial backend has a single writer */
  s->nwriters = n;
  s->stride = f->hints.stride;
  if (s->stride > 0 && (int64_t)(n - 1) * s->stride >= size) return TSR_EHINT;
  s->writers = malloc((size_t)n * sizeof(int));
  if (!s->writers) return TSR_ENOMEM;
  for (int i = 0; i < n; i++) s->writers[i] = tsr__aggregate_rank(i, n, s->stride, size);
  for (int i = 0; i < n; i++) s->is_writer |= s->writers[i] == f->ctx->rank;
  return 0;
}

static int a_enddef(tsr_file *f) {
  agg_state *s = calloc(1, sizeof *s);
  if (!s) return TSR_ENOMEM;
  f->sdata = s;
  s->wcomm = MPI_COMM_NULL;
  tsr__file_sink(f, &s->sink);
  int rc = tsr__agree(f->ctx->comm, pick_writers(f, s));
  if (rc) return rc;
  /* Every rank, writer or not, builds the same layouts from it. */
  s->keep = tsr__sink_whole_levels(&s->sink) && s->nwriters > 1 ? 2 : 0;
  if (MPI_Comm_split(f->ctx->comm, s->is_writer ? 0 : MPI_UNDEFINED, f->ctx->rank, &s->wcomm) !=
      MPI_SUCCESS)
    return TSR_EMPI;
  if (!s->is_writer) return 0;
  rc = tsr__sink_create(&s->sink, s->wcomm, f->path, &f->schema);
  return rc ? rc : tsr__file_created(f, &s->sink, s->writers, s->nwriters);
}

static int agg_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  const agg_state *s = arg;
  return tsr__layout_slabs_keep(d->ndims, d->gsize, s->keep, s->nwriters, s->writers, out);
}

/* After every put: with whole levels, every writer (also one whose write
 * failed: the flush is collective) places this put's messages now. */
static int put_done(agg_state *s) {
  return s->keep && s->is_writer ? tsr__sink_flush(&s->sink) : 0;
}

static int a_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  agg_state *s = f->sdata;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  tsr__plan *plan = NULL;
  /* keep is part of the key: a decomposition may serve a NetCDF file and
   * a GRIB2 file with the same writers. */
  int rc = tsr__plan_get((tsr_decomp *)d, &tsr__strategy_aggregate,
                         s->nwriters + ((int64_t)s->keep << 32), s->stride, es, 0, agg_layout, s,
                         &plan);
  if (!rc) rc = tsr__xbufs_fit(&s->bufs, plan, s->is_writer);
  /* One reduction agrees on buffer allocation and on whether the writers
   * must drain their backend buffer before this slab goes in. */
  int64_t incoming = plan && s->is_writer ? plan->phases[0].region_elems * (int64_t)es : 0;
  int werr;
  rc = tsr__sink_drain_if_needed(&s->sink, f->ctx->comm, incoming, rc, &werr);
  if (rc) return rc;
  /* A failed drain skips this rank's write, never the exchange others are in. */
  rc = tsr__plan_phase(f, &s->sink, plan, 0, &s->bufs, varid, frame, d, buf, &werr);
  int frc = put_done(s);
  return rc ? rc : werr ? werr : frc;
}

static int a_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  agg_state *s = f->sdata;
  int rc =
      f->ctx->rank == s->writers[0] ? tsr__sink_write_whole(&s->sink, varid, frame, buf, 0) : 0;
  int frc = put_done(s);
  return rc ? rc : frc;
}

static int a_flush(tsr_file *f) {
  agg_state *s = f->sdata;
  return tsr__sink_flush(&s->sink);
}

static void a_free(agg_state *s) {
  if (s->wcomm != MPI_COMM_NULL) MPI_Comm_free(&s->wcomm);
  tsr__xbufs_free(&s->bufs);
  free(s->writers);
  free(s);
}

static int a_close(tsr_file *f) { return tsr__sink_close(&((agg_state *)f->sdata)->sink); }

static int a_finish(tsr_file *f, int ok) {
  agg_state *s = f->sdata;
  int rc = tsr__sink_finish(&s->sink, ok);
  a_free(s);
  f->sdata = NULL;
  return rc;
}

static void a_abort(tsr_file *f) {
  agg_state *s = f->sdata;
  if (!s) return;
  tsr__sink_abort(&s->sink);
  a_free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_aggregate = {
    .name = "aggregate",
    .read = &tsr__aggregate_read,
    .backend_want = a_want,
    .reads_in_place = 1,
    .enddef = a_enddef,
    .put = a_put,
    .put_global = a_put_global,
    .flush = a_flush,
    .close = a_close,
    .finish = a_finish,
    .abort = a_abort,
};
