/* The `rma` transport (transport=rma; contract in server_transport.h): the
 * model never sends its data. Each model rank exposes its hand-off ring in a
 * dynamic MPI window; for every message it posts only a small descriptor
 * (length, address in the window, and the address of its "fetched" counter
 * for that server) by a message with the message's tag, and the server pulls
 * the bytes with MPI_Get straight into their destination (its receive
 * buffer or the assembly slab), then adds 1 to that counter with
 * MPI_Accumulate. The model reuses a ring region once the counter says the
 * server fetched it. Messages of at most TSR__DESC_INLINE bytes (op headers,
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

#include "server/server_desc.h"
#include "server/server_transport.h"
#include "tessera.h"

/* A tag no message carries (the wire's are 71xx): probed only to make progress. */
enum { PROGRESS_TAG = 7199 };

typedef struct {
  tsr__desc_box box; /* first: the server side's descriptors (server_desc.h) */
  MPI_Win win;
  int me;
  /* Model side: per rank of the communicator, how many messages that server
   * fetched (window memory, updated by the servers) and how many this rank
   * left in the window for it. */
  int64_t *fetched, *sent;
  MPI_Aint fetched_addr;
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
  tsr__desc_box_free(&st->box);
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
  tsr__desc d = {.len = len};
  if (len > TSR__DESC_INLINE) {
    MPI_Get_address(buf, &d.addr);
    d.done = MPI_Aint_add(st->fetched_addr, (MPI_Aint)dest * (MPI_Aint)sizeof(int64_t));
  }
  int rc = tsr__desc_isend(tp, d, buf, dest, tag, req);
  if (!rc && d.addr) req->seq = ++st->sent[dest];
  return rc;
}

/* Blocking: the whole message inside its descriptor (error headers sent from
 * the stack, outside the window). */
static int rma_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  if (tp->is_server) return tsr__transport_p2p.send(tp, buf, len, dest, tag);
  return tsr__desc_send(tp, buf, len, dest, tag);
}

/* How many of this rank's window messages server @p dest has fetched. In
 * the unified memory model (MPI_WIN_UNIFIED: shared memory and most
 * networks) MPI_Win_sync makes the servers' completed updates visible to a
 * plain load of this rank's own window memory, which costs nothing like an
 * RMA call to itself (measured: 1-20 ms per call with osc/rdma on a loaded
 * node); otherwise an atomic read through the window. */
static int fetched_by(const tsr__transport *tp, int dest, int64_t *v) {
  const rma_state *st = tp->state;
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

/* Done when the descriptor is sent and, for window data, the server fetched it. */
static int rma_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done) {
  if (tp->is_server) return tsr__transport_p2p.complete(tp, req, wait, done);
  return tsr__desc_complete(tp, req, wait, done, fetched_by);
}

/* ---- server side: descriptors in, Gets, counters out ---- */

static int get_bytes(const tsr__transport *tp, int from, const tsr__desc *d, void *buf) {
  const rma_state *st = tp->state;
  return MPI_Get(buf, (int)d->len, MPI_BYTE, from, d->addr, (int)d->len, MPI_BYTE, st->win) ==
                     MPI_SUCCESS &&
                 MPI_Win_flush(from, st->win) == MPI_SUCCESS
             ? 0
             : TSR_EMPI;
}

static int count_fetched(const tsr__transport *tp, int from, const tsr__desc *d) {
  rma_state *st = tp->state;
  return MPI_Accumulate(&st->one, 1, MPI_INT64_T, from, d->done, 1, MPI_INT64_T, MPI_SUM,
                        st->win) == MPI_SUCCESS &&
                 MPI_Win_flush(from, st->win) == MPI_SUCCESS
             ? 0
             : TSR_EMPI;
}

static int rma_recv(const tsr__transport *tp, int src, int tag, void *buf, int64_t len) {
  if (!tp->is_server) return tsr__transport_p2p.recv(tp, src, tag, buf, len);
  rma_state *st = tp->state;
  return tsr__desc_recv(tp, &st->box, src, tag, buf, len, get_bytes, count_fetched);
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
    .poll = tsr__desc_row_poll,
    .wait = tsr__desc_row_wait,
    .recv = rma_recv,
};
