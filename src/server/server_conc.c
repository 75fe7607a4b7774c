/* Concentrators (concentrators=per_node|N; contract in server_transport.h):
 * a layer over the transport in use (p2p or rma), so that only one model
 * rank per node (MPI_Comm_split_type SHARED) or per N model ranks talks to
 * the servers, in few large messages (CDI-PIO's and XIOS's intermediate
 * layer, WRF's quilting fan-in).
 *
 * Model side: a rank's messages for the servers are not sent but copied,
 * with a small envelope (origin, tag, destination, length), into its
 * staging area; the hand-off returns at once as before. At the end of every
 * strategy op (tsr__tp_commit, collective over the model ranks, which all
 * make every op) the concentrator of each group takes its members' staging
 * areas (per_node: from their slots of the node's shared-memory window,
 * server_conc_shm.c, where each member copied its area; per N ranks, which
 * may span nodes: MPI point-to-point on the group's communicator) and
 * forwards, per server, one *bundle* (a count, then the
 * messages with their envelopes, in the order each member made them) by the
 * inner transport, tag TSR__WIRE_TAG_BUNDLE (when all go to one server, the
 * common case, the members' areas are received straight into the bundle,
 * whose layout they already have). Every bundle is preceded by its *index*
 * (the count, then each message's envelope and, for op and part messages,
 * its wire header): a server that cannot hold a bundle still knows what was
 * in it. Bundles are cut at the servers' message bound (server_buffer_bytes/8,
 * tsr__srv_chunk) and held until sent; the concentrator holds at most
 * buffer_bytes of them in flight and otherwise
 * waits (the back-pressure the ring gives without concentrators).
 *
 * Server side: a receive of message (src, tag) is served from a queue of
 * unpacked messages; when the queue has none, the server takes the next
 * bundle from src's concentrator (every rank knows every rank's
 * concentrator from setup) and queues its messages. Per (source, tag) the
 * order is the order the member made them, which is all MPI's
 * non-overtaking rule gave the server loop, so the loop, the writer and
 * the wire format do not know that concentrators exist. Replies (server ->
 * model) go by the inner transport directly.
 *
 * A bundle the server cannot hold (past the bundles' share of
 * server_buffer_bytes with those it holds, or no memory for it) is
 * received and dropped, and its messages are queued as *lost* from the
 * index: a lost op or part message is delivered as its wire header with
 * err = TSR_ENOMEM (the error header a client sends
 * when it cannot hand a tile over), a lost piece fails its receive with
 * TSR_ENOMEM (as a frame the server cannot allocate). Every stream stays in
 * step, the file fails on the server, and the model ranks get TSR_ENOMEM at
 * its next flush or close, with a message naming the server and the bundle
 * size (tsr__tp_refusal). Bundles held (their indexes too, a file's
 * description not: it is no data in flight) count in the server's peak
 * memory (tsr__tp_held). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_conc_shm.h"
#include "server/server_transport.h"
#include "server/server_wire.h"
#include "tessera.h"

/* One message in a staging area or a bundle; its bytes follow, aligned. */
typedef struct {
  int32_t src, tag, dest, order; /* order: the model side's key (tsr__transport.order) */
  int64_t len, pad_;
} envelope;

_Static_assert(sizeof(envelope) + 16 == TSR__CONC_FRAME, "the model side's room for framing");

typedef struct {
  char *p;
  int64_t len, cap;
} bytes;

/* A bundle sent by the inner transport, held until both sends completed:
 * its index (which lies after it in buf: one exposure for the two), then it. */
typedef struct {
  tsr__tp_req ireq, req;
  char *buf;
  int64_t len;
} flight;

/* A received bundle (and its index), freed when its last message was taken. */
typedef struct {
  char *buf, *index;
  int64_t len;     /* bytes of buf held */
  int64_t counted; /* its bytes in the server's peak: index and body, less descriptions */
  int refs;
} bundle;

/* A message taken from a bundle. Lost (its bundle was refused): only the
 * first `have` bytes, from the index, are known. */
typedef struct {
  int src, tag, lost;
  int64_t len, have;
  const char *data;
  bundle *b;
} queued;

typedef struct {
  tsr__transport inner;
  int me;       /* rank in the transport's communicator */
  int *conc_of; /* per rank of the communicator: its concentrator (-1: a server) */
  /* Model side. */
  MPI_Comm ccomm; /* this rank's group; rank 0 is the concentrator */
  int crank, csize;
  bytes stage;      /* this rank's messages since the last commit */
  int64_t stage_dest, stage_count; /* their one destination (-1: several), how many */
  int64_t stage_order;             /* their largest order key */
  int last_order, nops;            /* the last key handed over; ops seen since the commit */
  bytes gathered;   /* concentrator: the staging areas members sent */
  tsr__conc_shm shm; /* per_node: the members' slots in a shared window */
  int64_t seq;       /* commits made */
  int64_t *lens;    /* concentrator: each member's staging bytes, destination, count, key */
  flight *fl;       /* concentrator: bundles in flight, oldest first */
  int nfl, capfl;
  int64_t inflight, limit, chunk;
  /* Server side. */
  queued *q;
  int nq, capq;
  int64_t bound;      /* server_buffer_bytes (0 = none): bundles held stay under 3/4 of it */
  int64_t held, peak; /* bytes of bundles held now, and the most since the last tsr__tp_held */
  int server;         /* this server's index, for messages */
  char why[200];      /* the first refusal, for the failed file's message */
} conc_state;

static int grow(bytes *b, int64_t need) {
  if (need <= b->cap) return 0;
  int64_t ncap = b->cap ? 2 * b->cap : 1 << 16;
  while (ncap < need) ncap *= 2;
  char *p = realloc(b->p, (size_t)ncap);
  if (!p) return TSR_ENOMEM;
  b->p = p;
  b->cap = ncap;
  return 0;
}

static int is_data_tag(int tag) { return tag == TSR__WIRE_TAG_HDR || tag == TSR__WIRE_TAG_DATA; }

/* Bytes of a message the index carries: an op or part message's wire header
 * (all a lost one needs to fail its file and keep the round in step). */
static int64_t prefix_of(const envelope *e) {
  int64_t h = (int64_t)sizeof(tsr__wire_hdr);
  return e->tag == TSR__WIRE_TAG_HDR ? (e->len < h ? e->len : h) : 0;
}

/* ---- model side ---- */

/* Copy the message into the staging area: the caller's buffer is free at
 * once (the request completes without waiting). */
static int stage_msg(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  conc_state *st = tp->state;
  if (len > INT_MAX) return TSR_ETOOBIG;
  int64_t at = st->stage.len, n = (int64_t)sizeof(envelope) + tsr__wire_align(len);
  if (grow(&st->stage, at + n)) return TSR_ENOMEM;
  if (at == 0) st->stage_dest = dest, st->stage_count = 0, st->stage_order = 0, st->nops = 0;
  else if (st->stage_dest != dest) st->stage_dest = -1;
  st->stage_count++;
  /* A key that goes down starts the next op of the same commit: its
   * messages sort after the op before (keys of an op stay below 2^20). */
  if (at > 0 && tp->order < st->last_order) st->nops++;
  st->last_order = tp->order;
  int32_t key = st->nops * (1 << 20) + tp->order;
  if (key > st->stage_order) st->stage_order = key;
  envelope e = {.src = st->me, .tag = tag, .dest = dest, .order = key, .len = len};
  memcpy(st->stage.p + at, &e, sizeof e);
  if (len) memcpy(st->stage.p + at + sizeof e, buf, (size_t)len);
  st->stage.len = at + n;
  return 0;
}

static int conc_isend(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag,
                      tsr__tp_req *req) {
  conc_state *st = tp->state;
  *req = (tsr__tp_req){.req = MPI_REQUEST_NULL, .dest = dest};
  if (tp->is_server || !is_data_tag(tag))
    return st->inner.ops->isend(&st->inner, buf, len, dest, tag, req);
  return stage_msg(tp, buf, len, dest, tag);
}

static int conc_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  conc_state *st = tp->state;
  if (tp->is_server || !is_data_tag(tag))
    return st->inner.ops->send(&st->inner, buf, len, dest, tag);
  return stage_msg(tp, buf, len, dest, tag);
}

static int conc_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done) {
  conc_state *st = tp->state;
  if (!tp->is_server && req->req == MPI_REQUEST_NULL && !req->mem && !req->seq) {
    *done = 1; /* staged: a copy */
    return 0;
  }
  return st->inner.ops->complete(&st->inner, req, wait, done);
}

/* Complete the oldest bundle in flight (waiting when @p wait); 1 when done. */
static int land_oldest(conc_state *st, int wait, int *rc) {
  if (st->nfl == 0) return 0;
  flight *f = &st->fl[0];
  int done = 0, idone = 0;
  if (st->inner.ops->complete(&st->inner, &f->ireq, wait, &idone) ||
      (idone && st->inner.ops->complete(&st->inner, &f->req, wait, &done))) {
    *rc = TSR_EMPI;
    done = 1;
  }
  if (!done) return 0;
  if (st->inner.ops->unexpose) st->inner.ops->unexpose(&st->inner, f->buf);
  free(f->buf);
  st->inflight -= f->len;
  memmove(st->fl, st->fl + 1, (size_t)(--st->nfl) * sizeof *st->fl);
  return 1;
}

/* Send bundle @p buf of @p len bytes to @p dest, its index of @p ilen
 * bytes (at buf + len) first (ownership passes). */
static int launch(conc_state *st, char *buf, int64_t len, int64_t ilen, int dest) {
  int rc = 0;
  if (st->nfl == st->capfl) {
    int ncap = st->capfl ? 2 * st->capfl : 16;
    flight *f = realloc(st->fl, (size_t)ncap * sizeof *f);
    if (!f) rc = TSR_ENOMEM;
    else st->fl = f, st->capfl = ncap;
  }
  int exposed = 0;
  if (!rc && st->inner.ops->expose) { /* rma: the server fetches the bundle */
    rc = st->inner.ops->expose(&st->inner, buf, len + ilen);
    exposed = !rc;
  }
  flight fl = {.buf = buf, .len = len + ilen};
  fl.ireq = fl.req = (tsr__tp_req){.req = MPI_REQUEST_NULL};
  if (!rc)
    rc = st->inner.ops->isend(&st->inner, buf + len, ilen, dest, TSR__WIRE_TAG_BUNDLE, &fl.ireq);
  if (!rc) rc = st->inner.ops->isend(&st->inner, buf, len, dest, TSR__WIRE_TAG_BUNDLE, &fl.req);
  if (rc) {
    if (exposed) st->inner.ops->unexpose(&st->inner, buf);
    free(buf);
    return rc;
  }
  st->fl[st->nfl++] = fl;
  st->inflight += fl.len;
  return 0;
}

/* The envelopes of @p seg (a staging area) in order: the one at *at. */
static const envelope *next_env(const bytes *seg, int64_t *at) {
  if (*at >= seg->len) return NULL;
  const envelope *e = (const envelope *)(seg->p + *at);
  *at += (int64_t)sizeof *e + tsr__wire_align(e->len);
  return e;
}

/* Append the index of bundle *pb (count messages, blen bytes) to it: the
 * count, then per message its envelope and prefix (prefix_of), aligned.
 * Returns the index's size, 0 without memory. */
static int64_t add_index(char **pb, int64_t blen, int64_t count) {
  int64_t n = 16, at = 16;
  envelope e;
  for (int64_t k = 0; k < count; k++, at += (int64_t)sizeof e + tsr__wire_align(e.len)) {
    memcpy(&e, *pb + at, sizeof e);
    n += (int64_t)sizeof e + tsr__wire_align(prefix_of(&e));
  }
  char *nb = realloc(*pb, (size_t)(blen + n));
  if (!nb) return 0;
  *pb = nb;
  const char *b = nb;
  char *x = nb + blen;
  memset(x, 0, (size_t)n);
  memcpy(x, &count, sizeof count);
  int64_t o = 16;
  at = 16;
  for (int64_t k = 0; k < count; k++, at += (int64_t)sizeof e + tsr__wire_align(e.len)) {
    memcpy(&e, b + at, sizeof e);
    memcpy(x + o, &e, sizeof e);
    memcpy(x + o + sizeof e, b + at + sizeof e, (size_t)prefix_of(&e));
    o += (int64_t)sizeof e + tsr__wire_align(prefix_of(&e));
  }
  return n;
}

/* Send a finished bundle (count first), its index ahead of it, after
 * waiting while more than st->limit bytes are in flight (the back-pressure
 * of the ring). */
static int send_bundle(conc_state *st, char *b, int64_t blen, int64_t count, int dest) {
  int rc = 0;
  memcpy(b, &count, sizeof count);
  while (!rc && st->nfl && st->inflight + blen > st->limit && land_oldest(st, 1, &rc)) {
  }
  int64_t ilen = rc ? 0 : add_index(&b, blen, count);
  if (!rc && !ilen) rc = TSR_ENOMEM;
  if (rc) {
    free(b);
    return rc;
  }
  return launch(st, b, blen, ilen, dest);
}

/* One of d's messages, in the order forwarded: by key, then as made. */
typedef struct {
  const envelope *e;
  int64_t seq;
} fwd;

static int by_order(const void *a, const void *b) {
  const fwd *x = a, *y = b;
  if (x->e->order != y->e->order) return x->e->order < y->e->order ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Concentrator: forward the group's messages, per server in bundles of at
 * most st->chunk bytes (or one message). The members' staging areas lie in
 * @p segs, in member order; per server the messages go sorted by their
 * order key, in member order within a key (so a member's messages keep
 * their order: its keys never decrease within an op). */
static int forward(conc_state *st, const bytes *segs, int nsegs) {
  int rc = 0, nd = 0, capd = 0, *dests = NULL;
  int64_t nmsg = 0;
  const envelope *e;
  for (int s = 0; s < nsegs && !rc; s++) /* the servers, in order of appearance */
    for (int64_t at = 0; (e = next_env(&segs[s], &at));) {
      nmsg++;
      int seen = 0;
      for (int i = 0; i < nd && !seen; i++) seen = dests[i] == e->dest;
      if (seen) continue;
      if (nd == capd) {
        int *p = realloc(dests, (size_t)(capd = capd ? 2 * capd : 8) * sizeof *p);
        if (!p) {
          rc = TSR_ENOMEM;
          break;
        }
        dests = p;
      }
      dests[nd++] = e->dest;
    }
  fwd *list = rc ? NULL : malloc((size_t)(nmsg ? nmsg : 1) * sizeof *list);
  if (!rc && !list) rc = TSR_ENOMEM;
  const int64_t max = st->chunk > 0 ? st->chunk : INT_MAX / 2;
  for (int i = 0; i < nd && !rc; i++) {
    int d = dests[i];
    int64_t n_d = 0, left = 0; /* d's messages; their bytes not yet in a bundle */
    for (int s = 0; s < nsegs; s++)
      for (int64_t at = 0; (e = next_env(&segs[s], &at));)
        if (e->dest == d) {
          list[n_d] = (fwd){e, n_d};
          n_d++;
          left += (int64_t)sizeof *e + tsr__wire_align(e->len);
        }
    qsort(list, (size_t)n_d, sizeof *list, by_order);
    char *b = NULL;
    int64_t blen = 0, count = 0;
    for (int64_t k = 0; k < n_d && !rc; k++) {
      e = list[k].e;
      int64_t n = (int64_t)sizeof *e + tsr__wire_align(e->len);
      if (b && blen + n > max) { /* full: off it goes */
        rc = send_bundle(st, b, blen, count, d);
        b = NULL;
        if (rc) break;
      }
      if (!b) {
        int64_t cap = 16 + left <= max ? 16 + left : (16 + n > max ? 16 + n : max);
        if (!(b = malloc((size_t)cap))) {
          rc = TSR_ENOMEM;
          break;
        }
        blen = 16;
        count = 0;
      }
      memcpy(b + blen, e, (size_t)n);
      blen += n;
      left -= n;
      count++;
    }
    if (b && !rc) rc = send_bundle(st, b, blen, count, d);
    else free(b);
  }
  free(list);
  free(dests);
  return rc;
}

enum { PIECE = 1 << 30 }; /* MPI counts are int: areas move in pieces of 1 GiB */
/* A member's slot in the node's window: an op's staging area up to this
 * size goes by memory copy, a larger one by MPI_Send. */
enum { SHM_ROOM = 16 << 20 };
/* Per member: staging bytes, destination, count, largest key, in the window. */
enum { NL = 5 };

/* Concentrator: receive every member's staging area, back to back, into
 * @p dst (NULL: take and drop them, so that no member hangs). */
static int take_members(conc_state *st, char *dst) {
  int rc = 0;
  int64_t off = 0;
  for (int i = 1; i < st->csize; i++) {
    int64_t len = st->lens[NL * i];
    if (st->lens[NL * i + 4]) { /* in its slot: a memory copy */
      if (dst && len) memcpy(dst + off, tsr__conc_shm_data(&st->shm, i), (size_t)len);
      off += len;
      continue;
    }
    for (int64_t at = 0; at < len; at += PIECE) {
      int n = (int)(len - at < PIECE ? len - at : PIECE);
      char sink;
      if (MPI_Recv(dst ? dst + off + at : &sink, dst ? n : 0, MPI_BYTE, i, TSR__WIRE_TAG_BUNDLE,
                   st->ccomm, MPI_STATUS_IGNORE) != MPI_SUCCESS &&
          dst)
        rc = TSR_EMPI;
    }
    off += len;
  }
  return rc;
}

/* Concentrator, the common case: every message of the group goes to one
 * server (a parallel file's task, or a serial file's root) and fits one
 * bundle: the members' areas are received straight into the bundle (their
 * layout is the bundle's), after this rank's own. Returns 1 when done so. */
static int one_bundle(conc_state *st, int *rc) {
  int64_t d = -2, total = st->stage.len, count = 0;
  for (int i = 0; i < st->csize; i++) {
    const int64_t *g = st->lens + NL * i; /* len, destination, count, key */
    if (i > 0) total += g[0];
    if (g[0] == 0) continue;
    if (g[1] < 0 || (d >= 0 && g[1] != d) || g[3] > 0) return 0; /* member order is not it */
    d = g[1];
    count += g[2];
  }
  const int64_t max = st->chunk > 0 ? st->chunk : INT_MAX / 2;
  if (d < 0 || 16 + total > max) return 0;
  char *b = malloc((size_t)(16 + total));
  if (!b) return 0; /* the general path may do with less */
  if (st->stage.len) memcpy(b + 16, st->stage.p, (size_t)st->stage.len);
  *rc = take_members(st, b + 16 + st->stage.len);
  if (!*rc) *rc = send_bundle(st, b, 16 + total, count, (int)d);
  else free(b);
  return 1;
}

/* Concentrator: done with this commit's slots (also after an error: the
 * members must not wait for a slot that is never freed). */
static void release_slots(conc_state *st) {
  for (int i = 1; i < st->csize; i++)
    if (st->lens[NL * i + 4]) tsr__conc_shm_release(&st->shm, i, st->seq);
}

/* The general case: gather the areas members sent (those in slots are read
 * in place), then sort their messages into one bundle (or more) per server. */
static int forward_all(conc_state *st) {
  int64_t total = 0;
  for (int i = 1; i < st->csize; i++)
    if (!st->lens[NL * i + 4]) total += st->lens[NL * i];
  bytes *segs = calloc((size_t)st->csize, sizeof *segs);
  int rc = 0, drop = !segs || grow(&st->gathered, total) != 0;
  if (drop) rc = TSR_ENOMEM;
  int64_t off = 0;
  for (int i = 1; i < st->csize; i++) { /* the sent ones, back to back */
    int64_t len = st->lens[NL * i];
    if (st->lens[NL * i + 4]) continue;
    for (int64_t at = 0; at < len; at += PIECE) {
      int n = (int)(len - at < PIECE ? len - at : PIECE);
      char sink;
      if (MPI_Recv(drop ? &sink : st->gathered.p + off + at, drop ? 0 : n, MPI_BYTE, i,
                   TSR__WIRE_TAG_BUNDLE, st->ccomm, MPI_STATUS_IGNORE) != MPI_SUCCESS &&
          !drop)
        rc = TSR_EMPI;
    }
    if (!drop) segs[i] = (bytes){st->gathered.p + off, len, len};
    off += len;
  }
  if (!rc) {
    segs[0] = st->stage;
    for (int i = 1; i < st->csize; i++)
      if (st->lens[NL * i + 4]) {
        int64_t len = st->lens[NL * i];
        segs[i] = (bytes){(char *)tsr__conc_shm_data(&st->shm, i), len, len};
      }
    rc = forward(st, segs, st->csize);
  }
  free(segs);
  return rc;
}

/* Collective over the model ranks: every group's messages of this op go to
 * the servers. A member's area goes into its slot of the node's shared
 * window when it has one and the area fits (a memory copy), else by
 * MPI_Send on the group's communicator. */
static int conc_commit(const tsr__transport *tp) {
  conc_state *st = tp->state;
  if (tp->is_server || st->ccomm == MPI_COMM_NULL) return 0;
  int rc = 0;
  st->seq++;
  while (land_oldest(st, 0, &rc)) {
  }
  int placed = st->crank != 0 && tsr__conc_shm_put(&st->shm, st->stage.p, st->stage.len, st->seq);
  int64_t mine[NL] = {st->stage.len, st->stage.len ? st->stage_dest : -1, st->stage_count,
                      st->stage.len ? st->stage_order : 0, placed};
  if (MPI_Gather(mine, NL, MPI_INT64_T, st->lens, NL, MPI_INT64_T, 0, st->ccomm) != MPI_SUCCESS)
    return TSR_EMPI;
  if (st->crank != 0) { /* a member: its staging area to the concentrator */
    for (int64_t at = 0; !placed && at < mine[0] && !rc; at += PIECE) {
      int n = (int)(mine[0] - at < PIECE ? mine[0] - at : PIECE);
      if (MPI_Send(st->stage.p + at, n, MPI_BYTE, 0, TSR__WIRE_TAG_BUNDLE, st->ccomm) !=
          MPI_SUCCESS)
        rc = TSR_EMPI;
    }
    st->stage.len = 0;
    return rc;
  }
  if (!one_bundle(st, &rc)) rc = forward_all(st);
  release_slots(st);
  st->stage.len = 0;
  return rc;
}

/* ---- server side ---- */

static queued *find(conc_state *st, int src, int tag) {
  for (int i = 0; i < st->nq; i++)
    if (st->q[i].src == src && st->q[i].tag == tag) return &st->q[i];
  return NULL;
}

static void bundle_release(conc_state *st, bundle *b) {
  if (--b->refs > 0) return;
  st->held -= b->counted;
  free(b->buf);
  free(b->index);
  free(b);
}

/* Bytes of the OPEN messages in a bundle, from its index (the index holds
 * each op message's header): a file's description (hints, path, schema)
 * is held for the file's life like its handle, outside server_buffer_bytes,
 * which bounds data in flight (docs/servers.md). */
static int64_t description_bytes(const char *index, int64_t ilen) {
  int64_t count = 0, ix = 16, desc = 0;
  if (ilen < 16) return 0;
  memcpy(&count, index, sizeof count);
  for (int64_t k = 0; k < count && ix + (int64_t)sizeof(envelope) <= ilen; k++) {
    envelope e;
    memcpy(&e, index + ix, sizeof e);
    int64_t have = prefix_of(&e);
    if (have == (int64_t)sizeof(tsr__wire_hdr) && e.len > have &&
        ix + (int64_t)sizeof e + have <= ilen) {
      tsr__wire_hdr h;
      memcpy(&h, index + ix + sizeof e, sizeof h);
      if (h.op == TSR__WIRE_OPEN) desc += e.len;
    }
    ix += (int64_t)sizeof e + tsr__wire_align(have);
  }
  return desc;
}

/* Receive the body of the bundle whose index (@p ilen bytes) is @p index
 * from @p c: held in *buf, or refused (*buf NULL: dropped, with st->why
 * saying so) when the bundles held would go past their share of
 * server_buffer_bytes or no memory can be had. *@p counted: what it adds to
 * the server's peak. */
static int take_body(conc_state *st, int c, const tsr__transport *tp, const char *index,
                     int64_t ilen, char **buf, int64_t *len, int64_t *counted) {
  tsr__transport *in = &st->inner;
  tsr__msg_info info;
  *buf = NULL;
  int rc = in->ops->wait(in, c, TSR__WIRE_TAG_BUNDLE, 1, &info);
  if (rc) return rc;
  *len = info.len;
  *counted = ilen + info.len - description_bytes(index, ilen);
  /* Within the bound: the bundles held stay under three quarters of
   * server_buffer_bytes, the receive buffer and the assembly slab taking an
   * eighth each (tsr__srv_chunk), so that the server's peak never passes
   * the bound. A lone bundle is taken whatever its size, as a frame that
   * cannot be cut (at most bound/8, or a description). (The server holds
   * bundles it took for later messages: a parallel round looks at every
   * client's first message first, so with k clients per server about k
   * first parts are held, each at most bound/8.) */
  int64_t share = st->bound - 2 * tsr__srv_chunk(st->bound, 1);
  int over = st->bound > 0 && st->held > 0 && st->held + *counted > share;
  char *b = over ? NULL : malloc((size_t)(info.len > 0 ? info.len : 1));
  in->nrecv = tp->nrecv; /* the server counts what it receives: bundles */
  if (!b) {
    *counted = ilen; /* the body is dropped; the index stays until its messages are served */
    if (!st->why[0])
      snprintf(st->why, sizeof st->why,
               "server %d: cannot hold a bundle of %lld bytes from concentrator rank %d (%s)",
               st->server, (long long)info.len, c,
               over ? "over its share of server_buffer_bytes with the bundles it holds; raise it"
                    : "out of memory");
    return in->ops->recv(in, c, TSR__WIRE_TAG_BUNDLE, NULL, 0);
  }
  if ((rc = in->ops->recv(in, c, TSR__WIRE_TAG_BUNDLE, b, info.len))) {
    free(b);
    return rc;
  }
  *buf = b;
  return 0;
}

static int enqueue(conc_state *st, queued m) {
  if (st->nq == st->capq) {
    int ncap = st->capq ? 2 * st->capq : 64;
    queued *q = realloc(st->q, (size_t)ncap * sizeof *q);
    if (!q) return TSR_ENOMEM;
    st->q = q;
    st->capq = ncap;
  }
  st->q[st->nq++] = m;
  m.b->refs++;
  return 0;
}

/* Take the next bundle from @p src's concentrator (its index, then its
 * body) and queue its messages; @p block: wait for it (@p idle: with the
 * back-off), else only if there. */
static int take_bundle(const tsr__transport *tp, int src, int block, int idle, int *got) {
  conc_state *st = tp->state;
  tsr__transport *in = &st->inner;
  in->nrecv = NULL; /* indexes are not counted */
  int c = st->conc_of[src], flag = 1, rc;
  tsr__msg_info info;
  *got = 0;
  rc = block ? in->ops->wait(in, c, TSR__WIRE_TAG_BUNDLE, idle, &info)
             : in->ops->poll(in, c, TSR__WIRE_TAG_BUNDLE, &flag, &info);
  if (rc || !flag) return rc;
  bundle *b = calloc(1, sizeof *b);
  char *index = b ? malloc((size_t)(info.len > 16 ? info.len : 16)) : NULL;
  if (!index) { /* tiny: then the body that follows is taken for an index */
    free(b);
    in->ops->recv(in, c, TSR__WIRE_TAG_BUNDLE, NULL, 0);
    return TSR_ENOMEM;
  }
  b->index = index;
  if (!(rc = in->ops->recv(in, c, TSR__WIRE_TAG_BUNDLE, index, info.len)))
    rc = take_body(st, c, tp, index, info.len, &b->buf, &b->len, &b->counted);
  if (rc) {
    free(index);
    free(b->buf);
    free(b);
    return rc;
  }
  st->held += b->counted;
  if (st->held > st->peak) st->peak = st->held;
  int64_t count = 0, at = 16, ix = 16;
  memcpy(&count, index, sizeof count);
  b->refs = 1; /* ours until every message is queued */
  for (int64_t k = 0; k < count && !rc; k++) {
    envelope e;
    memcpy(&e, index + ix, sizeof e);
    int64_t have = prefix_of(&e);
    queued m = {.src = e.src, .tag = e.tag, .len = e.len, .b = b};
    if (b->buf) {
      m.data = b->buf + at + sizeof e;
      m.have = e.len;
    } else { /* refused: a lost message; a whole op header is no loss */
      m.data = index + ix + sizeof e;
      m.have = have;
      m.lost = have < e.len;
    }
    rc = enqueue(st, m);
    at += (int64_t)sizeof e + tsr__wire_align(e.len);
    ix += (int64_t)sizeof e + tsr__wire_align(have);
  }
  bundle_release(st, b);
  *got = 1;
  return rc;
}

/* A lost op or part message is delivered as its header (err set). */
static void info_of(const queued *m, tsr__msg_info *info) {
  info->src = m->src;
  info->len = m->lost && m->have ? m->have : m->len;
}

static int routed(const tsr__transport *tp, int src, int tag) {
  const conc_state *st = tp->state;
  return tp->is_server && is_data_tag(tag) && src >= 0 && st->conc_of[src] >= 0;
}

static int conc_poll(const tsr__transport *tp, int src, int tag, int *flag, tsr__msg_info *info) {
  conc_state *st = tp->state;
  if (!routed(tp, src, tag)) return st->inner.ops->poll(&st->inner, src, tag, flag, info);
  *flag = 0;
  for (;;) {
    queued *m = find(st, src, tag);
    if (m) {
      *flag = 1;
      info_of(m, info);
      return 0;
    }
    int got = 0, rc = take_bundle(tp, src, 0, 0, &got);
    if (rc || !got) return rc;
  }
}

static int conc_wait(const tsr__transport *tp, int src, int tag, int idle, tsr__msg_info *info) {
  conc_state *st = tp->state;
  if (!routed(tp, src, tag)) return st->inner.ops->wait(&st->inner, src, tag, idle, info);
  for (;;) {
    queued *m = find(st, src, tag);
    if (m) {
      info_of(m, info);
      return 0;
    }
    int got = 0, rc = take_bundle(tp, src, 1, idle, &got);
    if (rc) return rc;
  }
}

static int conc_recv(const tsr__transport *tp, int src, int tag, void *buf, int64_t len) {
  conc_state *st = tp->state;
  if (!routed(tp, src, tag)) return st->inner.ops->recv(&st->inner, src, tag, buf, len);
  tsr__msg_info info;
  int rc = conc_wait(tp, src, tag, 1, &info);
  if (rc) return rc;
  queued *m = find(st, src, tag);
  if (m->lost && !m->have) rc = TSR_ENOMEM; /* a lost piece: as a frame not allocated */
  else if (buf && info.len > len) rc = TSR_EMPI; /* as MPI's truncation error */
  else if (buf && info.len) memcpy(buf, m->data, (size_t)info.len);
  if (!rc && buf && m->lost) { /* a lost op or part: its header says so */
    int32_t err = TSR_ENOMEM;
    memcpy((char *)buf + offsetof(tsr__wire_hdr, err), &err, sizeof err);
  }
  bundle *b = m->b;
  memmove(m, m + 1, (size_t)(st->q + st->nq - (m + 1)) * sizeof *m);
  st->nq--;
  bundle_release(st, b);
  return rc;
}

int64_t tsr__tp_held(const tsr__transport *tp) {
  if (tp->ops != &tsr__transport_conc || !tp->state) return 0;
  conc_state *st = tp->state;
  int64_t p = st->peak;
  st->peak = st->held;
  return p;
}

const char *tsr__tp_refusal(const tsr__transport *tp) {
  if (tp->ops != &tsr__transport_conc || !tp->state) return NULL;
  const conc_state *st = tp->state;
  return st->why[0] ? st->why : NULL;
}

/* ---- setup and teardown ---- */

static void conc_teardown(tsr__transport *tp) {
  conc_state *st = tp->state;
  if (!st) return;
  int rc = 0;
  while (land_oldest(st, 1, &rc)) {
  }
  for (int i = 0; i < st->nq; i++) bundle_release(st, st->q[i].b);
  free(st->q);
  free(st->fl);
  free(st->stage.p);
  free(st->gathered.p);
  free(st->lens);
  free(st->conc_of);
  tsr__conc_shm_close(&st->shm); /* collective over the group */
  if (st->ccomm != MPI_COMM_NULL) MPI_Comm_free(&st->ccomm);
  tsr__transport_free(&st->inner); /* collective over the communicator */
  free(st);
  tp->state = NULL;
}

const tsr__transport_ops tsr__transport_conc = {
    .name = "concentrators",
    .teardown = conc_teardown,
    .isend = conc_isend,
    .send = conc_send,
    .complete = conc_complete,
    .poll = conc_poll,
    .wait = conc_wait,
    .recv = conc_recv,
    .commit = conc_commit,
};

int tsr__transport_concentrate(tsr__transport *tp, int per, int64_t limit, int64_t bound,
                               int server) {
  /* Bundles are cut at a message's share of the bound, framing included. */
  int64_t chunk = bound > 0 ? tsr__srv_chunk(bound, 1) + TSR__CONC_FRAME : 0;
  int size, rank;
  MPI_Comm comm = tp->comm;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  conc_state *st = calloc(1, sizeof *st);
  int *conc_of = malloc((size_t)size * sizeof *conc_of);
  if (!st || !conc_of) { /* tiny: then the collectives below do not match, which MPI reports */
    free(st);
    free(conc_of);
    return TSR_ENOMEM;
  }
  st->inner = *tp;
  st->me = rank;
  st->conc_of = conc_of;
  st->ccomm = MPI_COMM_NULL;
  st->shm.win = MPI_WIN_NULL;
  st->limit = limit > 0 ? limit : INT64_MAX;
  st->chunk = chunk;
  st->bound = bound;
  st->server = server;
  tp->ops = &tsr__transport_conc;
  tp->state = st;
  /* The model ranks, then their groups: a node's, or N consecutive ones. */
  int rc = 0, mine = -1;
  MPI_Comm mcomm = MPI_COMM_NULL;
  if (MPI_Comm_split(comm, tp->is_server ? MPI_UNDEFINED : 0, rank, &mcomm) != MPI_SUCCESS)
    rc = TSR_EMPI;
  if (mcomm != MPI_COMM_NULL) {
    int m;
    MPI_Comm_rank(mcomm, &m);
    int r = per < 0 ? MPI_Comm_split_type(mcomm, MPI_COMM_TYPE_SHARED, m, MPI_INFO_NULL, &st->ccomm)
                    : MPI_Comm_split(mcomm, m / per, m, &st->ccomm);
    if (r != MPI_SUCCESS) rc = TSR_EMPI;
    MPI_Comm_free(&mcomm);
  }
  if (st->ccomm != MPI_COMM_NULL) {
    MPI_Comm_rank(st->ccomm, &st->crank);
    MPI_Comm_size(st->ccomm, &st->csize);
    mine = rank;
    MPI_Bcast(&mine, 1, MPI_INT, 0, st->ccomm);
    st->lens = calloc((size_t)st->csize * NL, sizeof *st->lens);
    if (!st->lens) rc = TSR_ENOMEM;
    /* Per node: slots of up to SHM_ROOM (or buffer_bytes) per member. */
    if (per < 0) tsr__conc_shm_open(&st->shm, st->ccomm, st->limit < SHM_ROOM ? st->limit : SHM_ROOM);
  }
  if (MPI_Allgather(&mine, 1, MPI_INT, conc_of, 1, MPI_INT, comm) != MPI_SUCCESS) rc = TSR_EMPI;
  return rc;
}
