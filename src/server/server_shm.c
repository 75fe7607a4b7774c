/* The `shm` transport (transport=shm; contract in server_transport.h): a
 * model rank's hand-off ring lives in a shared-memory window
 * (MPI_Win_allocate_shared over the ranks of the model<->server
 * communicator that share a node), and a server on the same node copies a
 * message's bytes straight out of it with memcpy. The model posts only a
 * descriptor (server_desc.c: length and offset in its segment); small
 * messages ride inside it. So the hand-off is the model's one copy into
 * the ring, whatever the MPI library's own shared-memory path does with
 * large messages: where it has no single-copy mechanism (no CMA, XPMEM or
 * KNEM, as in containers and under Yama's ptrace restriction), Open MPI's
 * p2p copies a large message through small shared fragments that the
 * sender fills inside its own MPI calls, which made the hand-off 4-5x a
 * memcpy (apps/bench/README.md). Messages to and from ranks on another
 * node, and the servers' replies, go point to point as in the p2p row.
 *
 * Each model rank's segment: a header of one "taken" counter per rank of
 * the communicator (written by that server only), then the ring. A server
 * takes the bytes, then stores the counter + 1; the model reuses a ring
 * region once the counter reaches the message's sequence number.
 *
 * Synchronisation: one passive-target epoch for the life of the window
 * (MPI_Win_lock_all, MPI_MODE_NOCHECK) and MPI_Win_sync as the memory
 * barrier of the unified model, as in server_conc_shm.c: the model syncs
 * between writing the ring and posting the descriptor; the server syncs
 * after receiving it (the message orders the two), again after its copy,
 * and before the model reads the counter it syncs once more. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/base.h"
#include "server/server_desc.h"
#include "server/server_transport.h"
#include "tessera.h"

enum { LINE = 64 }; /* the header is padded to a cache line */

typedef struct {
  tsr__desc_box box; /* first: the server side's descriptors (server_desc.h) */
  MPI_Comm node;  /* the communicator's ranks on this node */
  MPI_Win win;
  int me;
  int *local;    /* per rank of the communicator: its rank in `node`, or -1 */
  char **seg;    /* per rank of `node`: its segment (header, then ring) */
  int64_t head;  /* bytes of a segment's header */
  int64_t room;  /* bytes of this rank's ring in its segment */
  int lent;      /* the ring was handed out (tsr__tp_alloc) */
  int64_t *sent; /* model side: messages left in the segment per server */
} shm_state;

static int is_direct(const tsr__transport *tp, int src) {
  const shm_state *st = tp->state;
  return src < 0 || st->local[src] < 0;
}

static volatile int64_t *taken_word(const shm_state *st, int model_node_rank, int server) {
  return (volatile int64_t *)st->seg[model_node_rank] + server;
}

/* Fault every page of the segment in now, at tsr_init: shared memory gets
 * no transparent huge pages, so a first touch costs a fault per 4 KiB page,
 * which made the hand-off of the first outputs 1.5x what it is once the
 * ring is warm. MADV_POPULATE_WRITE (Linux 5.14) reports a segment the
 * shared-memory file system cannot hold as an error, where touching its
 * pages would kill the process with SIGBUS (a small /dev/shm, as in
 * containers); without it (older kernels) the pages fault in as the ring
 * first reaches them. */
static int populate(char *base, int64_t len) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo = ((uintptr_t)base + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
  uintptr_t hi = ((uintptr_t)base + (uintptr_t)len) / (uintptr_t)page * (uintptr_t)page;
  if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "transport=shm: %lld bytes of shared memory for the hand-off ring (buffer_bytes) "
             "cannot be had (%s): make buffer_bytes smaller or the shared-memory file system "
             "(/dev/shm) larger, or use transport=p2p",
             (long long)len, strerror(errno));
    tsr__set_last_error(msg);
    return TSR_ENOMEM;
  }
#else
  (void)base;
  (void)len;
#endif
  return 0;
}

/* Do the node's segments fit in its shared-memory file system? Checked
 * before MPI_Win_allocate_shared, because Open MPI's osc/sm, when its
 * backing file does not fit, fails on one rank and leaves the others
 * waiting inside the collective call for good (seen with Open MPI 4.1 and
 * a 64 MiB /dev/shm). Agreed over the whole communicator, so that every
 * rank skips the window alike; the sentence is set on every rank. Where
 * /dev/shm cannot be asked, nothing is checked. */
static int room_on_nodes(const tsr__transport *tp, const shm_state *st) {
  long long need = st->room ? (long long)(st->head + st->room) : 0, total = 0;
  MPI_Allreduce(&need, &total, 1, MPI_LONG_LONG, MPI_SUM, st->node);
  long long free_bytes = -1;
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) == 0) free_bytes = (long long)fs.f_bavail * (long long)fs.f_frsize;
  /* One reduction for both figures: the most wanted and (negated) the
   * least free of the nodes that lack room. */
  int short_of_room = free_bytes >= 0 && total > free_bytes;
  long long mine[2] = {short_of_room ? total : 0, short_of_room ? -free_bytes : LLONG_MIN};
  long long worst[2];
  MPI_Allreduce(mine, worst, 2, MPI_LONG_LONG, MPI_MAX, tp->comm);
  if (worst[0] == 0) return 0;
  char msg[320];
  snprintf(msg, sizeof msg,
           "transport=shm: the hand-off rings of a node's model ranks (buffer_bytes each) need "
           "%lld bytes of shared memory, and /dev/shm has %lld free: make buffer_bytes smaller "
           "or /dev/shm larger, or use transport=p2p",
           worst[0], -worst[1]);
  tsr__set_last_error(msg);
  return TSR_ENOMEM;
}

static int shm_setup(tsr__transport *tp) {
  int size, rc = 0;
  MPI_Comm_size(tp->comm, &size);
  shm_state *st = calloc(1, sizeof *st);
  if (!st) return TSR_ENOMEM;
  tp->state = st;
  st->win = MPI_WIN_NULL;
  st->node = MPI_COMM_NULL;
  st->box.direct = is_direct;
  MPI_Comm_rank(tp->comm, &st->me);
  st->local = malloc((size_t)size * sizeof *st->local);
  st->sent = calloc((size_t)size, sizeof *st->sent);
  if (!st->local || !st->sent) rc = TSR_ENOMEM;
  /* Collective from here on, whatever happened locally, so that the
   * caller's agreement and tsr__transport_free stay matched. */
  if (MPI_Comm_split_type(tp->comm, MPI_COMM_TYPE_SHARED, st->me, MPI_INFO_NULL, &st->node) !=
      MPI_SUCCESS) {
    st->node = MPI_COMM_NULL;
    return TSR_EMPI;
  }
  int nn;
  MPI_Comm_size(st->node, &nn);
  st->head = ((int64_t)size * (int64_t)sizeof(int64_t) + LINE - 1) / LINE * LINE;
  st->room = tp->is_server || rc ? 0 : tp->ring_bytes;
  if ((rc = room_on_nodes(tp, st))) { /* agreed over the communicator: no window */
    st->room = 0;
    return rc;
  }
  char *base = NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each segment on its own pages */
  int r = MPI_Win_allocate_shared(st->room ? (MPI_Aint)(st->head + st->room) : 0, 1, info,
                                  st->node, &base, &st->win);
  MPI_Info_free(&info);
  if (r != MPI_SUCCESS) {
    st->win = MPI_WIN_NULL;
    return TSR_EMPI;
  }
  if (!rc) {
    /* Which ranks share this node, and where their segments are. */
    MPI_Group g, gn;
    int *all = malloc((size_t)size * sizeof *all);
    st->seg = calloc((size_t)nn, sizeof *st->seg);
    if (!all || !st->seg) rc = TSR_ENOMEM;
    for (int i = 0; i < size && all; i++) all[i] = i;
    if (!rc) {
      MPI_Comm_group(tp->comm, &g);
      MPI_Comm_group(st->node, &gn);
      MPI_Group_translate_ranks(g, size, all, gn, st->local);
      MPI_Group_free(&g);
      MPI_Group_free(&gn);
      for (int i = 0; i < size; i++)
        if (st->local[i] == MPI_UNDEFINED) st->local[i] = -1;
    }
    free(all);
    for (int i = 0; i < nn && !rc; i++) {
      MPI_Aint sz;
      int du;
      if (MPI_Win_shared_query(st->win, i, &sz, &du, &st->seg[i]) != MPI_SUCCESS) rc = TSR_EMPI;
      if (sz == 0) st->seg[i] = NULL; /* a server: no segment */
    }
    if (st->room && base) {
      memset(base, 0, (size_t)st->head); /* every counter at 0 */
      if (!rc) rc = populate(base, st->head + st->room);
    }
  }
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, st->win) != MPI_SUCCESS && !rc) rc = TSR_EMPI;
  MPI_Win_sync(st->win);
  MPI_Barrier(st->node); /* the counters are zero before any server writes one */
  return rc;
}

static void shm_teardown(tsr__transport *tp) {
  shm_state *st = tp->state;
  if (!st) return;
  if (st->win != MPI_WIN_NULL) {
    MPI_Win_unlock_all(st->win);
    MPI_Win_free(&st->win);
  }
  if (st->node != MPI_COMM_NULL) MPI_Comm_free(&st->node);
  tsr__desc_box_free(&st->box);
  free(st->local);
  free(st->seg);
  free(st->sent);
  free(st);
  tp->state = NULL;
}

/* The ring's memory: this rank's segment, once, when it is large enough. */
static void *shm_alloc(const tsr__transport *tp, int64_t len) {
  shm_state *st = tp->state;
  if (tp->is_server || st->lent || len > st->room || !st->seg) return NULL;
  st->lent = 1;
  return st->seg[st->local[st->me]] + st->head;
}

static int shm_release(const tsr__transport *tp, void *buf) {
  shm_state *st = tp->state;
  if (!st->lent || !st->seg || buf != st->seg[st->local[st->me]] + st->head) return 0;
  st->lent = 0;
  return 1;
}

/* ---- model side ---- */

static int shm_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag,
                     tsr__tp_req *req) {
  shm_state *st = tp->state;
  if (tp->is_server || is_direct(tp, dest))
    return tsr__transport_p2p.isend(tp, buf, len, dest, tag, req);
  tsr__desc d = {.len = len};
  const char *ring = st->lent ? st->seg[st->local[st->me]] + st->head : NULL;
  if (len > TSR__DESC_INLINE && ring && (const char *)buf >= ring &&
      (const char *)buf + len <= ring + st->room) {
    d.addr = (MPI_Aint)((const char *)buf - (ring - st->head)); /* >= head > 0 */
    MPI_Win_sync(st->win); /* the bytes are in memory before the server reads them */
  }
  int rc = tsr__desc_isend(tp, d, buf, dest, tag, req);
  if (!rc && d.addr) req->seq = ++st->sent[dest];
  return rc;
}

static int shm_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  if (tp->is_server || is_direct(tp, dest)) return tsr__transport_p2p.send(tp, buf, len, dest, tag);
  return tsr__desc_send(tp, buf, len, dest, tag);
}

static int taken_by(const tsr__transport *tp, int dest, int64_t *v) {
  const shm_state *st = tp->state;
  MPI_Win_sync(st->win);
  *v = *taken_word(st, st->local[st->me], dest);
  return 0;
}

static int shm_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done) {
  if (tp->is_server || is_direct(tp, req->dest))
    return tsr__transport_p2p.complete(tp, req, wait, done);
  return tsr__desc_complete(tp, req, wait, done, taken_by);
}

/* ---- server side ---- */

static int copy_bytes(const tsr__transport *tp, int from, const tsr__desc *d, void *buf) {
  const shm_state *st = tp->state;
  MPI_Win_sync(st->win); /* the model's bytes, written before its descriptor */
  memcpy(buf, st->seg[st->local[from]] + d->addr, (size_t)d->len);
  return 0;
}

static int count_taken(const tsr__transport *tp, int from, const tsr__desc *d) {
  const shm_state *st = tp->state;
  (void)d;
  MPI_Win_sync(st->win); /* the copy is done before the model may reuse the bytes */
  volatile int64_t *w = taken_word(st, st->local[from], st->me);
  *w = *w + 1; /* this server alone writes this word */
  MPI_Win_sync(st->win);
  return 0;
}

static int shm_recv(const tsr__transport *tp, int src, int tag, void *buf, int64_t len) {
  shm_state *st = tp->state;
  if (!tp->is_server) return tsr__transport_p2p.recv(tp, src, tag, buf, len);
  if (src == MPI_ANY_SOURCE) { /* learn whose message is next: descriptor or not */
    tsr__msg_info i;
    int rc = tsr__desc_wait(tp, &st->box, src, tag, 0, &i);
    if (rc) return rc;
    src = i.src;
  }
  if (is_direct(tp, src)) return tsr__transport_p2p.recv(tp, src, tag, buf, len);
  return tsr__desc_recv(tp, &st->box, src, tag, buf, len, copy_bytes, count_taken);
}

const tsr__transport_ops tsr__transport_shm = {
    .name = "shm",
    .setup = shm_setup,
    .teardown = shm_teardown,
    .alloc = shm_alloc,
    .release = shm_release,
    .isend = shm_isend,
    .send = shm_send,
    .complete = shm_complete,
    .poll = tsr__desc_row_poll,
    .wait = tsr__desc_row_wait,
    .recv = shm_recv,
};
