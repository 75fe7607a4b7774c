/* The server loop: take the next op from the first client's stream and run
 * it through the dispatch table (message kind -> writer handler, and the
 * reply it earns: flushes an acknowledgement to the first client, closes a
 * note to model rank 0). Replies go out without blocking: a server never
 * waits for a model rank that is computing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verbose.h"
#include "server/server_reduce.h"
#include "server/server_state.h"
#include "tier/drain.h"

enum { NO_REPLY, ACK_FIRST_CLIENT, NOTE_MODEL_ROOT };

static const struct {
  tsr__srv_handler run;
  int reply;
} dispatch[TSR__WIRE_NKINDS] = {
    [TSR__WIRE_OPEN] = {tsr__srv_open, NO_REPLY},
    [TSR__WIRE_PUT] = {tsr__srv_put, NO_REPLY},
    [TSR__WIRE_PUTG] = {tsr__srv_putg, NO_REPLY},
    [TSR__WIRE_FLUSH] = {tsr__srv_flush, ACK_FIRST_CLIENT},
    [TSR__WIRE_CLOSE] = {tsr__srv_close, NOTE_MODEL_ROOT},
    [TSR__WIRE_PUTR] = {tsr__srv_putr, NO_REPLY},
    [TSR__WIRE_RDEF] = {tsr__srv_rdef, NO_REPLY},
    [TSR__WIRE_RSAVE] = {tsr__srv_rsave, NO_REPLY},
};

static void reply(tsr__srv_server *s, int how, int kind, int file, int status,
                  tsr__wire_reply *r) {
  r->kind = kind;
  r->file = file;
  r->status = status;
  r->server = s->index;
  r->writer_s = tsr__srv_writer_total(s);
  tsr__srv_note_memory(s);
  r->peak_bytes = s->peak;
  r->msgs = s->msgs;
  r->reduce_bytes = tsr__srv_reduce_bytes(s);
  r->outputs = s->nopen;
  r->span_s = s->nopen ? s->t_last_open - s->t_first_open : 0;
  r->life_s = s->nopen ? MPI_Wtime() - s->t_first_open : 0;
  int dest = how == NOTE_MODEL_ROOT ? tsr__srv_model_rank(&s->L, 0) : s->c0;
  int tag = how == NOTE_MODEL_ROOT ? TSR__WIRE_TAG_NOTE : TSR__WIRE_TAG_ACK;
  tsr__tp_post(&s->tp, &s->out, r, sizeof *r, dest, tag);
}

/* Run one op; returns 1 when it was FINAL. */
static int run(tsr__srv_server *s, const tsr__wire_hdr *h) {
  if (h->op == TSR__WIRE_FINAL) return 1;
  if (h->op <= 0 || h->op >= TSR__WIRE_NKINDS || !dispatch[h->op].run) {
    TSR_LOG("server %d: unknown op %d", s->index, h->op);
    return 0;
  }
  tsr__wire_reply r;
  memset(&r, 0, sizeof r);
  int status = dispatch[h->op].run(s, h, &r);
  if (dispatch[h->op].reply != NO_REPLY)
    reply(s, dispatch[h->op].reply, h->op, h->file, status, &r);
  return 0;
}

int tsr__srv_serve(tsr__srv_server *s) {
  int rc = 0;
  s->hdrs = malloc((size_t)s->L.M * sizeof *s->hdrs);
  if (!s->hdrs) rc = TSR_ENOMEM; /* still serve: the model must be able to finalize */
  for (;;) {
    tsr__tp_reap(&s->tp, &s->out, 0);
    int r = tsr__tp_take(&s->tp, s->c0, TSR__WIRE_TAG_HDR, &s->in);
    if (r == TSR_EMPI) {
      rc = r;
      break; /* the stream is gone: nothing more can be matched */
    }
    if (r || s->in.len < (int64_t)sizeof(tsr__wire_hdr)) continue;
    tsr__wire_hdr h;
    memcpy(&h, s->in.p, sizeof h);
    if (h.op == TSR__WIRE_PUT && !s->hdrs) continue; /* no memory for a round */
    if (run(s, &h)) break;
    tsr__srv_note_memory(s);
  }
  /* Finalize: files the model left open are closed (in the order opened, the
   * same on every server of a group), then the first client hears we stop. */
  for (int id; (id = tsr__srv_first_open(s)) >= 0;)
    run(s, &(tsr__wire_hdr){.op = TSR__WIRE_CLOSE, .file = id});
  /* Staged files (stage_dir) reach their final paths before the model may
   * end: a server process has no tsr_finalize that would wait for them. */
  tsr__drain_totals dt;
  tsr__wire_reply fin;
  memset(&fin, 0, sizeof fin);
  int drc = tsr__drain_finish_local(&dt, fin.berr.message, sizeof fin.berr.message);
  if (!rc) rc = drc;
  /* reduce=: an incomplete period server 0 could not save. */
  if (!rc && s->red_err) {
    rc = s->red_err;
    snprintf(fin.berr.message, sizeof fin.berr.message, "%s", s->red_msg);
  }
  fin.drain_files = dt.files;
  fin.drain_bytes = dt.bytes;
  fin.drain_failed = dt.failed;
  fin.drain_busy_s = dt.busy_s;
  fin.drain_wait_s = dt.wait_s;
  reply(s, ACK_FIRST_CLIENT, TSR__WIRE_FINAL, -1, rc, &fin);
  tsr__tp_reap(&s->tp, &s->out, 1);
  free(s->hdrs);
  tsr__srv_reduce_free(s->red); /* waits for its messages to server 0 */
  s->red = NULL;
  tsr__srv_runs_free(s);
  tsr__srv_buf_free(&s->in);
  tsr__srv_buf_free(&s->slab);
  tsr__tp_outbox_free(&s->out);
  return rc;
}
