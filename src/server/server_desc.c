/* Descriptor messages (contract in server_desc.h). */
#include "server/server_desc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera.h"

int tsr__desc_isend(const tsr__transport *tp, tsr__desc d, const void *buf, int dest, int tag,
                    tsr__tp_req *req) {
  *req = (tsr__tp_req){.req = MPI_REQUEST_NULL, .dest = dest};
  if (d.len > INT_MAX - (int64_t)sizeof d) return TSR_ETOOBIG; /* MPI counts are int */
  size_t n = sizeof d + (size_t)(d.addr ? 0 : d.len);
  char *m = malloc(n);
  if (!m) return TSR_ENOMEM;
  memcpy(m, &d, sizeof d);
  if (!d.addr && d.len) memcpy(m + sizeof d, buf, (size_t)d.len);
  if (MPI_Isend(m, (int)n, MPI_BYTE, dest, tag, tp->comm, &req->req) != MPI_SUCCESS) {
    free(m);
    return TSR_EMPI;
  }
  req->mem = m;
  return 0;
}

int tsr__desc_send(const tsr__transport *tp, const void *buf, int64_t len, int dest, int tag) {
  if (len > INT_MAX - (int64_t)sizeof(tsr__desc)) return TSR_ETOOBIG;
  char small[sizeof(tsr__desc) + TSR__DESC_INLINE];
  size_t n = sizeof(tsr__desc) + (size_t)len;
  char *m = n <= sizeof small ? small : malloc(n);
  if (!m) return TSR_ENOMEM;
  tsr__desc d = {.len = len};
  memcpy(m, &d, sizeof d);
  if (len) memcpy(m + sizeof d, buf, (size_t)len);
  int rc = MPI_Send(m, (int)n, MPI_BYTE, dest, tag, tp->comm) == MPI_SUCCESS ? 0 : TSR_EMPI;
  if (m != small) free(m);
  return rc;
}

int tsr__desc_complete(const tsr__transport *tp, tsr__tp_req *req, int wait, int *done,
                       int (*taken)(const tsr__transport *tp, int dest, int64_t *v)) {
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
    if (taken(tp, req->dest, &v)) {
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

/* ---- server side ---- */

static tsr__desc_pend *find(tsr__desc_box *b, int src, int tag) {
  for (int i = 0; i < b->npend; i++)
    if (b->pend[i].tag == tag && (src == MPI_ANY_SOURCE || b->pend[i].src == src))
      return &b->pend[i];
  return NULL;
}

/* Receive the descriptor whose envelope @p pi was probed. */
static int pull(const tsr__transport *tp, tsr__desc_box *b, int tag, const tsr__msg_info *pi,
                tsr__desc_pend **out) {
  if (b->npend == b->cap) {
    int ncap = b->cap ? 2 * b->cap : 16;
    tsr__desc_pend *p = realloc(b->pend, (size_t)ncap * sizeof *p);
    if (!p) return TSR_ENOMEM;
    b->pend = p;
    b->cap = ncap;
  }
  if (pi->len < (int64_t)sizeof(tsr__desc)) return TSR_EMPI; /* not a descriptor */
  char *m = malloc((size_t)pi->len);
  if (!m) return TSR_ENOMEM;
  if (MPI_Recv(m, (int)pi->len, MPI_BYTE, pi->src, tag, tp->comm, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS) {
    free(m);
    return TSR_EMPI;
  }
  tsr__desc_pend *p = &b->pend[b->npend++];
  *p = (tsr__desc_pend){pi->src, tag, m};
  *out = p;
  return 0;
}

static void info_of(const tsr__desc_pend *p, tsr__msg_info *info) {
  tsr__desc d;
  memcpy(&d, p->msg, sizeof d);
  info->src = p->src;
  info->len = d.len;
}

static int direct(const tsr__transport *tp, const tsr__desc_box *b, int src) {
  return b->direct && b->direct(tp, src);
}

int tsr__desc_poll(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, int *flag,
                   tsr__msg_info *info) {
  tsr__desc_pend *p = find(b, src, tag);
  *flag = p != NULL;
  if (!p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.poll(tp, src, tag, flag, &pi);
    if (rc || !*flag) return rc;
    if (direct(tp, b, pi.src)) {
      *info = pi;
      return 0;
    }
    if ((rc = pull(tp, b, tag, &pi, &p))) return rc;
  }
  info_of(p, info);
  return 0;
}

int tsr__desc_wait(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, int idle,
                   tsr__msg_info *info) {
  tsr__desc_pend *p = find(b, src, tag);
  if (!p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.wait(tp, src, tag, idle, &pi);
    if (rc) return rc;
    if (direct(tp, b, pi.src)) {
      *info = pi;
      return 0;
    }
    if ((rc = pull(tp, b, tag, &pi, &p))) return rc;
  }
  info_of(p, info);
  return 0;
}

int tsr__desc_next(const tsr__transport *tp, tsr__desc_box *b, int src, int tag,
                   tsr__desc_pend **p, tsr__desc *d) {
  *p = find(b, src, tag);
  if (!*p) {
    tsr__msg_info pi;
    int rc = tsr__transport_p2p.wait(tp, src, tag, 0, &pi);
    if (!rc) rc = pull(tp, b, tag, &pi, p);
    if (rc) return rc;
  }
  memcpy(d, (*p)->msg, sizeof *d);
  return 0;
}

void tsr__desc_done(tsr__desc_box *b, tsr__desc_pend *p) {
  free(p->msg);
  *p = b->pend[--b->npend];
}

void tsr__desc_box_free(tsr__desc_box *b) {
  for (int i = 0; i < b->npend; i++) free(b->pend[i].msg);
  free(b->pend);
  b->pend = NULL;
  b->npend = b->cap = 0;
}

int tsr__desc_recv(const tsr__transport *tp, tsr__desc_box *b, int src, int tag, void *buf,
                   int64_t len,
                   int (*fetch)(const tsr__transport *tp, int from, const tsr__desc *d, void *buf),
                   int (*taken)(const tsr__transport *tp, int from, const tsr__desc *d)) {
  tsr__desc_pend *p;
  tsr__desc d;
  int rc = tsr__desc_next(tp, b, src, tag, &p, &d);
  if (rc) return rc;
  int from = p->src;
  if (tp->nrecv) ++*tp->nrecv;
  if (buf && d.len > len) rc = TSR_EMPI; /* as MPI's truncation error */
  else if (buf && !d.addr) memcpy(buf, p->msg + sizeof d, (size_t)d.len);
  else if (buf && d.len) rc = fetch(tp, from, &d, buf);
  if (d.addr) { /* taken or dropped: either way the sender may reuse the bytes */
    int r = taken(tp, from, &d);
    if (!rc) rc = r;
  }
  tsr__desc_done(b, p);
  return rc;
}

int tsr__desc_row_poll(const tsr__transport *tp, int src, int tag, int *flag,
                       tsr__msg_info *info) {
  if (!tp->is_server) return tsr__transport_p2p.poll(tp, src, tag, flag, info);
  return tsr__desc_poll(tp, (tsr__desc_box *)tp->state, src, tag, flag, info);
}

int tsr__desc_row_wait(const tsr__transport *tp, int src, int tag, int idle,
                       tsr__msg_info *info) {
  if (!tp->is_server) return tsr__transport_p2p.wait(tp, src, tag, idle, info);
  return tsr__desc_wait(tp, (tsr__desc_box *)tp->state, src, tag, idle, info);
}
