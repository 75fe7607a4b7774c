/* Transports between model ranks and I/O servers (contract in
 * server_transport.h): the table, the `p2p` row (which the `rma` row of
 * server_rma.c reuses for the small messages), and the helpers every
 * transport shares (receive buffers, replies in flight). */
#include "server/server_transport.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera.h"

/* ---- p2p: MPI point-to-point ---- */

static int p2p_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag,
                     tsr__tp_req *req) {
  *req = (tsr__tp_req){.req = MPI_REQUEST_NULL, .dest = dest};
  if (len > INT_MAX) return TSR_ETOOBIG; /* callers check first: MPI counts are int */
  return MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, tp->comm, &req->req) == MPI_SUCCESS
             ? 0
             : TSR_EMPI;
}

static int p2p_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  if (len > INT_MAX) return TSR_ETOOBIG;
  return MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, tp->comm) == MPI_SUCCESS ? 0 : TSR_EMPI;
}

static int p2p_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done) {
  (void)tp;
  *done = 1;
  if (wait) return MPI_Wait(&req->req, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : TSR_EMPI;
  return MPI_Test(&req->req, done, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : TSR_EMPI;
}

static void info_of(const MPI_Status *st, tsr__msg_info *info) {
  int n = 0;
  MPI_Get_count(st, MPI_BYTE, &n);
  info->src = st->MPI_SOURCE;
  info->len = n;
}

static int p2p_poll(const tsr__transport *tp, int src, int tag, int *flag, tsr__msg_info *info) {
  MPI_Status st;
  *flag = 0;
  if (MPI_Iprobe(src, tag, tp->comm, flag, &st) != MPI_SUCCESS) return TSR_EMPI;
  if (*flag) info_of(&st, info);
  return 0;
}

/* Wait like MPI_Probe, but an idle waiter does not spin on a core for long:
 * MPI libraries busy-poll, and an idle server that shares cores with model
 * ranks (oversubscribed nodes, or servers placed on compute cores) would
 * steal their compute time. Spin for a short while (a message that is about
 * to arrive costs no sleep), then sleep with an exponential back-off capped
 * at 1 ms, which bounds the added latency per op. */
static int p2p_wait(const tsr__transport *tp, int src, int tag, int idle, tsr__msg_info *info) {
  MPI_Comm comm = tp->comm;
  MPI_Status st;
  if (!idle) {
    if (MPI_Probe(src, tag, comm, &st) != MPI_SUCCESS) return TSR_EMPI;
    info_of(&st, info);
    return 0;
  }
  double t0 = 0;
  long nap = 10000; /* ns */
  for (int spins = 0;; spins++) {
    int flag = 0;
    if (MPI_Iprobe(src, tag, comm, &flag, &st) != MPI_SUCCESS) return TSR_EMPI;
    if (flag) {
      info_of(&st, info);
      return 0;
    }
    if (spins == 0) t0 = MPI_Wtime();
    if (MPI_Wtime() - t0 < 50e-6) continue;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 1000000) nap *= 2;
  }
}

static int p2p_recv(const tsr__transport *tp, int src, int tag, void *buf, int64_t len) {
  MPI_Comm comm = tp->comm;
  if (!buf) { /* drop: a zero-byte receive consumes the message (truncated) */
    char none;
    if (tp->nrecv) ++*tp->nrecv;
    MPI_Recv(&none, 0, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE);
    return 0;
  }
  if (len > INT_MAX) return TSR_ETOOBIG;
  if (tp->nrecv) ++*tp->nrecv;
  return MPI_Recv(buf, (int)len, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS
             ? 0
             : TSR_EMPI;
}

const tsr__transport_ops tsr__transport_p2p = {
    .name = "p2p",
    .isend = p2p_isend,
    .send = p2p_send,
    .complete = p2p_complete,
    .poll = p2p_poll,
    .wait = p2p_wait,
    .recv = p2p_recv,
};

/* The table: one row per transport; the only place that knows their names.
 * The first row is the default. */
static const tsr__transport_ops *const transports[] = {&tsr__transport_p2p, &tsr__transport_rma,
                                                       &tsr__transport_shm};
enum { NTRANSPORTS = sizeof transports / sizeof transports[0] };

int tsr__transport_known(const char *name, size_t n) {
  for (int i = 0; i < NTRANSPORTS; i++)
    if (strlen(transports[i]->name) == n && memcmp(transports[i]->name, name, n) == 0) return 1;
  return 0;
}
int tsr__transport_count(void) { return NTRANSPORTS; }
const char *tsr__transport_name_at(int i) {
  return i >= 0 && i < NTRANSPORTS ? transports[i]->name : NULL;
}

int tsr__transport_init(tsr__transport *tp, const char *name, MPI_Comm comm, int is_server,
                        int64_t ring_bytes) {
  *tp = (tsr__transport){.comm = comm, .is_server = is_server, .ring_bytes = ring_bytes};
  for (int i = 0; i < NTRANSPORTS; i++)
    if (!name || !name[0] ? i == 0 : strcmp(transports[i]->name, name) == 0) {
      tp->ops = transports[i];
      /* On failure ops stay bound: tsr__transport_free must still take part
       * in the collective teardown on this rank. */
      return tp->ops->setup ? tp->ops->setup(tp) : 0;
    }
  return TSR_EHINT;
}

void tsr__transport_free(tsr__transport *tp) {
  if (tp->ops && tp->ops->teardown) tp->ops->teardown(tp);
  tp->ops = NULL;
  tp->state = NULL;
}

/* ---- shared helpers ---- */

void *tsr__tp_alloc(const tsr__transport *tp, int64_t len) {
  void *p = tp->ops && tp->ops->alloc ? tp->ops->alloc(tp, len) : NULL;
  return p ? p : malloc((size_t)len);
}

void tsr__tp_release(const tsr__transport *tp, void *buf) {
  if (!buf) return;
  if (!(tp->ops && tp->ops->release && tp->ops->release(tp, buf))) free(buf);
}

int tsr__srv_buf_grow(tsr__srv_buf *b, int64_t need) {
  if (need <= b->cap) return 0;
  void *p = realloc(b->p, (size_t)need); /* exactly: messages of a run have few sizes */
  if (!p) return TSR_ENOMEM;
  b->p = p;
  b->cap = need;
  return 0;
}

void tsr__srv_buf_free(tsr__srv_buf *b) {
  free(b->p);
  *b = (tsr__srv_buf){0};
}

int tsr__tp_take(const tsr__transport *tp, int src, int tag, tsr__srv_buf *in) {
  tsr__msg_info info;
  int rc = tsr__tp_wait(tp, src, tag, 1, &info);
  if (rc) return rc;
  in->len = 0;
  /* Exactly the message (one byte for an empty one): the buffer counts in
   * the server's peak, which a quarter of server_buffer_bytes bounds. */
  if ((rc = tsr__srv_buf_grow(in, info.len > 0 ? info.len : 1))) {
    tsr__tp_recv(tp, info.src, tag, NULL, 0); /* dropped: the stream stays in step */
    return rc;
  }
  /* From the message's source, which the wait named (src may be
   * MPI_ANY_SOURCE): the next message from it with this tag is this one. */
  if ((rc = tsr__tp_recv(tp, info.src, tag, in->p, info.len))) return rc;
  in->len = info.len;
  return 0;
}

int tsr__tp_post(const tsr__transport *tp, tsr__outbox *o, const void *msg, int64_t len, int dest,
                 int tag) {
  if (o->n == o->cap) {
    int ncap = o->cap ? 2 * o->cap : 16;
    tsr__tp_req *r = realloc(o->req, (size_t)ncap * sizeof *r);
    if (r) o->req = r;
    void **c = realloc(o->copy, (size_t)ncap * sizeof *c);
    if (c) o->copy = c;
    if (r && c) o->cap = ncap;
  }
  void *copy = o->n < o->cap ? malloc((size_t)len) : NULL;
  if (!copy) return tsr__tp_send(tp, msg, len, dest, tag); /* still delivered */
  memcpy(copy, msg, (size_t)len);
  int rc = tsr__tp_isend(tp, copy, len, dest, tag, &o->req[o->n]);
  if (rc) {
    free(copy);
    return rc;
  }
  o->copy[o->n++] = copy;
  return 0;
}

void tsr__tp_reap(const tsr__transport *tp, tsr__outbox *o, int wait) {
  int k = 0;
  for (int i = 0; i < o->n; i++) {
    int done = 1;
    tsr__tp_complete(tp, &o->req[i], wait, &done);
    if (done) {
      free(o->copy[i]);
    } else {
      o->req[k] = o->req[i];
      o->copy[k++] = o->copy[i];
    }
  }
  o->n = k;
}

void tsr__tp_outbox_free(tsr__outbox *o) {
  for (int i = 0; i < o->n; i++) free(o->copy[i]);
  free(o->req);
  free(o->copy);
  *o = (tsr__outbox){0};
}
