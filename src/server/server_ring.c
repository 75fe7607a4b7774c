/* The hand-off ring (server_ring.h).
 *
 * Allocated at the first hand-off with the buffer_bytes hint and reused for
 * the life of the context (grown only when a single op needs more), because
 * first-touch page faults cost more than the copy itself. A region of the
 * ring is free again once all its sends completed. When the ring is empty it
 * starts over at offset 0, so a model whose servers keep up touches only as
 * many pages as one output needs. */
#include "server/server_ring.h"

#include <stdlib.h>
#include <string.h>

#include "server/server_wire.h"
#include "tessera.h"

struct tsr__srv_region {
  int64_t start, end;
  int open; /* sends not yet completed */
};

int64_t tsr__ring_used(const tsr__srv_ring *r) {
  return r->nreg ? r->held : 0;
}

/* Complete the oldest send (waiting for it when @p wait), freeing its region
 * when it was the region's last. Returns 1 when one completed. */
static int complete_oldest(tsr__srv_ring *r, int wait, int *rc) {
  if (r->nreq == 0) return 0;
  int done = 0;
  if (tsr__tp_complete(r->tp, &r->reqs[r->req0], wait, &done)) {
    *rc = TSR_EMPI;
    done = 1;
  }
  if (!done) return 0;
  r->req0 = (r->req0 + 1) % r->reqcap;
  r->nreq--;
  /* Sends were posted region by region, oldest first. */
  tsr__srv_region *a = &r->regs[r->reg0];
  if (--a->open == 0) {
    r->held -= a->end - a->start;
    r->reg0 = (r->reg0 + 1) % r->regcap;
    r->nreg--;
    if (r->nreg == 0) r->head = r->tail = 0;
    else r->head = r->regs[r->reg0].start;
  }
  return 1;
}

int tsr__ring_progress(tsr__srv_ring *r, int all) {
  int rc = 0;
  while (complete_oldest(r, all, &rc)) {
  }
  return rc;
}

/* Offset where @p n bytes fit now, or -1. */
static int64_t fit(const tsr__srv_ring *r, int64_t n) {
  if (r->nreg == 0) return n <= r->cap ? 0 : -1;
  if (r->tail > r->head) { /* in use: [head, tail) */
    int after = r->cap - r->tail >= n, before = r->head >= n;
    /* Prefer pages already touched: going on past the high-water mark while
     * the start of the ring is free would fault in fresh memory every frame. */
    if (before && (!after || r->tail + n > r->touched)) return 0;
    return after ? r->tail : -1;
  }
  /* wrapped: in use [head, cap) and [0, tail) */
  return r->head - r->tail >= n ? r->tail : -1;
}

/* Grow a circular FIFO of @p esize elements to twice its size, unrolled. */
static int fifo_grow(void **arr, int *cap, int first, int n, size_t esize) {
  int ncap = *cap ? 2 * *cap : 64;
  char *na = malloc((size_t)ncap * esize);
  if (!na) return TSR_ENOMEM;
  for (int i = 0; i < n; i++)
    memcpy(na + (size_t)i * esize, (char *)*arr + (size_t)((first + i) % *cap) * esize, esize);
  free(*arr);
  *arr = na;
  *cap = ncap;
  return 0;
}

int64_t tsr__ring_reserve(tsr__srv_ring *r, int64_t n) {
  n = tsr__wire_align(n);
  if (r->nreg == r->regcap) {
    if (fifo_grow((void **)&r->regs, &r->regcap, r->reg0, r->nreg, sizeof *r->regs)) return -1;
    r->reg0 = 0;
  }
  if (!r->buf || n > r->cap) {
    /* Allocated once; grown only for an op larger than the whole ring. */
    if (tsr__ring_progress(r, 1)) return -1;
    int64_t want = r->want > n ? r->want : n;
    tsr__tp_unexpose(r->tp, r->buf); /* every send completed: nobody reads it */
    tsr__tp_release(r->tp, r->buf);
    r->buf = tsr__tp_alloc(r->tp, want); /* shm: the shared segment */
    r->cap = r->buf ? want : 0;
    r->touched = 0;
    if (!r->buf) return -1;
    /* rma: servers read the ring in place. */
    if (tsr__tp_expose(r->tp, r->buf, want)) {
      tsr__tp_release(r->tp, r->buf);
      r->buf = NULL;
      r->cap = 0;
      return -1;
    }
  }
  int64_t off;
  int rc = 0;
  /* Full: the wait for the oldest sends is the blocked time the hints allow. */
  double t0 = 0;
  while ((off = fit(r, n)) < 0) {
    if (t0 == 0) t0 = MPI_Wtime();
    if (!complete_oldest(r, 1, &rc) || rc) return -1;
  }
  if (t0 > 0) r->waited_s += MPI_Wtime() - t0;
  int k = (r->reg0 + r->nreg) % r->regcap;
  r->regs[k] = (tsr__srv_region){off, off + n, 0};
  if (r->nreg++ == 0) r->head = off;
  r->tail = off + n;
  r->held += n;
  if (r->tail > r->touched) r->touched = r->tail;
  int64_t used = tsr__ring_used(r);
  if (used > r->peak) r->peak = used;
  return off;
}

int tsr__ring_send(tsr__srv_ring *r, int64_t off, int64_t len, int dest, int tag) {
  if (r->nreq == r->reqcap) {
    if (fifo_grow((void **)&r->reqs, &r->reqcap, r->req0, r->nreq, sizeof *r->reqs))
      return TSR_ENOMEM;
    r->req0 = 0;
  }
  int k = (r->req0 + r->nreq) % r->reqcap;
  int rc = tsr__tp_isend(r->tp, r->buf + off, len, dest, tag, &r->reqs[k]);
  if (rc) return rc;
  r->sent += len;
  r->nreq++;
  r->regs[(r->reg0 + r->nreg - 1) % r->regcap].open++;
  return 0;
}

void tsr__ring_cancel(tsr__srv_ring *r) {
  if (r->nreg == 0) return;
  const tsr__srv_region *last = &r->regs[(r->reg0 + r->nreg - 1) % r->regcap];
  r->held -= last->end - last->start;
  r->nreg--;
  if (r->nreg == 0) r->head = r->tail = 0;
  else r->tail = r->regs[(r->reg0 + r->nreg - 1) % r->regcap].end;
}

void tsr__ring_free(tsr__srv_ring *r) {
  if (r->tp) tsr__tp_unexpose(r->tp, r->buf);
  if (r->tp) tsr__tp_release(r->tp, r->buf);
  else free(r->buf);
  free(r->regs);
  free(r->reqs);
  memset(r, 0, sizeof *r);
}
