/* Descriptor messages, shared by the transports in which a server takes the
 * bytes out of the model rank's ring itself (`rma`: MPI_Get from a window;
 * `shm`: a memory copy from a shared segment). The model rank sends only a
 * small descriptor (length, where the bytes are, which counter to bump once
 * they are taken); messages of at most TSR__DESC_INLINE bytes, and any held
 * outside the ring, ride inside the descriptor. The server learns a
 * message's length from its descriptor (tsr__tp_wait/poll) and takes the
 * bytes later (tsr__tp_recv): the box below holds the descriptors received
 * but not yet taken. The model reuses a ring region once its counter for
 * that server reaches the message's sequence number.
 *
 * Dependencies: the rma and shm rows -> this file -> the p2p row. */
#ifndef TSR_SERVER_DESC_H
#define TSR_SERVER_DESC_H

#include <mpi.h>
#include <stdint.h>

#include "server/server_transport.h"

/* Messages up to this size are carried inside their descriptor. */
enum { TSR__DESC_INLINE = 1024 };

typedef struct {
  int64_t len;   /* bytes of the message */
  MPI_Aint addr; /* where they are on the sender's side; 0: inline, they follow */
  MPI_Aint done; /* the sender's counter to add 1 to once taken (rma: its address) */
} tsr__desc;

/* A descriptor a server received but whose bytes it has not taken yet. At
 * most one per (source, tag), since the next is pulled only once this one
 * is taken. */
typedef struct {
  int src, tag;
  char *msg; /* tsr__desc, then the inline bytes */
} tsr__desc_pend;

/* The server side's descriptors in hand. @p direct (optional): 1 when the
 * messages of source @p src are plain point-to-point ones, no descriptors
 * (shm: model ranks on another node). */
typedef struct {
  tsr__desc_pend *pend;
  int npend, cap;
  int (*direct)(const tsr__transport *tp, int src);
} tsr__desc_box;

/* Model side: start sending descriptor @p d (addr 0: the @p len bytes of
 * @p buf inline) to @p dest; req->mem holds the message until it is sent.
 * Blocking variant for small messages from the stack: always inline. */
int tsr__desc_isend(const tsr__transport *tp, tsr__desc d, const void *buf, int dest, int tag,
                    tsr__tp_req *req);
int tsr__desc_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag);
/* Model side: complete a descriptor send: the message sent and, for bytes
 * left in the ring (req->seq > 0), @p taken(tp, dest) >= req->seq. A
 * waiting rank spins 50 us, then naps (capped at 0.2 ms) so that a server
 * sharing its core gets to run. */
int tsr__desc_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done,
                       int (*taken)(const tsr__transport *tp, int dest, int64_t *v));
/* Server side: poll / wait as tsr__tp_poll / tsr__tp_wait, the length being
 * the message's, not the descriptor's. */
int tsr__desc_poll(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, int *flag,
                   tsr__msg_info *info);
int tsr__desc_wait(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, int idle,
                   tsr__msg_info *info);
/* Server side: the descriptor of the next message from @p src with @p tag
 * (waiting for it), copied to *d; *p its pending entry, to pass to
 * tsr__desc_done once the bytes are taken. */
int tsr__desc_next(const tsr__transport *tp, tsr__desc_box *b, int src, int tag,
                   tsr__desc_pend **p, tsr__desc *d);
void tsr__desc_done(tsr__desc_box *b, tsr__desc_pend *p);
void tsr__desc_box_free(tsr__desc_box *b);
/* Server side: receive the next message from @p src with @p tag into @p buf
 * (exactly its length, at most @p len; buf NULL drops it): inline bytes are
 * copied, others taken by @p fetch(tp, from, d, buf); then, for bytes left
 * on the sender's side, @p taken(tp, from, d) tells the sender it may reuse
 * them (also for a dropped message). */
int tsr__desc_recv(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, void *buf,
                   int64_t len,
                   int (*fetch)(const tsr__transport *tp, int from, const tsr__desc *d, void *buf),
                   int (*taken)(const tsr__transport *tp, int from, const tsr__desc *d));
/* The poll and wait ops of a row whose state (tp->state) starts with its
 * tsr__desc_box: descriptors on a server, plain point to point on a model
 * rank (the servers' replies). */
int tsr__desc_row_poll(const tsr__transport *tp, int src, int tag, int *flag,
                       tsr__msg_info *info);
int tsr__desc_row_wait(const tsr__transport *tp, int src, int tag, int idle,
                       tsr__msg_info *info);

#endif
