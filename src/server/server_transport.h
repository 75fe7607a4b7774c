/* How bytes move between model ranks and I/O servers. A transport is a row
 * of a small table (server_transport.c): `p2p` (MPI point-to-point on the
 * private model<->server communicator, the default), `rma` (servers
 * fetch the model's ring through an MPI window, server_rma.c) and `shm`
 * (servers on the model rank's node copy out of its ring in a shared-memory
 * window, server_shm.c). Node
 * concentrators (server_conc.c) are a layer with the same ops over either
 * row. Nothing above this file calls MPI to move model<->server messages;
 * the server loop, the writer and the model side's ring call the ops through
 * the tsr__tp_* functions below.
 *
 * Dependencies: server loop -> writer -> transport, and model side ->
 * transport; the transport knows neither side's state. */
#ifndef TSR_SERVER_TRANSPORT_H
#define TSR_SERVER_TRANSPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  int src;     /* rank of the sender in the transport's communicator */
  int64_t len; /* bytes */
} tsr__msg_info;

/* A started send. p2p: the MPI request. rma: the request of the small
 * descriptor message (and its memory), and for data left in the window the
 * fetch count (seq) the target's counter must reach before the bytes may be
 * reused. */
typedef struct {
  MPI_Request req;
  void *mem;   /* owned by the transport until the send completed */
  int dest;
  int64_t seq; /* rma: 0 = nothing left in the window */
} tsr__tp_req;

typedef struct tsr__transport tsr__transport;

typedef struct tsr__transport_ops {
  const char *name;
  /* Collective over tp->comm (every model rank and server): set up what the
   * transport needs (rma: the window); tp->is_server says the side. */
  int (*setup)(tsr__transport *tp);
  /* Collective over tp->comm: undo setup. */
  void (*teardown)(tsr__transport *tp);
  /* Model side: @p buf (the hand-off ring) may be read by servers from now
   * on / no more (optional: NULL for transports that copy). */
  int (*expose)(const tsr__transport *tp, void *buf, int64_t len);
  void (*unexpose)(const tsr__transport *tp, void *buf);
  /* Model side: memory for the ring of @p len bytes that the transport
   * provides (shm: its shared segment), or NULL for plain memory; release
   * returns 1 when @p buf was such memory (optional: NULL for both). */
  void *(*alloc)(const tsr__transport *tp, int64_t len);
  int (*release)(const tsr__transport *tp, void *buf);
  /* Start sending @p len bytes of @p buf; *req completes when buf may be reused. */
  int (*isend)(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag,
               tsr__tp_req *req);
  /* Send and return when @p buf may be reused (small messages, error paths). */
  int (*send)(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag);
  /* Finish a started send: wait for it, or test it (*done = 0: still running). */
  int (*complete)(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done);
  /* Is the next message from @p src (or MPI_ANY_SOURCE) with @p tag there?
   * Never waits. */
  int (*poll)(const tsr__transport *tp, int src, int tag, int *flag, tsr__msg_info *info);
  /* Wait for the next message from @p src with @p tag. @p idle: sleep with
   * a back-off instead of spinning (servers waiting for work). */
  int (*wait)(const tsr__transport *tp, int src, int tag, int idle, tsr__msg_info *info);
  /* Receive the next message from @p src with @p tag: exactly @p len bytes
   * into @p buf; buf NULL drops the message whatever its size. */
  int (*recv)(const tsr__transport *tp, int src, int tag, void *buf, int64_t len);
  /* Model side, collective over the model ranks, at the end of every op
   * that hands messages over: messages held back so far go out
   * (concentrators; optional: NULL for transports that send at once). */
  int (*commit)(const tsr__transport *tp);
} tsr__transport_ops;

struct tsr__transport {
  const tsr__transport_ops *ops;
  MPI_Comm comm; /* the private model<->server communicator (not owned) */
  int is_server; /* which side this rank is on */
  int64_t ring_bytes; /* a model rank's ring (buffer_bytes): shm sizes its segment by it */
  void *state;   /* the transport's own (rma: window, counters, descriptors) */
  int64_t *nrecv; /* optional: counts the messages this rank receives (servers' statistics) */
  /* Model side: the order key of the messages handed over next. The
   * concentrators' layer forwards a commit's messages to a server sorted by
   * it (stably, so member order within a key), which makes the bundles'
   * order the order the server consumes them in; other transports ignore it. */
  int order;
};

/* The rows (server_transport.c: p2p; server_rma.c: rma; server_shm.c: shm). */
extern const tsr__transport_ops tsr__transport_p2p;
extern const tsr__transport_ops tsr__transport_rma;
extern const tsr__transport_ops tsr__transport_shm;
/* The concentrators' layer (server_conc.c): not a name of the table. */
extern const tsr__transport_ops tsr__transport_conc;

/* Bind @p tp to the transport named @p name ("" = the default, p2p) over
 * @p comm; @p ring_bytes: a model rank's ring (buffer_bytes). Collective over
 * @p comm: every model rank and server calls it with the same name. 0,
 * TSR_EHINT for a name not in the table, TSR_EMPI or TSR_ENOMEM when its
 * setup failed. */
int tsr__transport_init(tsr__transport *tp, const char *name, MPI_Comm comm, int is_server,
                        int64_t ring_bytes);
/* Concentrators (the concentrators hint): put the layer of server_conc.c
 * over the bound @p tp. @p per: -1 one concentrator per node (the model
 * ranks of MPI_Comm_split_type SHARED), N >= 1 one per N consecutive model
 * ranks; @p limit: bytes a concentrator keeps in flight (buffer_bytes);
 * @p bound: the servers' server_buffer_bytes (0 = none): bundles are cut at
 * bound/4, and a server holds none larger than bound; @p server: this
 * rank's server index (-1 on model ranks), for messages. Collective over
 * the transport's communicator, like tsr__transport_init; on failure the
 * layer stays bound so that tsr__transport_free still matches. */
int tsr__transport_concentrate(tsr__transport *tp, int per, int64_t limit, int64_t bound,
                               int server);
/* Bytes a bundle adds to a message (its envelope, the bundle's count). */
enum { TSR__CONC_FRAME = 48 };
/* How server_buffer_bytes=B is shared, so that a server's own buffers for
 * data in flight never hold more than B (docs/servers.md): its receive
 * buffer and its assembly slab take at most one message each, a quarter of
 * B (the backend's buffer, held to B/2 by the drain rule, makes up the
 * rest); with concentrators a message is an eighth of B, less a bundle's
 * framing, and the bundles held take the other three quarters. Both sides
 * derive the message size from this (0: unbounded). */
static inline int64_t tsr__srv_chunk(int64_t bound, int concentrators) {
  if (bound <= 0) return 0;
  return concentrators ? bound / 8 - TSR__CONC_FRAME : bound / 4;
}
/* The smallest server_buffer_bytes: a message holds an op header and one
 * value, so that none is larger than its share (server_layout.c checks). */
enum { TSR__SRV_MIN_BOUND = 4096 };
/* Server side: the most bytes of bundles the concentrators' layer held
 * since the last call (0 for other transports), and the first bundle it
 * could not hold, as a message naming the server and the bundle size (NULL
 * when none). */
int64_t tsr__tp_held(const tsr__transport *tp);
const char *tsr__tp_refusal(const tsr__transport *tp);
/* Collective over the transport's communicator; accepts an unbound @p tp. */
void tsr__transport_free(tsr__transport *tp);
/* The hint parser's questions (api/hints.c): is the first @p n bytes of
 * @p name a transport of the table; how many; the i-th name. */
int tsr__transport_known(const char *name, size_t n);
int tsr__transport_count(void);
const char *tsr__transport_name_at(int i);

static inline int tsr__tp_expose(const tsr__transport *tp, void *buf, int64_t len) {
  return tp->ops->expose ? tp->ops->expose(tp, buf, len) : 0;
}
static inline void tsr__tp_unexpose(const tsr__transport *tp, void *buf) {
  if (buf && tp->ops && tp->ops->unexpose) tp->ops->unexpose(tp, buf);
}
/* The ring's memory: the transport's (shm) or malloc's; released likewise. */
void *tsr__tp_alloc(const tsr__transport *tp, int64_t len);
void tsr__tp_release(const tsr__transport *tp, void *buf);
static inline int tsr__tp_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest,
                                int tag, tsr__tp_req *req) {
  return tp->ops->isend(tp, buf, len, dest, tag, req);
}
static inline int tsr__tp_send(const tsr__transport *tp, const void *buf, int64_t len, int dest,
                               int tag) {
  return tp->ops->send(tp, buf, len, dest, tag);
}
static inline int tsr__tp_complete(const tsr__transport *tp, tsr__tp_req *req, int wait,
                                   int *done) {
  return tp->ops->complete(tp, req, wait, done);
}
static inline int tsr__tp_poll(const tsr__transport *tp, int src, int tag, int *flag,
                               tsr__msg_info *info) {
  return tp->ops->poll(tp, src, tag, flag, info);
}
static inline int tsr__tp_wait(const tsr__transport *tp, int src, int tag, int idle,
                               tsr__msg_info *info) {
  return tp->ops->wait(tp, src, tag, idle, info);
}
static inline int tsr__tp_recv(const tsr__transport *tp, int src, int tag, void *buf,
                               int64_t len) {
  return tp->ops->recv(tp, src, tag, buf, len);
}

static inline int tsr__tp_commit(const tsr__transport *tp) {
  return tp->ops && tp->ops->commit ? tp->ops->commit(tp) : 0;
}

/* A reusable receive buffer: grown on demand, never shrunk (first touch of
 * fresh memory costs more than the copy). */
typedef struct {
  void *p;
  int64_t cap, len;
} tsr__srv_buf;
int tsr__srv_buf_grow(tsr__srv_buf *b, int64_t need);
void tsr__srv_buf_free(tsr__srv_buf *b);

/* Convert @p n doubles at @p p to floats in place (the floats take the
 * first half): the server's side of tsr_put_typed without precision=float.
 * Each value is (float)x, as a conversion on the model side would give. */
static inline void tsr__doubles_to_floats(void *p, int64_t n) {
  char *b = p;
  for (int64_t i = 0; i < n; i++) { /* float i lies at or before double i */
    double x;
    memcpy(&x, b + i * (int64_t)sizeof x, sizeof x);
    float y = (float)x;
    memcpy(b + i * (int64_t)sizeof y, &y, sizeof y);
  }
}

/* Wait (idle) for the next message from @p src with @p tag and receive it
 * into @p in (in->len bytes). When no memory can be had for it, the message
 * is dropped and TSR_ENOMEM returned, so the sender's stream stays in step. */
int tsr__tp_take(const tsr__transport *tp, int src, int tag, tsr__srv_buf *in);

/* Small messages sent without waiting for the receiver (a server never waits
 * for a model rank that is computing): each is copied and its copy freed
 * once the send completed. */
typedef struct {
  int n, cap;
  tsr__tp_req *req;
  void **copy;
} tsr__outbox;
/* Send a copy of @p msg; falls back to a blocking send without memory. */
int tsr__tp_post(const tsr__transport *tp, tsr__outbox *o, const void *msg, int64_t len, int dest,
                 int tag);
/* Free the copies whose sends completed (@p wait: wait for all). */
void tsr__tp_reap(const tsr__transport *tp, tsr__outbox *o, int wait);
void tsr__tp_outbox_free(tsr__outbox *o);

#endif
