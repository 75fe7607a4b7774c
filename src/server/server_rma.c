/* The `rma` transport (transport=rma; contract in server_transport.h): the
 * model never sends its data. Each model rank exposes its hand-off ring in a
 * dynamic MPI window; for every message it posts only a small descriptor
 * (length, address in the window, and the address of its "fetched" counter
 * for that server) by a message with the message's tag, and the server pulls
 * the bytes with MPI_Get straight into their destination (its receive
 * buffer or the assembly slab), then adds 1 to that counter with
 * MPI_Accumulate. The model reuses a ring region once the counter says the
 * server fetched it. Messages of at most INLINE_MAX bytes (op headers,
 * control messages) travel inside the descriptor: one message instead of a
 * message plus a round trip. Replies (server -> model) are small and stay
 * point-to-point, as in the p2p row.
 *
 * Synchronisation: one passive-target epoch for the life of the window
 * (MPI_Win_lock_all with MPI_MODE_NOCHECK on every rank); a server completes
 * each Get and each Accumulate with MPI_Win_flush before it uses the bytes or
 * the model may see the count. The model reads its own counter with
 * MPI_Fetch_and_op(MPI_NO_OP) + flush, the portable way to see a remote
 * update of window memory.
 *
 * Progress without a helper thread: the servers drive every transfer (they
 * issue the Gets and poll for descriptors anyway). Where the MPI library
 * moves Get data without the target (Open MPI's osc/rdma over shared memory,
 * RDMA networks), the model is never involved; where the target must take
 * part (software RMA such as osc/pt2pt), it does so whenever the model rank
 * is inside an MPI call, and Tessera reads the counters at every hand-off
 * (tsr_put, tsr_close) and while it waits for ring space, so a transfer
 * waits at most until the model's next Tessera call. No thread polls, so
 * the model's compute time is not taken. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server_transport.h"
#include "tessera.h"

/* Messages up to this size are carried inside their descriptor. */
enum { INLINE_MAX = 1024 };
/* A tag no message carries (the wire's are 71xx): probed only to make progress. */
enum { PROGRESS_TAG = 7199 };

typedef struct {
  int64_t len;   /* bytes of the message */
  MPI_Aint addr; /* where they are in the sender's window; 0: inline, they follow */
  MPI_Aint done; /* the sender's counter to add 1 to once fetched */
} desc;

/* A descriptor a server received but whose bytes it has not taken yet (it
 * learned the length first: tsr__tp_wait, then tsr__tp_recv). At most one
 * per (source, tag), since the next is pulled only once this one is taken. */
typedef struct {
  int src, tag;
  char *msg; /* desc, then the inline bytes */
} pend;

typedef struct {
  MPI_Win win;
  int me;
  /* Model side: per rank of the communicator, how many messages that server
   * fetched (window memory, updated by the servers) and how many this rank
   * left in the window for it. */
  int64_t *fetched, *sent;
  MPI_Aint fetched_addr;
  /* Server side. */
  pend *pend;
  int npend, cappend;
  int64_t one; /* origin of the counters' increments: valid until flushed */
  int unified;  /* the window's memory model is MPI_WIN_UNIFIED */
} rma_state;

static int rma_setup(tsr__transport *tp) {
  int size, rc = 0;
  MPI_Comm_size(tp->comm, &size);
  /* A tiny allocation; if even it fails the window cannot be made here and
   * the collective below would not match, which MPI reports as an error. */
  rma_state *st = calloc(1, sizeof *st);
  if (!st) return TSR_ENOMEM;
  tp->state = st;
  st->win = MPI_WIN_NULL;
  st->one = 1;
  MPI_Comm_rank(tp->comm, &st->me);
  if (!tp->is_server) {
    st->fetched = calloc((size_t)size, sizeof *st->fetched);
    st->sent = calloc((size_t)size, sizeof *st->sent);
    if (!st->fetched || !st->sent) rc = TSR_ENOMEM;
  }
  /* Collective: made on every rank even after a local failure, so that the
   * caller's agreement and tsr__transport_free stay matched. */
  if (MPI_Win_create_dynamic(MPI_INFO_NULL, tp->comm, &st->win) != MPI_SUCCESS) {
    st->win = MPI_WIN_NULL;
    return TSR_EMPI;
  }
  MPI_Win_set_errhandler(st->win, MPI_ERRORS_RETURN);
  int *model = NULL, flag = 0;
  if (MPI_Win_get_attr(st->win, MPI_WIN_MODEL, &model, &flag) == MPI_SUCCESS && flag && model)
    st->unified = *model == MPI_WIN_UNIFIED;
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, st->win) != MPI_SUCCESS) rc = TSR_EMPI;
  if (!rc && !tp->is_server) {
    if (MPI_Win_attach(st->win, st->fetched, (MPI_Aint)size * (MPI_Aint)sizeof *st->fetched) !=
        MPI_SUCCESS)
      rc = TSR_EMPI;
    MPI_Get_address(st->fetched, &st->fetched_addr);
  }
  return rc;
}

static void rma_teardown(tsr__transport *tp) {
  rma_state *st = tp->state;
  if (!st) return;
  if (st->win != MPI_WIN_NULL) {
    if (st->fetched && st->fetched_addr) MPI_Win_detach(st->win, st->fetched);
    MPI_Win_unlock_all(st->win);
    MPI_Win_free(&st->win);
  }
  for (int i = 0; i < st->npend; i++) free(st->pend[i].msg);
  free(st->pend);
  free(st->fetched);
  free(st->sent);
  free(st);
  tp->state = NULL;
}

static int rma_expose(const tsr__transport *tp, void *buf, int64_t len) {
  rma_state *st = tp->state;
  if (tp->is_server) return 0;
  return MPI_Win_attach(st->win, buf, (MPI_Aint)len) == MPI_SUCCESS ? 0 : TSR_EMPI;
}

static void rma_unexpose(const tsr__transport *tp, void *buf) {
  rma_state *st = tp->state;
  if (!tp->is_server) MPI_Win_detach(st->win, buf);
}

/* ---- model side: descriptors out, counters in ---- */

static int rma_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag,
                     tsr__tp_req *req) {
  if (tp->is_server) return tsr__transport_p2p.isend(tp, buf, len, dest, tag, req);
  rma_state *st = tp->state;
  *req = (tsr__tp_req){.req = MPI_REQUEST_NULL, .dest = dest};
  if (len > INT_MAX) return TSR_ETOOBIG; /* MPI counts are int; callers check first */
  int inl = len <= INLINE_MAX;
  size_t n = sizeof(desc) + (size_t)(inl ? len : 0);
  char *m = malloc(n);
  if (!m) return TSR_ENOMEM;
  desc d = {.len = len};
  if (!inl) {
    MPI_Get_address(buf, &d.addr);
    d.done = MPI_Aint_add(st->fetched_addr, (MPI_Aint)dest * (MPI_Aint)sizeof(int64_t));
  }
  memcpy(m, &d, sizeof d);
  if (inl && len) memcpy(m + sizeof d, buf, (size_t)len);
  if (MPI_Isend(m, (int)n, MPI_BYTE, dest, tag, tp->comm, &req->req) != MPI_SUCCESS) {
    free(m);
    return TSR_EMPI;
  }
  req->mem = m;
  if (!inl) req->seq = ++st->sent[dest];
  return 0;
}

/* Blocking: the whole message inside its descriptor (error headers sent from
 * the stack, outside the window). */
static int rma_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  if (tp->is_server) return tsr__transport_p2p.send(tp, buf, len, dest, tag);
  if (len > INT_MAX - (int64_t)sizeof(desc)) return TSR_ETOOBIG;
  char small[sizeof(desc) + INLINE_MAX];
  size_t n = sizeof(desc) + (size_t)len;
  char *m = n <= sizeof small ? small : malloc(n);
  if (!m) return TSR_ENOMEM;
  desc d = {.len = len};
  memcpy(m, &d, sizeof d);
  if (len) memcpy(m + sizeof d, buf, (size_t)len);
  int rc = MPI_Send(m, (int)n, MPI_BYTE, dest, tag, tp->comm) == MPI_SUCCESS ? 0 : TSR_EMPI;
  if (m != small) free(m);
  return rc;
}

/* How many of this rank's window messages server @p dest has fetched. In
 * the unified memory model (MPI_WIN_UNIFIED: shared memory and most
 * networks) MPI_Win_sync makes the servers' completed updates visible to a
 * plain load of this rank's own window memory, which costs nothing like an
 * RMA call to itself (measured: 1-20 ms per call with osc/rdma on a loaded
 * node); otherwise an atomic read through the window. */
static int fetched_by(const tsr__transport *tp, const rma_state *st, int dest, int64_t *v) {
  if (st->unified) {
    /* A probe for a tag nobody sends: no match, but it runs MPI's progress
     * engine, which serves the servers' Gets where the MPI library needs the
     * target's help (software RMA). */
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, PROGRESS_TAG, tp->comm, &flag, MPI_STATUS_IGNORE);
    if (MPI_Win_sync(st->win) != MPI_SUCCESS) return TSR_EMPI;
    *v = ((volatile const int64_t *)st->fetched)[dest];
    return 0;
  }
  MPI_Aint at = MPI_Aint_add(st->fetched_addr, (MPI_Aint)dest * (MPI_Aint)sizeof(int64_t));
  if (MPI_Fetch_and_op(NULL, v, MPI_INT64_T, st->me, at, MPI_NO_OP, st->win) != MPI_SUCCESS ||
      MPI_Win_flush(st->me, st->win) != MPI_SUCCESS)
    return TSR_EMPI;
  return 0;
}

/* Done when the descriptor is sent and, for window data, the server fetched
 * it. A waiting model rank is blocked anyway; it spins briefly, then naps
 * (capped at 0.2 ms) so that a server sharing its core gets to run. */
static int rma_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done) {
  if (tp->is_server) return tsr__transport_p2p.complete(tp, req, wait, done);
  const rma_state *st = tp->state;
  *done = 0;
  if (req->req != MPI_REQUEST_NULL) {
    int flag = 1, r = wait ? MPI_Wait(&req->req, MPI_STATUS_IGNORE)
                           : MPI_Test(&req->req, &flag, MPI_STATUS_IGNORE);
    if (r != MPI_SUCCESS) flag = 1;
    if (!flag) return 0;
    free(req->mem);
    req->mem = NULL;
    if (r != MPI_SUCCESS) {
      *done = 1;
      return TSR_EMPI;
    }
  }
  if (req->seq == 0) {
    *done = 1;
    return 0;
  }
  long nap = 1000; /* ns */
  double t0 = MPI_Wtime();
  for (;;) {
    int64_t v = 0;
    if (fetched_by(tp, st, req->dest, &v)) {
      *done = 1;
      return TSR_EMPI;
    }
    if (v >= req->seq) {
      *done = 1;
      return 0;
    }
    if (!wait) return 0;
    if (MPI_Wtime() - t0 < 50e-6) continue;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 200000) nap *= 2;
  }
}

/* ---- server side: descriptors in, Gets, counters out ---- */

static pend *find(rma_state *st, int src, int tag) {
  for (int i = 0; i < st->npend; i++)
    if (st->pend[i].tag == tag && (src == MPI_ANY_SOURCE || st->pend[i].src == src))
      return &st->pend[i];
  return NULL;
}

/* Receive the descriptor whose envelope @p pi was probed. */
static int pull(const tsr__transport *tp, int tag, const tsr__msg_info *pi, pend **out) {
  rma_state *st = tp->state;
  if (st->npend == st->cappend) {
    int ncap = st->cappend ? 2 * st->cappend : 16;
    pend *p = realloc(st->pend, (size_t)ncap * sizeof *p);
    if (!p) return TSR_ENOMEM;
    st->pend = p;
    st->cappend = ncap;
  }
  if (pi->len < (int64_t)sizeof(desc)) return TSR_EMPI; /* not a descriptor */
  char *m = malloc((size_t)pi->len);
  if (!m) return TSR_ENOMEM;
  if (MPI_Recv(m, (int)pi->len, MPI_BYTE, pi->src, tag, tp->comm, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS) {
    free(m);
    return TSR_EMPI;
  }
  pend *p = &st->pend[st->npend++];
  *p = (pend){pi->src, tag, m};
  *out = p;
  return 0;
}

static void info_of(const pend *p, tsr__msg_info *info) {
  desc d;
  memcpy(&d, p->msg, sizeof d);
  info->src = p->src;
  info->len = d.len;
}

static int rma_poll(const tsr__transport *tp, int src, int tag, int *flag, tsr__msg_info *info) {
  if (!tp->is_server) return tsr__transport_p2p.poll(tp, src, tag, flag, info);
  pend *p = find(tp->state, src, tag);
  *flag = p != NULL;
  if (!p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.poll(tp, src, tag, flag, &pi);
    if (rc || !*flag) return rc;
    if ((rc = pull(tp, tag, &pi, &p))) return rc;
  }
  info_of(p, info);
  return 0;
}

static int rma_wait(const tsr__transport *tp, int src, int tag, int idle, tsr__msg_info *info) {
  if (!tp->is_server) return tsr__transport_p2p.wait(tp, src, tag, idle, info);
  pend *p = find(tp->state, src, tag);
  if (!p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.wait(tp, src, tag, idle, &pi);
    if (!rc) rc = pull(tp, tag, &pi, &p);
    if (rc) return rc;
  }
  info_of(p, info);
  return 0;
}

static int rma_recv(const tsr__transport *tp, int src, int tag, void *buf, int64_t len) {
  if (!tp->is_server) return tsr__transport_p2p.recv(tp, src, tag, buf, len);
  rma_state *st = tp->state;
  pend *p = find(st, src, tag);
  if (!p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.wait(tp, src, tag, 0, &pi);
    if (!rc) rc = pull(tp, tag, &pi, &p);
    if (rc) return rc;
  }
  desc d;
  memcpy(&d, p->msg, sizeof d);
  int rc = 0, from = p->src;
  if (tp->nrecv) ++*tp->nrecv;
  if (buf && d.len > len) {
    rc = TSR_EMPI; /* as MPI's truncation error */
  } else if (buf && !d.addr) {
    memcpy(buf, p->msg + sizeof d, (size_t)d.len);
  } else if (buf && d.len) {
    if (MPI_Get(buf, (int)d.len, MPI_BYTE, from, d.addr, (int)d.len, MPI_BYTE, st->win) !=
            MPI_SUCCESS ||
        MPI_Win_flush(from, st->win) != MPI_SUCCESS)
      rc = TSR_EMPI;
  }
  /* Fetched or dropped: either way the model may reuse the region. */
  if (d.addr &&
      (MPI_Accumulate(&st->one, 1, MPI_INT64_T, from, d.done, 1, MPI_INT64_T, MPI_SUM, st->win) !=
           MPI_SUCCESS ||
       MPI_Win_flush(from, st->win) != MPI_SUCCESS) &&
      !rc)
    rc = TSR_EMPI;
  free(p->msg);
  *p = st->pend[--st->npend];
  return rc;
}

const tsr__transport_ops tsr__transport_rma = {
    .name = "rma",
    .setup = rma_setup,
    .teardown = rma_teardown,
    .expose = rma_expose,
    .unexpose = rma_unexpose,
    .isend = rma_isend,
    .send = rma_send,
    .complete = rma_complete,
    .poll = rma_poll,
    .wait = rma_wait,
    .recv = rma_recv,
};
