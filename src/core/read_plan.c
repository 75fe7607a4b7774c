/* Read strategies (core/read_plan.h): the write plans run backwards. */
#include "core/read_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plans' cache owners: one layout per read strategy, each distinct from
 * the write strategies' (a decomposition may be written and read). */
static const char serial_plans = 0, aggregate_plans = 0;

int tsr__readers_choose(tsr_file *f, const char *open_hints, tsr__readers *r, char *msg,
                        size_t msglen) {
  memset(r, 0, sizeof *r);
  r->comm = r->own = MPI_COMM_NULL;
  r->name = "";
  /* The merged hints parsed already; this parse of the open's own text alone
   * only asks whether it names a strategy, so it never fails the open. */
  tsr__hints own;
  tsr__hints_defaults(&own);
  own.strict = 0;
  char err[256];
  if (!open_hints || tsr__hints_parse(open_hints, f->path, &own, err, sizeof err) ||
      !(own.set & TSR__H_STRATEGY))
    return 0;
  const char *s = own.strategy;
  if (strcmp(s, "serial") == 0) r->kind = TSR__READ_SERIAL, r->name = "serial";
  else if (strcmp(s, "aggregate") == 0) r->kind = TSR__READ_AGGREGATE, r->name = "aggregate";
  else if (strcmp(s, "direct") == 0) r->name = "direct";
  else if (strcmp(s, "split") == 0) r->kind = TSR__READ_SPLIT, r->name = "split";
  else {
    snprintf(msg, msglen,
             "strategy=%s does not read files: use strategy=serial, direct, aggregate or split",
             s);
    return TSR_EHINT;
  }
  if (r->kind == TSR__READ_SERIAL && (f->hints.writer < 0 || f->hints.writer >= f->ctx->size)) {
    snprintf(msg, msglen, "strategy=serial: writer=%d is not a rank of this job (0..%d)",
             f->hints.writer, f->ctx->size - 1);
    return TSR_EHINT;
  }
  return 0;
}

/* Readers as the write strategies place writers: the serial one at writer=,
 * aggregators every stride-th rank or spread evenly (a quarter of the ranks
 * by default). */
static int pick(tsr_file *f, tsr__readers *r) {
  int size = f->ctx->size;
  if (r->kind == TSR__READ_SERIAL) {
    r->n = 1;
  } else {
    r->n = f->hints.aggregators > 0 ? f->hints.aggregators : (size / 4 > 0 ? size / 4 : 1);
    if (r->n > size) r->n = size;
    if (f->hints.stride > 0 && (int64_t)(r->n - 1) * f->hints.stride >= size) {
      snprintf(f->berr.message, sizeof f->berr.message,
               "strategy=aggregate: %d readers every %d ranks need more than %d ranks", r->n,
               f->hints.stride, size);
      return TSR_EHINT;
    }
  }
  r->ranks = malloc((size_t)r->n * sizeof *r->ranks);
  if (!r->ranks) return TSR_ENOMEM;
  for (int i = 0; i < r->n; i++)
    r->ranks[i] = r->kind == TSR__READ_SERIAL ? f->hints.writer
                  : f->hints.stride > 0       ? i * f->hints.stride
                                              : (int)((int64_t)i * size / r->n);
  for (int i = 0; i < r->n; i++) r->mine |= r->ranks[i] == f->ctx->rank;
  return 0;
}

int tsr__readers_setup(tsr_file *f, int parallel, tsr__readers *r) {
  if (r->kind == TSR__READ_EACH || r->kind == TSR__READ_SPLIT) {
    r->mine = 1;
    r->comm = parallel ? f->ctx->comm : MPI_COMM_SELF;
    return 0;
  }
  int rc = tsr__file_agree(f, pick(f, r));
  if (rc) return rc;
  /* A parallel backend reads collectively on the readers' communicator; a
   * serial one is opened by each reader on its own (reading needs no
   * coordination, and there are only n of them). */
  if (parallel && r->n > 1) {
    if (MPI_Comm_split(f->ctx->comm, r->mine ? 0 : MPI_UNDEFINED, f->ctx->rank, &r->own) !=
        MPI_SUCCESS)
      return tsr__file_agree(f, TSR_EMPI);
    r->comm = r->own;
  } else if (r->mine) {
    r->comm = MPI_COMM_SELF;
  }
  return 0;
}

/* Broadcast @p n bytes from @p root in pieces an int count can hold. */
static int bcast_bytes(void *buf, int64_t n, int root, MPI_Comm comm) {
  const int64_t chunk = 1 << 30;
  for (int64_t off = 0; off < n; off += chunk) {
    int len = (int)(n - off < chunk ? n - off : chunk);
    if (MPI_Bcast((char *)buf + off, len, MPI_BYTE, root, comm) != MPI_SUCCESS) return TSR_EMPI;
  }
  return 0;
}

int tsr__schema_share(tsr__schema *s, int rc, int root, MPI_Comm comm, int64_t *extra) {
  int me;
  MPI_Comm_rank(comm, &me);
  void *packed = NULL;
  size_t len = 0;
  if (me == root && !rc) rc = tsr__schema_pack(s, &packed, &len);
  int64_t head[3] = {rc, (int64_t)len, extra ? *extra : 0};
  if (MPI_Bcast(head, 3, MPI_INT64_T, root, comm) != MPI_SUCCESS) head[0] = TSR_EMPI;
  rc = (int)head[0];
  /* Every rank has the buffer, or none joins the broadcast. */
  if (!rc && me != root && !(packed = malloc((size_t)head[1] + 1))) rc = TSR_ENOMEM;
  rc = tsr__agree(comm, rc);
  if (!rc) rc = bcast_bytes(packed, head[1], root, comm);
  if (!rc && me != root) {
    tsr__schema_free(s);
    tsr__schema_init(s);
    rc = tsr__schema_unpack(packed, (size_t)head[1], s);
  }
  free(packed);
  if (extra) *extra = head[2];
  return tsr__agree(comm, rc);
}

int tsr__readers_share(tsr_file *f, const tsr__readers *r, int64_t *nrecs) {
  if (r->kind == TSR__READ_EACH || r->kind == TSR__READ_SPLIT) return 0;
  return tsr__schema_share(&f->schema, 0, r->ranks[0], f->ctx->comm, nrecs);
}

int tsr__read_region(tsr__sink *sk, const tsr__exchange *ex, int varid, int64_t frame,
                     void *region, int nreads) {
  int64_t zero[TSR_MAX_DIMS] = {0};
  int rc = 0;
  for (int b = 0; b < nreads; b++) { /* a failed read still joins the later ones */
    int e = b < ex->nmybox
                ? tsr__sink_read(sk, varid, frame, ex->mybox[b].start, ex->mybox[b].count,
                                 (char *)region + ex->mybox_off[b] * (int64_t)ex->esize,
                                 (tsr__memview){0})
                : tsr__sink_read(sk, varid, frame, zero, zero, NULL, (tsr__memview){0});
    if (!rc) rc = e;
  }
  return rc;
}

typedef struct {
  const tsr_file *f;
  const tsr__readers *r;
  size_t esize;
} layout_arg;

static int read_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  const layout_arg *a = arg;
  if (a->r->kind == TSR__READ_SERIAL)
    return tsr__layout_chunks(d->ndims, d->gsize, a->f->hints.slab_bytes / (int64_t)a->esize,
                              a->r->ranks[0], out);
  return tsr__layout_slabs(d->ndims, d->gsize, a->r->n, a->r->ranks, out);
}

/* Replicated data: read once (by every reader when the reads are
 * collective), broadcast from the first reader. */
static int read_whole(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid,
                      int64_t frame, void *buf) {
  int root = r->ranks[0], rc = 0;
  if (r->mine && (f->ctx->rank == root || tsr__sink_parallel(sk))) {
    int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
    tsr__var_shape(&f->schema, varid, count);
    rc = tsr__sink_read(sk, varid, frame, start, count, buf, (tsr__memview){0});
  }
  int root_rc = rc;
  if (MPI_Bcast(&root_rc, 1, MPI_INT, root, f->ctx->comm) != MPI_SUCCESS) return TSR_EMPI;
  if (root_rc) return rc ? rc : root_rc;
  int64_t n = tsr__var_frame_elems(&f->schema, varid) *
              (int64_t)tsr__type_size(f->schema.vars[varid].type);
  int brc = bcast_bytes(buf, n, root, f->ctx->comm);
  return rc ? rc : brc;
}

int tsr__readers_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid, int64_t frame,
                     const tsr_decomp *d, void *buf) {
  if (!d) return read_whole(f, sk, r, varid, frame, buf);
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  /* Index maps, box lists and other memory orders read into their canon (a
   * file-ordered tile, or runs in index order) and are unpacked at the end. */
  tsr_decomp *c = d->canon ? d->canon : (tsr_decomp *)d;
  layout_arg a = {f, r, es};
  int serial = r->kind == TSR__READ_SERIAL;
  tsr__plan *plan = NULL;
  int rc = tsr__plan_get(c, serial ? &serial_plans : &aggregate_plans,
                         serial ? f->hints.slab_bytes : r->n, serial ? r->ranks[0] : f->hints.stride,
                         es, serial, read_layout, &a, &plan);
  int64_t rbytes = 0, sbytes = 0, qbytes = 0, pbytes = d->canon ? c->my_elems * (int64_t)es : 0;
  int maxreads = 0;
  if (plan) {
    rbytes = plan->max_region_elems * (int64_t)es;
    sbytes = plan->max_stage_bytes;
    qbytes = plan->max_send_bytes;
    for (int p = 0; p < plan->nphases; p++)
      if (plan->phases[p].nmybox > maxreads) maxreads = plan->phases[p].nmybox;
  }
  if (!rc) rc = tsr__grow(&f->pack, &f->pack_cap, rbytes + sbytes + qbytes + pbytes + 1);
  /* Agree on the status and on how many reads a collective backend makes
   * per phase, before any message moves. */
  int v[2] = {rc, -maxreads}, m[2];
  if (MPI_Allreduce(v, m, 2, MPI_INT, MPI_MIN, f->ctx->comm) != MPI_SUCCESS) return TSR_EMPI;
  if (m[0]) return m[0];
  char *region = f->pack, *stage = region + rbytes, *recvbuf = stage + sbytes;
  void *dst = d->canon ? (void *)(recvbuf + qbytes) : buf;
  for (int p = 0; p < plan->nphases; p++) {
    const tsr__exchange *ex = &plan->phases[p];
    int e = tsr__read_region(sk, ex, varid, frame, region,
                             !r->mine ? 0 : tsr__sink_parallel(sk) ? -m[1] : ex->nmybox);
    if (!rc) rc = e;
    /* The exchange runs whatever happened: the other ranks are in it. */
    int xrc = tsr__exchange_run_reverse(f->ctx->comm, ex, &c->tiles, region, stage, recvbuf, dst);
    if (!rc) rc = xrc;
  }
  if (!rc && d->canon) tsr__decomp_unpack(d, es, dst, buf);
  return rc;
}

void tsr__readers_free(tsr__readers *r) {
  if (r->own != MPI_COMM_NULL) MPI_Comm_free(&r->own);
  free(r->ranks);
  r->ranks = NULL;
  r->comm = MPI_COMM_NULL;
}
