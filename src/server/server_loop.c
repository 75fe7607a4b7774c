/* The server loop: take the next op from the first client's stream, run it
 * (the handler receives the op's messages from every participating client),
 * and answer flushes and finalize with an acknowledgement, closes with a note
 * to model rank 0. Replies are sent without blocking: a server never waits
 * for a model rank that is computing. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server_proto.h"

/* Wait for a message like MPI_Probe, but without spinning on a core for
 * long: MPI libraries busy-poll, and an idle server that shares cores with
 * model ranks (oversubscribed nodes, or servers placed on compute cores)
 * would steal their compute time. Spin for a short while (a message that is
 * about to arrive costs no sleep), then sleep with an exponential backoff
 * capped at 1 ms, which bounds the added latency per op. */
static int probe(MPI_Comm comm, int src, int tag, MPI_Status *st) {
  double t0 = 0;
  long nap = 10000; /* ns */
  for (int spins = 0;; spins++) {
    int flag = 0;
    if (MPI_Iprobe(src, tag, comm, &flag, st) != MPI_SUCCESS) return TSR_EMPI;
    if (flag) return 0;
    if (spins == 0) t0 = MPI_Wtime();
    if (MPI_Wtime() - t0 < 50e-6) continue;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 1000000) nap *= 2;
  }
}

int tsr__srv_recv(tsr__srv_server *s, int src, int tag, int64_t *len) {
  MPI_Status st;
  int n = 0;
  if (probe(s->L.wcomm, src, tag, &st)) return TSR_EMPI;
  MPI_Get_count(&st, MPI_BYTE, &n);
  int rc = tsr__grow(&s->msg, &s->msg_cap, (int64_t)n + 1);
  if (rc) {
    /* Consume it anyway (into nothing useful) so the stream stays in step. */
    char drop;
    MPI_Recv(&drop, 0, MPI_BYTE, src, tag, s->L.wcomm, MPI_STATUS_IGNORE);
    return rc;
  }
  if (MPI_Recv(s->msg, n, MPI_BYTE, src, tag, s->L.wcomm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return TSR_EMPI;
  *len = n;
  return 0;
}

/* Free the buffers of replies that reached their model rank. */
static void reap(tsr__srv_server *s, int wait) {
  int k = 0;
  for (int i = 0; i < s->nout; i++) {
    int done = 1;
    if (wait) MPI_Wait(&s->outreq[i], MPI_STATUS_IGNORE);
    else MPI_Test(&s->outreq[i], &done, MPI_STATUS_IGNORE);
    if (done) {
      free(s->outbuf[i]);
    } else {
      s->outreq[k] = s->outreq[i];
      s->outbuf[k++] = s->outbuf[i];
    }
  }
  s->nout = k;
}

static void reply(tsr__srv_server *s, int dest, int tag, int kind, int file, int status,
                  const tsr__berr *berr) {
  if (s->nout == s->outcap) {
    int ncap = s->outcap ? 2 * s->outcap : 16;
    MPI_Request *r = realloc(s->outreq, (size_t)ncap * sizeof *r);
    if (r) s->outreq = r;
    tsr__srv_reply **b = realloc(s->outbuf, (size_t)ncap * sizeof *b);
    if (b) s->outbuf = b;
    if (r && b) s->outcap = ncap;
  }
  tsr__srv_reply *m = calloc(1, sizeof *m);
  if (!m || s->nout == s->outcap) { /* out of memory: a blocking send still delivers it */
    tsr__srv_reply local = {kind, file, status, s->index, tsr__srv_writer_total(s), {0, ""}};
    if (berr) local.berr = *berr;
    MPI_Send(&local, (int)sizeof local, MPI_BYTE, dest, tag, s->L.wcomm);
    free(m);
    return;
  }
  *m = (tsr__srv_reply){kind, file, status, s->index, tsr__srv_writer_total(s), {0, ""}};
  if (berr) m->berr = *berr;
  MPI_Isend(m, (int)sizeof *m, MPI_BYTE, dest, tag, s->L.wcomm, &s->outreq[s->nout]);
  s->outbuf[s->nout++] = m;
}

static void close_and_note(tsr__srv_server *s, int file) {
  tsr__berr berr = {0, ""};
  int st = tsr__srv_close(s, file, &berr);
  reply(s, tsr__srv_model_rank(&s->L, 0), TSR__SRV_TAG_NOTE, TSR__SRV_CLOSE, file, st, &berr);
}

int tsr__srv_serve(tsr__srv_server *s) {
  int rc = 0;
  s->hdrs = malloc((size_t)s->L.M * sizeof *s->hdrs);
  if (!s->hdrs) rc = TSR_ENOMEM; /* still serve: the model must be able to finalize */
  for (;;) {
    reap(s, 0);
    int64_t len = 0;
    int r = tsr__srv_recv(s, s->c0, TSR__SRV_TAG_HDR, &len);
    if (r == TSR_EMPI) {
      rc = r;
      break; /* the stream is gone: nothing more can be matched */
    }
    if (r || len < (int64_t)sizeof(tsr__srv_hdr)) continue;
    tsr__srv_hdr h;
    memcpy(&h, s->msg, sizeof h);
    if (h.op == TSR__SRV_FINAL) break;
    tsr__berr berr = {0, ""};
    switch (h.op) {
    case TSR__SRV_OPEN: tsr__srv_open(s, &h, len); break;
    case TSR__SRV_PUT:
      if (s->hdrs) tsr__srv_put(s, &h, len);
      break;
    case TSR__SRV_PUTG: tsr__srv_putg(s, &h, len); break;
    case TSR__SRV_FLUSH: {
      int st = tsr__srv_flush(s, h.file, &berr);
      reply(s, s->c0, TSR__SRV_TAG_ACK, TSR__SRV_FLUSH, h.file, st, &berr);
      break;
    }
    case TSR__SRV_CLOSE: close_and_note(s, h.file); break;
    default: TSR_LOG("server %d: unknown op %d", s->index, h.op);
    }
  }
  /* Finalize: files the model left open are closed (in the order opened, the
   * same on every server of a group), then the first client hears we stop. */
  for (int id; (id = tsr__srv_first_open(s)) >= 0;) close_and_note(s, id);
  reply(s, s->c0, TSR__SRV_TAG_ACK, TSR__SRV_FINAL, -1, rc, NULL);
  reap(s, 1);
  free(s->hdrs);
  free(s->msg);
  free(s->slab);
  free(s->stage);
  free(s->outreq);
  free(s->outbuf);
  return rc;
}
