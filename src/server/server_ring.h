/* The model side's hand-off ring: one buffer per context, into which a model
 * rank packs the messages for the servers and from which the transport sends
 * them without blocking. tsr_put returns once its messages are packed; the
 * only time the servers can block a model rank is a full ring. */
#ifndef TSR_SERVER_RING_H
#define TSR_SERVER_RING_H

#include <mpi.h>
#include <stdint.h>

#include "server/server_transport.h"

typedef struct tsr__srv_region tsr__srv_region;

typedef struct {
  const tsr__transport *tp;
  int64_t want; /* the ring's size: tsr_init's buffer_bytes */
  char *buf;
  int64_t cap, head, tail, peak;
  int64_t held;           /* bytes in the regions still in flight (what peak measures); not
                             tail - head: a ring wrapped early to warm pages skips its end */
  int64_t touched;        /* high-water mark: pages below it are warm */
  int64_t sent;           /* bytes handed to the transport so far */
  double waited_s;        /* time spent waiting for ring space (the servers' back-pressure) */
  int nreg, reg0, regcap; /* FIFO of regions: [start, end) and their open sends */
  tsr__srv_region *regs;
  int nreq, req0, reqcap; /* FIFO of sends, oldest first */
  tsr__tp_req *reqs;
} tsr__srv_ring;

/* Reserve @p n contiguous bytes, waiting for old sends while the ring is
 * full (blocked output time). Returns the offset in ring->buf, or -1 when no
 * memory can be had or a send failed. */
int64_t tsr__ring_reserve(tsr__srv_ring *r, int64_t n);
/* Send part [off, off+len) of the newest reservation to @p dest. */
int tsr__ring_send(tsr__srv_ring *r, int64_t off, int64_t len, int dest, int tag);
/* Give back the newest reservation unsent. */
void tsr__ring_cancel(tsr__srv_ring *r);
/* Complete finished sends without waiting (all = 1: wait for every send). */
int tsr__ring_progress(tsr__srv_ring *r, int all);
int64_t tsr__ring_used(const tsr__srv_ring *r);
void tsr__ring_free(tsr__srv_ring *r);

#endif
