/* The rearrangement engine backwards, for reading: the segments a tile
 * owner would have sent to a writer now travel from that reader to the
 * owner. The message lists are the write plan's, unchanged: a reader packs
 * each peer's segments in the order the peer would have packed them, so a
 * message again needs no header. Box exchanges copy segment boxes; flat ones
 * (index maps, plan/runs.c) copy (offset, length) ranges of the packed runs. */
#include <stdlib.h>
#include <string.h>

#include "plan/exchange.h"
#include "tessera.h"

/* Segment s of the reader's side: from the region into @p out, which is a
 * message (box: C-ordered over the segment) or, when @p tiles is given, the
 * owner's memory (the segment's place in the memory box). Flat: @p at is the
 * owner's offset for the memory case. Returns the bytes taken. */
static int64_t from_region(const tsr__exchange *ex, int s, const void *region, char *out,
                           const tsr__tiles *tiles, int64_t at) {
  int64_t es = (int64_t)ex->esize;
  if (ex->flat) {
    const int64_t *g = &ex->recv_fl[2 * s];
    memcpy(out + (tiles ? at * es : 0), (const char *)region + g[0] * es, (size_t)(g[1] * es));
    return g[1] * es;
  }
  const tsr__seg *g = &ex->recv_segs[s];
  const tsr__box *b = &g->box, *t = &ex->mybox[g->target];
  const char *src = (const char *)region + ex->mybox_off[g->target] * es;
  if (tiles)
    tsr__copy_box(ex->nd, b, ex->esize, src, t->start, t->count, out, tiles->mem.start,
                  tiles->mem.count);
  else
    tsr__copy_box(ex->nd, b, ex->esize, src, t->start, t->count, out, b->start, b->count);
  return tsr__box_elems(ex->nd, b) * es;
}

/* Segment s of the owner's side: from a message into the owner's memory.
 * Returns the bytes taken from the message. */
static int64_t to_owner(const tsr__exchange *ex, int s, const char *msg, void *dst,
                        const tsr__tiles *tiles) {
  int64_t es = (int64_t)ex->esize;
  if (ex->flat) {
    const int64_t *g = &ex->send_fl[2 * s];
    memcpy((char *)dst + g[0] * es, msg, (size_t)(g[1] * es));
    return g[1] * es;
  }
  const tsr__box *b = &ex->send_segs[s].box;
  tsr__copy_box(ex->nd, b, ex->esize, msg, b->start, b->count, dst, tiles->mem.start,
                tiles->mem.count);
  return tsr__box_elems(ex->nd, b) * es;
}

static const tsr__peer *self_peer(const tsr__peer *p, int n, int me) {
  for (int i = 0; i < n; i++)
    if (p[i].peer == me) return &p[i];
  return NULL;
}

int tsr__exchange_run_reverse(MPI_Comm comm, const tsr__exchange *ex, const tsr__tiles *d,
                              const void *region, void *stage, void *recvbuf, void *dst) {
  int me = d->rank, nreq = 0, rc = 0;
  MPI_Request *req = malloc((size_t)(ex->nsend + ex->nrecv + 1) * sizeof *req);
  if (!req) return TSR_ENOMEM;
  /* What I would have sent to a writer, I now receive from it. */
  for (int p = 0; p < ex->nsend && !rc; p++)
    if (ex->send[p].peer != me)
      rc = MPI_Irecv((char *)recvbuf + ex->send[p].offset, (int)ex->send[p].bytes, MPI_BYTE,
                     ex->send[p].peer, 2, comm, &req[nreq++]);
  for (int p = 0; p < ex->nrecv && !rc; p++) {
    const tsr__peer *pr = &ex->recv[p];
    if (pr->peer == me) continue;
    char *msg = (char *)stage + pr->offset;
    for (int s = pr->seg0; s < pr->seg0 + pr->nseg; s++)
      msg += from_region(ex, s, region, msg, NULL, 0);
    rc = MPI_Isend((char *)stage + pr->offset, (int)pr->bytes, MPI_BYTE, pr->peer, 2, comm,
                   &req[nreq++]);
  }
  /* What I read for myself goes straight from the region into my memory,
   * while the messages are in flight (flat: the two segment lists of mine
   * in lockstep). */
  const tsr__peer *rp = self_peer(ex->recv, ex->nrecv, me), *sp = self_peer(ex->send, ex->nsend, me);
  for (int k = 0; rp && k < rp->nseg; k++)
    if (!ex->flat || (sp && k < sp->nseg))
      from_region(ex, rp->seg0 + k, region, dst, d, ex->flat ? ex->send_fl[2 * (sp->seg0 + k)] : 0);
  int wrc = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  free(req);
  if (rc || wrc) return TSR_EMPI;
  for (int p = 0; p < ex->nsend; p++) {
    const tsr__peer *pr = &ex->send[p];
    if (pr->peer == me) continue;
    const char *msg = (const char *)recvbuf + pr->offset;
    for (int s = pr->seg0; s < pr->seg0 + pr->nseg; s++) msg += to_owner(ex, s, msg, dst, d);
  }
  return 0;
}
