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
  const struct tsr__srv_region *a = &cl->regs[cl->reg0];
  return cl->tail > a->start ? cl->tail - a->start : cl->cap - a->start + cl->tail;
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
  if (cl->nreg == 0) return n <= cap_or_zero(cl) ? 0 : -1;
  if (cl->tail > cl->head) { /* in use: [head, tail) */
    if (cl->cap - cl->tail >= n) return cl->tail;
    return cl->head >= n ? 0 : -1; /* wrap to the start */
  }
  /* wrapped: in use [head, cap) and [0, tail) */
  return cl->head - cl->tail >= n ? cl->tail : -1;
}
