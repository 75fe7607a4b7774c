/* Model side of the I/O servers: the hand-off ring and model rank 0's record
 * of what the servers reported.
 *
 * The ring is one buffer per context, allocated at the first hand-off with
 * the buffer_bytes hint and reused for the life of the context (grown only
 * when a single op needs more), because first-touch page faults cost more
 * than the copy itself. Messages are packed into regions of the ring and sent
 * with MPI_Isend; a region is free again when all its sends completed.
 * When the ring is empty it starts over at offset 0, so a model whose
 * servers keep up touches only as many pages as one output needs. */
#include <stdlib.h>
#include <string.h>

#include "server/server_proto.h"

struct tsr__srv_region {
  int64_t start, end;
  int open; /* sends not yet completed */
};

struct tsr__srv_track {
  int group, expected, received, status, closed, reported;
  tsr__berr berr;
};

int64_t tsr__srv_ring_used(const struct tsr__server_client *cl) {
  if (cl->nreg == 0) return 0;
  return cl->tail > cl->head ? cl->tail - cl->head : cl->cap - cl->head + cl->tail;
}

/* Complete the oldest send (waiting for it when @p wait), freeing its region
 * when it was the region's last. Returns 1 when one completed. */
static int complete_oldest(struct tsr__server_client *cl, int wait, int *rc) {
  if (cl->nreq == 0) return 0;
  MPI_Request *r = &cl->reqs[cl->req0];
  int done = 0;
  if (wait) {
    if (MPI_Wait(r, MPI_STATUS_IGNORE) != MPI_SUCCESS) *rc = TSR_EMPI;
    done = 1;
  } else if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    *rc = TSR_EMPI;
    done = 1;
  }
  if (!done) return 0;
  cl->req0 = (cl->req0 + 1) % cl->reqcap;
  cl->nreq--;
  /* Requests were posted region by region, oldest first. */
  struct tsr__srv_region *a = &cl->regs[cl->reg0];
  if (--a->open == 0) {
    cl->reg0 = (cl->reg0 + 1) % cl->regcap;
    cl->nreg--;
    if (cl->nreg == 0) cl->head = cl->tail = 0;
    else cl->head = cl->regs[cl->reg0].start;
  }
  return 1;
}

int tsr__srv_ring_progress(struct tsr__server_client *cl, int all) {
  int rc = 0;
  while (complete_oldest(cl, all, &rc)) {
  }
  return rc;
}

/* Offset where @p n bytes fit now, or -1. */
static int64_t fit(const struct tsr__server_client *cl, int64_t n) {
  if (cl->nreg == 0) return n <= cl->cap ? 0 : -1;
  if (cl->tail > cl->head) { /* in use: [head, tail) */
    int after = cl->cap - cl->tail >= n, before = cl->head >= n;
    /* Prefer pages already touched: going on past the high-water mark while
     * the start of the ring is free would fault in fresh memory every frame. */
    if (before && (!after || cl->tail + n > cl->touched)) return 0;
    return after ? cl->tail : -1;
  }
  /* wrapped: in use [head, cap) and [0, tail) */
  return cl->head - cl->tail >= n ? cl->tail : -1;
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

int64_t tsr__srv_ring_reserve(struct tsr__server_client *cl, int64_t n) {
  n = tsr__srv_align(n);
  if (cl->nreg == cl->regcap) {
    if (fifo_grow((void **)&cl->regs, &cl->regcap, cl->reg0, cl->nreg, sizeof *cl->regs))
      return -1;
    cl->reg0 = 0;
  }
  if (!cl->ring || n > cl->cap) {
    /* Allocated once; grown only for an op larger than the whole ring. */
    if (tsr__srv_ring_progress(cl, 1)) return -1;
    int64_t want = cl->want > n ? cl->want : n;
    free(cl->ring);
    cl->ring = malloc((size_t)want);
    cl->cap = cl->ring ? want : 0;
    cl->touched = 0;
    if (!cl->ring) return -1;
  }
  int64_t off;
  int rc = 0;
  /* Full: the wait for the oldest sends is the blocked time the hints allow. */
  while ((off = fit(cl, n)) < 0)
    if (!complete_oldest(cl, 1, &rc) || rc) return -1;
  int k = (cl->reg0 + cl->nreg) % cl->regcap;
  cl->regs[k] = (struct tsr__srv_region){off, off + n, 0};
  if (cl->nreg++ == 0) cl->head = off;
  cl->tail = off + n;
  if (cl->tail > cl->touched) cl->touched = cl->tail;
  int64_t used = tsr__srv_ring_used(cl);
  if (used > cl->peak) cl->peak = used;
  return off;
}

int tsr__srv_ring_send(struct tsr__server_client *cl, int64_t off, int64_t len, int dest, int tag) {
  if (cl->nreq == cl->reqcap) {
    if (fifo_grow((void **)&cl->reqs, &cl->reqcap, cl->req0, cl->nreq, sizeof *cl->reqs))
      return TSR_ENOMEM;
    cl->req0 = 0;
  }
  int k = (cl->req0 + cl->nreq) % cl->reqcap;
  if (MPI_Isend(cl->ring + off, (int)len, MPI_BYTE, dest, tag, cl->L.wcomm, &cl->reqs[k]) !=
      MPI_SUCCESS)
    return TSR_EMPI;
  cl->nreq++;
  cl->regs[(cl->reg0 + cl->nreg - 1) % cl->regcap].open++;
  return 0;
}

void tsr__srv_ring_cancel(struct tsr__server_client *cl) {
  if (cl->nreg == 0) return;
  cl->nreg--;
  if (cl->nreg == 0) cl->head = cl->tail = 0;
  else cl->tail = cl->regs[(cl->reg0 + cl->nreg - 1) % cl->regcap].end;
}

void tsr__srv_client_free(struct tsr__server_client *cl) {
  if (!cl) return;
  free(cl->ring);
  free(cl->regs);
  free(cl->reqs);
  free(cl->tracks);
  if (cl->L.wcomm != MPI_COMM_NULL) MPI_Comm_free(&cl->L.wcomm);
  free(cl);
}

/* ---- model rank 0: files and the servers' notes ---- */

int tsr__srv_track_open(struct tsr__server_client *cl, int file, int group, int expected) {
  if (file >= cl->ntracks) {
    int n = cl->ntracks ? 2 * cl->ntracks : 16;
    while (n <= file) n *= 2;
    struct tsr__srv_track *t = realloc(cl->tracks, (size_t)n * sizeof *t);
    if (!t) return TSR_ENOMEM;
    memset(t + cl->ntracks, 0, (size_t)(n - cl->ntracks) * sizeof *t);
    cl->tracks = t;
    cl->ntracks = n;
  }
  cl->tracks[file] = (struct tsr__srv_track){.group = group, .expected = expected};
  return 0;
}

void tsr__srv_track_close(struct tsr__server_client *cl, int file) {
  if (file < cl->ntracks) cl->tracks[file].closed = 1;
}

void tsr__srv_track_reported(struct tsr__server_client *cl, int file) {
  if (file < cl->ntracks) cl->tracks[file].reported = 1;
}

static int unfinished(const struct tsr__srv_track *t) { return t->received < t->expected; }

static int waiting_for(const struct tsr__server_client *cl, int upto) {
  for (int i = 0; upto && i < cl->ntracks; i++)
    if (unfinished(&cl->tracks[i]) && (upto == 2 || cl->tracks[i].closed)) return 1;
  return 0;
}

int tsr__srv_poll_notes(struct tsr__server_client *cl, int upto) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TSR__SRV_TAG_NOTE, cl->L.wcomm, &flag, &st) != MPI_SUCCESS)
      return TSR_EMPI;
    if (!flag) {
      if (!waiting_for(cl, upto)) return 0;
      if (MPI_Probe(MPI_ANY_SOURCE, TSR__SRV_TAG_NOTE, cl->L.wcomm, &st) != MPI_SUCCESS)
        return TSR_EMPI;
    }
    tsr__srv_reply r;
    if (MPI_Recv(&r, (int)sizeof r, MPI_BYTE, st.MPI_SOURCE, TSR__SRV_TAG_NOTE, cl->L.wcomm,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return TSR_EMPI;
    if (r.writer_s > cl->server_writer_s) cl->server_writer_s = r.writer_s;
    if (r.file < 0 || r.file >= cl->ntracks) continue;
    struct tsr__srv_track *t = &cl->tracks[r.file];
    t->received++;
    if (r.status && !t->status) {
      t->status = r.status;
      t->berr = r.berr;
    }
  }
}

int tsr__srv_take_error(struct tsr__server_client *cl, tsr__berr *berr) {
  for (int i = 0; i < cl->ntracks; i++) {
    struct tsr__srv_track *t = &cl->tracks[i];
    if (t->expected == 0 || unfinished(t) || !t->status || t->reported) continue;
    t->reported = 1;
    if (berr) *berr = t->berr;
    return t->status;
  }
  return 0;
}

int tsr__srv_pick_idle(struct tsr__server_client *cl) {
  int G = cl->L.G, best = cl->rr % G, best_busy = -1;
  for (int k = 0; k < G; k++) {
    int g = (cl->rr + k) % G, busy = 0;
    for (int i = 0; i < cl->ntracks; i++)
      busy += cl->tracks[i].group == g && unfinished(&cl->tracks[i]);
    if (busy == 0) return g; /* the first idle group after the last one used */
    if (best_busy < 0 || busy < best_busy) best = g, best_busy = busy;
  }
  return best;
}
