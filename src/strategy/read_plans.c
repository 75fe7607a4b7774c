/* Read sides whose few readers run a write plan backwards (read_common.h):
 * the plan of the decomposition's canon for the read side's layout is built
 * once and cached like a write plan; per phase the readers read their boxes
 * and tsr__exchange_run_reverse sends each segment to the rank that would
 * have sent it. Only the readers open the file; the first one shares the
 * schema. serial_read.c and aggregate_read.c choose the readers and the
 * layout; everything else is here, once. */
#include <stdlib.h>

#include "strategy/read_common.h"

int tsr__readers_alloc(tsr__readers *r, int n) {
  r->n = n;
  r->ranks = malloc((size_t)n * sizeof *r->ranks);
  return r->ranks ? 0 : TSR_ENOMEM;
}

int tsr__readers_setup(tsr_file *f, int parallel, tsr__readers *r, int rc) {
  for (int i = 0; !rc && i < r->n; i++) r->mine |= r->ranks[i] == f->ctx->rank;
  rc = tsr__file_agree(f, rc);
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

void tsr__readers_free(tsr__readers *r) {
  if (r->own != MPI_COMM_NULL) MPI_Comm_free(&r->own);
  free(r->ranks);
  r->ranks = NULL;
  r->comm = MPI_COMM_NULL;
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

int tsr__readers_share_schema(tsr__schema *s, int rc, int root, MPI_Comm comm, int64_t *extra) {
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

int tsr__readers_opened(tsr_file *f, const tsr__readers *r, int64_t *nrecs) {
  int rc = tsr__file_agree(
      f, tsr__readers_share_schema(&f->schema, 0, r->ranks[0], f->ctx->comm, nrecs));
  return rc ? rc : tsr__read_each_opened(f, r, nrecs);
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

int tsr__readers_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, const tsr__read_plan *rp,
                     int varid, int64_t frame, const tsr_decomp *d, void *buf) {
  if (!d) return read_whole(f, sk, r, varid, frame, buf);
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  /* Index maps, box lists and other memory orders read into their canon (a
   * file-ordered tile, or runs in index order) and are unpacked at the end. */
  tsr_decomp *c = d->canon ? d->canon : (tsr_decomp *)d;
  tsr__read_layout_arg a = {f, r, es};
  tsr__plan *plan = NULL;
  int rc = tsr__plan_get(c, rp->owner, rp->key1, rp->key2, es, rp->phased, rp->layout, &a, &plan);
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
    int e = tsr__read_each_region(sk, ex, varid, frame, region,
                                  !r->mine ? 0 : tsr__sink_parallel(sk) ? -m[1] : ex->nmybox);
    if (!rc) rc = e;
    /* The exchange runs whatever happened: the other ranks are in it. */
    int xrc = tsr__exchange_run_reverse(f->ctx->comm, ex, &c->tiles, region, stage, recvbuf, dst);
    if (!rc) rc = xrc;
  }
  if (!rc && d->canon) tsr__decomp_unpack(d, es, dst, buf);
  return rc;
}
