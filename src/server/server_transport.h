/* How bytes move between model ranks and I/O servers. A transport is a row
 * of a small table (server_transport.c): `p2p` (MPI point-to-point on the
 * private model<->server communicator) is the one built today; a one-sided
 * (`rma`) transport or node concentrators would be more rows with the same
 * ops. Nothing above this file calls MPI to move model<->server messages;
 * the server loop, the writer and the model side's ring call the ops through
 * the tsr__tp_* functions below.
 *
 * Dependencies: server loop -> writer -> transport, and model side ->
 * transport; the transport knows neither side's state. */
#ifndef TSR_SERVER_TRANSPORT_H
#define TSR_SERVER_TRANSPORT_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
  int src;     /* rank of the sender in the transport's communicator */
  int64_t len; /* bytes */
} tsr__msg_info;

typedef struct tsr__transport_ops {
  const char *name;
  /* Start sending @p len bytes of @p buf; *req completes when buf may be reused. */
  int (*isend)(MPI_Comm comm, const void *buf, int64_t len, int dest, int tag, MPI_Request *req);
  /* Send and return when @p buf may be reused (small messages, error paths). */
  int (*send)(MPI_Comm comm, const void *buf, int64_t len, int dest, int tag);
  /* Finish a started send: wait for it, or test it (*done = 0: still running). */
  int (*complete)(MPI_Request *req, int wait, int *done);
  /* Is the next message from @p src (or MPI_ANY_SOURCE) with @p tag there?
   * Never waits. */
  int (*poll)(MPI_Comm comm, int src, int tag, int *flag, tsr__msg_info *info);
  /* Wait for the next message from @p src with @p tag. @p idle: sleep with
   * a back-off instead of spinning (servers waiting for work). */
  int (*wait)(MPI_Comm comm, int src, int tag, int idle, tsr__msg_info *info);
  /* Receive the next message from @p src with @p tag: exactly @p len bytes
   * into @p buf; buf NULL drops the message whatever its size. */
  int (*recv)(MPI_Comm comm, int src, int tag, void *buf, int64_t len);
} tsr__transport_ops;

typedef struct {
  const tsr__transport_ops *ops;
  MPI_Comm comm; /* the private model<->server communicator (not owned) */
} tsr__transport;

/* Bind @p tp to the transport named @p name over @p comm: 0, or TSR_EHINT
 * for a name that is not in the table. */
int tsr__transport_init(tsr__transport *tp, const char *name, MPI_Comm comm);

static inline int tsr__tp_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest,
                                int tag, MPI_Request *req) {
  return tp->ops->isend(tp->comm, buf, len, dest, tag, req);
}
static inline int tsr__tp_send(const tsr__transport *tp, const void *buf, int64_t len, int dest,
                               int tag) {
  return tp->ops->send(tp->comm, buf, len, dest, tag);
}
static inline int tsr__tp_complete(const tsr__transport *tp, MPI_Request *req, int wait,
                                   int *done) {
  return tp->ops->complete(req, wait, done);
}
static inline int tsr__tp_poll(const tsr__transport *tp, int src, int tag, int *flag,
                               tsr__msg_info *info) {
  return tp->ops->poll(tp->comm, src, tag, flag, info);
}
static inline int tsr__tp_wait(const tsr__transport *tp, int src, int tag, int idle,
                               tsr__msg_info *info) {
  return tp->ops->wait(tp->comm, src, tag, idle, info);
}
static inline int tsr__tp_recv(const tsr__transport *tp, int src, int tag, void *buf,
                               int64_t len) {
  return tp->ops->recv(tp->comm, src, tag, buf, len);
}

/* A reusable receive buffer: grown on demand, never shrunk (first touch of
 * fresh memory costs more than the copy). */
typedef struct {
  void *p;
  int64_t cap, len;
} tsr__srv_buf;
int tsr__srv_buf_grow(tsr__srv_buf *b, int64_t need);
void tsr__srv_buf_free(tsr__srv_buf *b);

/* Wait (idle) for the next message from @p src with @p tag and receive it
 * into @p in (in->len bytes). When no memory can be had for it, the message
 * is dropped and TSR_ENOMEM returned, so the sender's stream stays in step. */
int tsr__tp_take(const tsr__transport *tp, int src, int tag, tsr__srv_buf *in);

/* Small messages sent without waiting for the receiver (a server never waits
 * for a model rank that is computing): each is copied and its copy freed
 * once the send completed. */
typedef struct {
  int n, cap;
  MPI_Request *req;
  void **copy;
} tsr__outbox;
/* Send a copy of @p msg; falls back to a blocking send without memory. */
int tsr__tp_post(const tsr__transport *tp, tsr__outbox *o, const void *msg, int64_t len, int dest,
                 int tag);
/* Free the copies whose sends completed (@p wait: wait for all). */
void tsr__tp_reap(const tsr__transport *tp, tsr__outbox *o, int wait);
void tsr__outbox_free(tsr__outbox *o);

#endif
