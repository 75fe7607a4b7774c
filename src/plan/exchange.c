/* The rearrangement engine: message lists from box intersections, built once,
 * then run with point-to-point messages (or MPI_Alltoallv) per put. Senders
 * and receivers walk the pieces' boxes in the same order, so a message is the
 * concatenation of its segments in that order and needs no header. */
#include "plan/exchange.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

void tsr__tiles_tile_of(const tsr__tiles *t, int r, tsr__box *out) {
  const int64_t *a = t->all + (size_t)r * 2 * (size_t)t->ndims;
  for (int i = 0; i < t->ndims; i++) {
    out->start[i] = a[i];
    out->count[i] = a[t->ndims + i];
  }
}

/* Growable arrays of segments and peers. */
typedef struct {
  tsr__seg *segs;
  int *peer_of; /* peer of each segment (build time only) */
  int n, cap;
} segvec;

static int segvec_push(segvec *v, int peer, const tsr__box *box, int target) {
  if (v->n == v->cap) {
    int cap = v->cap ? 2 * v->cap : 64;
    tsr__seg *s = realloc(v->segs, (size_t)cap * sizeof *s);
    if (!s) return TSR_ENOMEM;
    v->segs = s;
    int *p = realloc(v->peer_of, (size_t)cap * sizeof *p);
    if (!p) return TSR_ENOMEM;
    v->peer_of = p;
    v->cap = cap;
  }
  v->segs[v->n].box = *box;
  v->segs[v->n].target = target;
  v->peer_of[v->n] = peer;
  v->n++;
  return 0;
}

/* Group segments by peer (stable, so each peer keeps the walk order) and
 * build the peer table with message sizes and buffer offsets. Segments to or
 * from this rank itself are kept (peer == me) but take no buffer space. */
static int group_by_peer(segvec *v, int nd, size_t esize, int me, tsr__peer **peers, int *npeers,
                         tsr__seg **segs_out, int64_t *total) {
  *peers = NULL;
  *npeers = 0;
  *total = 0;
  *segs_out = NULL;
  if (v->n == 0) return 0;
  int *order = malloc((size_t)v->n * sizeof *order);
  tsr__seg *sorted = malloc((size_t)v->n * sizeof *sorted);
  tsr__peer *pt = malloc((size_t)v->n * sizeof *pt);
  if (!order || !sorted || !pt) {
    free(order);
    free(sorted);
    free(pt);
    return TSR_ENOMEM;
  }
  /* Counting sort would need the peer range; insertion into per-peer runs via
   * a stable merge sort keeps it simple and O(n log n). */
  for (int i = 0; i < v->n; i++) order[i] = i;
  for (int width = 1; width < v->n; width *= 2) {
    int *tmp = malloc((size_t)v->n * sizeof *tmp);
    if (!tmp) {
      free(order);
      free(sorted);
      free(pt);
      return TSR_ENOMEM;
    }
    for (int lo = 0; lo < v->n; lo += 2 * width) {
      int mid = lo + width < v->n ? lo + width : v->n;
      int hi = lo + 2 * width < v->n ? lo + 2 * width : v->n;
      int a = lo, b = mid, k = lo;
      while (a < mid && b < hi)
        tmp[k++] = v->peer_of[order[b]] < v->peer_of[order[a]] ? order[b++] : order[a++];
      while (a < mid) tmp[k++] = order[a++];
      while (b < hi) tmp[k++] = order[b++];
    }
    memcpy(order, tmp, (size_t)v->n * sizeof *tmp);
    free(tmp);
  }
  int np = 0;
  int64_t off = 0;
  for (int i = 0; i < v->n; i++) {
    int s = order[i], peer = v->peer_of[s];
    sorted[i] = v->segs[s];
    if (np == 0 || pt[np - 1].peer != peer) {
      pt[np].peer = peer;
      pt[np].nseg = 0;
      pt[np].seg0 = i;
      pt[np].bytes = 0;
      pt[np].offset = off;
      np++;
    }
    pt[np - 1].nseg++;
    int64_t b = tsr__box_elems(nd, &sorted[i].box) * (int64_t)esize;
    pt[np - 1].bytes += b;
    if (peer != me) off += b;
  }
  free(order);
  for (int p = 0; p < np; p++)
    if (pt[p].bytes > INT_MAX) {
      free(sorted);
      free(pt);
      return TSR_ETOOBIG;
    }
  *peers = pt;
  *npeers = np;
  *segs_out = sorted;
  *total = off;
  return 0;
}

int tsr__exchange_build(const tsr__tiles *d, const tsr__layout *L, int p0, int p1, size_t esize,
                        tsr__exchange *ex) {
  memset(ex, 0, sizeof *ex);
  int nd = d->ndims, me = d->rank, size = d->nranks;
  ex->nd = nd;
  ex->esize = esize;
  segvec sendv = {0}, recvv = {0};
  int rc = 0;

  /* Sender: my tile against every box of every piece. */
  if (d->my_elems > 0)
    for (int p = p0; p < p1 && !rc; p++)
      for (int b = L->first[p]; b < L->first[p + 1] && !rc; b++) {
        tsr__box x;
        if (tsr__box_intersect(nd, &d->tile, &L->boxes[b], &x))
          rc = segvec_push(&sendv, L->writers[p], &x, -1);
      }

  /* Receiver: my boxes, laid out one after the other in the region buffer. */
  int nmine = 0;
  for (int p = p0; p < p1; p++)
    if (L->writers[p] == me) nmine += L->first[p + 1] - L->first[p];
  if (!rc && nmine > 0) {
    ex->mybox = malloc((size_t)nmine * sizeof *ex->mybox);
    ex->mybox_off = malloc((size_t)nmine * sizeof *ex->mybox_off);
    if (!ex->mybox || !ex->mybox_off) rc = TSR_ENOMEM;
    for (int p = p0; p < p1 && !rc; p++) {
      if (L->writers[p] != me) continue;
      for (int b = L->first[p]; b < L->first[p + 1]; b++) {
        ex->mybox[ex->nmybox] = L->boxes[b];
        ex->mybox_off[ex->nmybox] = ex->region_elems;
        ex->region_elems += tsr__box_elems(nd, &L->boxes[b]);
        ex->nmybox++;
      }
    }
    /* Walk sources in rank order and, per source, my boxes in piece order:
     * the same order in which that source packed its message to me. */
    for (int s = 0; s < size && !rc; s++) {
      tsr__box tile;
      tsr__tiles_tile_of(d, s, &tile);
      if (tsr__box_elems(nd, &tile) == 0) continue;
      for (int t = 0; t < ex->nmybox && !rc; t++) {
        tsr__box x;
        if (tsr__box_intersect(nd, &tile, &ex->mybox[t], &x)) rc = segvec_push(&recvv, s, &x, t);
      }
    }
  }
  if (!rc)
    rc = group_by_peer(&sendv, nd, esize, me, &ex->send, &ex->nsend, &ex->send_segs,
                       &ex->send_bytes);
  if (!rc)
    rc = group_by_peer(&recvv, nd, esize, me, &ex->recv, &ex->nrecv, &ex->recv_segs,
                       &ex->stage_bytes);
  free(sendv.segs);
  free(sendv.peer_of);
  free(recvv.segs);
  free(recvv.peer_of);
  if (rc) tsr__exchange_free(ex);
  return rc;
}

void tsr__exchange_free(tsr__exchange *ex) {
  if (!ex) return;
  free(ex->send);
  free(ex->recv);
  free(ex->send_segs);
  free(ex->recv_segs);
  free(ex->send_fl);
  free(ex->recv_fl);
  free(ex->mybox);
  free(ex->mybox_off);
  memset(ex, 0, sizeof *ex);
}

/* Copy segment boxes between the caller's memory, a packed message and the
 * region buffer. A packed segment is C-ordered over its own box. */
static void pack_segs(const tsr__exchange *ex, const tsr__peer *p, const tsr__tiles *d,
                      const void *src, char *dst) {
  int64_t es = (int64_t)ex->esize;
  if (ex->flat) { /* a flat segment is contiguous in the caller's buffer */
    /* Segments that continue one another in the buffer move as one: a
     * scattered map has runs of an element or two, and one call each would
     * cost more than the elements themselves. */
    for (int s = p->seg0; s < p->seg0 + p->nseg;) {
      int64_t at = ex->send_fl[2 * s], len = ex->send_fl[2 * s + 1];
      for (s++; s < p->seg0 + p->nseg && ex->send_fl[2 * s] == at + len; s++)
        len += ex->send_fl[2 * s + 1];
      if (d->perm) tsr__gather(dst, src, d->perm + at, len, ex->esize);
      else memcpy(dst, (const char *)src + at * es, (size_t)(len * es));
      dst += len * es;
    }
    return;
  }
  for (int s = p->seg0; s < p->seg0 + p->nseg; s++) {
    const tsr__box *b = &ex->send_segs[s].box;
    if (d->perm)
      tsr__copy_box_perm(ex->nd, b, ex->esize, src, d->perm, d->mem.start, d->mem.count, dst,
                         b->start, b->count);
    else if (d->ordered)
      tsr__copy_box_ordered(ex->nd, b, ex->esize, src, d->mem.start, d->mem.count, d->order, dst,
                            b->start, b->count);
    else
      tsr__copy_box(ex->nd, b, ex->esize, src, d->mem.start, d->mem.count, dst, b->start, b->count);
    dst += tsr__box_elems(ex->nd, b) * (int64_t)ex->esize;
  }
}

static void unpack_segs(const tsr__exchange *ex, const tsr__peer *p, const char *msg,
                        char *region) {
  int64_t es = (int64_t)ex->esize;
  if (ex->flat) { /* and contiguous in the writer's region (pieces are flat ranges) */
    for (int s = p->seg0; s < p->seg0 + p->nseg; s++) {
      const int64_t *g = &ex->recv_fl[2 * s];
      memcpy(region + g[0] * es, msg, (size_t)(g[1] * es));
      msg += g[1] * es;
    }
    return;
  }
  for (int s = p->seg0; s < p->seg0 + p->nseg; s++) {
    const tsr__seg *g = &ex->recv_segs[s];
    const tsr__box *t = &ex->mybox[g->target];
    tsr__copy_box(ex->nd, &g->box, ex->esize, msg, g->box.start, g->box.count,
                  region + ex->mybox_off[g->target] * (int64_t)ex->esize, t->start, t->count);
    msg += tsr__box_elems(ex->nd, &g->box) * (int64_t)ex->esize;
  }
}

/* Data this rank keeps: straight from the caller's memory into the region. */
static void copy_self(const tsr__exchange *ex, int me, const tsr__tiles *d, const void *src,
                      char *region) {
  if (ex->flat) { /* my send and receive segments to myself are listed in the same order */
    const tsr__peer *sp = NULL, *rp = NULL;
    for (int p = 0; p < ex->nsend; p++)
      if (ex->send[p].peer == me) sp = &ex->send[p];
    for (int p = 0; p < ex->nrecv; p++)
      if (ex->recv[p].peer == me) rp = &ex->recv[p];
    if (!sp || !rp) return;
    int64_t es = (int64_t)ex->esize;
    for (int k = 0; k < sp->nseg && k < rp->nseg; k++) {
      const int64_t *a = &ex->send_fl[2 * (sp->seg0 + k)], *b = &ex->recv_fl[2 * (rp->seg0 + k)];
      if (d->perm) tsr__gather(region + b[0] * es, src, d->perm + a[0], a[1], ex->esize);
      else memcpy(region + b[0] * es, (const char *)src + a[0] * es, (size_t)(a[1] * es));
    }
    return;
  }
  for (int p = 0; p < ex->nrecv; p++) {
    if (ex->recv[p].peer != me) continue;
    for (int s = ex->recv[p].seg0; s < ex->recv[p].seg0 + ex->recv[p].nseg; s++) {
      const tsr__seg *g = &ex->recv_segs[s];
      const tsr__box *t = &ex->mybox[g->target];
      char *at = region + ex->mybox_off[g->target] * (int64_t)ex->esize;
      if (d->perm)
        tsr__copy_box_perm(ex->nd, &g->box, ex->esize, src, d->perm, d->mem.start, d->mem.count,
                           at, t->start, t->count);
      else if (d->ordered)
        tsr__copy_box_ordered(ex->nd, &g->box, ex->esize, src, d->mem.start, d->mem.count,
                              d->order, at, t->start, t->count);
      else
        tsr__copy_box(ex->nd, &g->box, ex->esize, src, d->mem.start, d->mem.count, at, t->start,
                      t->count);
    }
  }
}

static int run_alltoall(MPI_Comm comm, const tsr__exchange *ex, int me, int size, char *sendbuf,
                        char *stage) {
  int *c = calloc((size_t)4 * (size_t)size, sizeof *c);
  if (!c) return TSR_ENOMEM;
  int *sc = c, *sd = c + size, *rcn = c + 2 * size, *rd = c + 3 * size;
  for (int p = 0; p < ex->nsend; p++)
    if (ex->send[p].peer != me) {
      sc[ex->send[p].peer] = (int)ex->send[p].bytes;
      sd[ex->send[p].peer] = (int)ex->send[p].offset;
    }
  for (int p = 0; p < ex->nrecv; p++)
    if (ex->recv[p].peer != me) {
      rcn[ex->recv[p].peer] = (int)ex->recv[p].bytes;
      rd[ex->recv[p].peer] = (int)ex->recv[p].offset;
    }
  int rc = MPI_Alltoallv(sendbuf, sc, sd, MPI_BYTE, stage, rcn, rd, MPI_BYTE, comm);
  free(c);
  return rc == MPI_SUCCESS ? 0 : TSR_EMPI;
}

int tsr__exchange_run(MPI_Comm comm, const tsr__exchange *ex, const tsr__tiles *d,
                      const void *src, void *sendbuf, void *stage, void *region,
                      const void *fill, int alltoall) {
  int me = d->rank, rc = 0;
  if (region && fill) tsr__fill_elems(region, fill, ex->esize, ex->region_elems);
  for (int p = 0; p < ex->nsend; p++)
    if (ex->send[p].peer != me)
      pack_segs(ex, &ex->send[p], d, src, (char *)sendbuf + ex->send[p].offset);
  if (alltoall) {
    rc = run_alltoall(comm, ex, me, d->nranks, sendbuf, stage);
  } else {
    int nreq = 0;
    MPI_Request *req = malloc((size_t)(ex->nsend + ex->nrecv + 1) * sizeof *req);
    if (!req) return TSR_ENOMEM;
    for (int p = 0; p < ex->nrecv && !rc; p++)
      if (ex->recv[p].peer != me)
        rc = MPI_Irecv((char *)stage + ex->recv[p].offset, (int)ex->recv[p].bytes, MPI_BYTE,
                       ex->recv[p].peer, 0, comm, &req[nreq++]);
    for (int p = 0; p < ex->nsend && !rc; p++)
      if (ex->send[p].peer != me)
        rc = MPI_Isend((char *)sendbuf + ex->send[p].offset, (int)ex->send[p].bytes, MPI_BYTE,
                       ex->send[p].peer, 0, comm, &req[nreq++]);
    if (region) copy_self(ex, me, d, src, region); /* overlaps the messages in flight */
    int wrc = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    free(req);
    if (rc || wrc) return TSR_EMPI;
    for (int p = 0; p < ex->nrecv; p++)
      if (ex->recv[p].peer != me) unpack_segs(ex, &ex->recv[p], (char *)stage + ex->recv[p].offset, region);
    return 0;
  }
  if (rc) return rc;
  if (region) {
    copy_self(ex, me, d, src, region);
    for (int p = 0; p < ex->nrecv; p++)
      if (ex->recv[p].peer != me) unpack_segs(ex, &ex->recv[p], (char *)stage + ex->recv[p].offset, region);
  }
  return 0;
}
