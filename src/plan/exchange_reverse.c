/* The rearrangement engine backwards, for the read strategies: the segments
 * a tile owner would have sent to a writer now travel from that reader to
 * the owner. The message lists are the write plan's, unchanged: a reader
 * packs each peer's segments in the order the peer would have packed them,
 * so a message again needs no header. Box tiles only here; flat tiles (index
 * maps) have their own reverse run in plan/runs.c. */
#include <stdlib.h>

#include "plan/exchange.h"
#include "plan/runs.h"
#include "tessera.h"

/* The region box a receive segment belongs to, and where it starts. */
static const char *seg_region(const tsr__exchange *ex, const tsr__seg *g, const void *region,
                              const tsr__box **box) {
  *box = &ex->mybox[g->target];
  return (const char *)region + ex->mybox_off[g->target] * (int64_t)ex->esize;
}

int tsr__exchange_run_reverse(MPI_Comm comm, const tsr__exchange *ex, const tsr__tiles *d,
                              const void *region, void *stage, void *recvbuf, void *dst) {
  int me = d->rank;
  if (ex->flat) return tsr__runs_run_reverse(comm, ex, me, region, stage, recvbuf, dst);
  int nreq = 0, rc = 0;
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
    for (int s = pr->seg0; s < pr->seg0 + pr->nseg; s++) {
      const tsr__box *b = &ex->recv_segs[s].box, *t;
      const char *at = seg_region(ex, &ex->recv_segs[s], region, &t);
      tsr__copy_box(ex->nd, b, ex->esize, at, t->start, t->count, msg, b->start, b->count);
      msg += tsr__box_elems(ex->nd, b) * (int64_t)ex->esize;
    }
    rc = MPI_Isend((char *)stage + pr->offset, (int)pr->bytes, MPI_BYTE, pr->peer, 2, comm,
                   &req[nreq++]);
  }
  /* What I read for myself goes straight from the region into my memory,
   * while the messages are in flight. */
  for (int p = 0; p < ex->nrecv; p++) {
    if (ex->recv[p].peer != me) continue;
    for (int s = ex->recv[p].seg0; s < ex->recv[p].seg0 + ex->recv[p].nseg; s++) {
      const tsr__box *b = &ex->recv_segs[s].box, *t;
      const char *at = seg_region(ex, &ex->recv_segs[s], region, &t);
      tsr__copy_box(ex->nd, b, ex->esize, at, t->start, t->count, dst, d->mem.start,
                    d->mem.count);
    }
  }
  int wrc = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  free(req);
  if (rc || wrc) return TSR_EMPI;
  for (int p = 0; p < ex->nsend; p++) {
    const tsr__peer *pr = &ex->send[p];
    if (pr->peer == me) continue;
    const char *msg = (const char *)recvbuf + pr->offset;
    for (int s = pr->seg0; s < pr->seg0 + pr->nseg; s++) {
      const tsr__box *b = &ex->send_segs[s].box;
      tsr__copy_box(ex->nd, b, ex->esize, msg, b->start, b->count, dst, d->mem.start,
                    d->mem.count);
      msg += tsr__box_elems(ex->nd, b) * (int64_t)ex->esize;
    }
  }
  return 0;
}
