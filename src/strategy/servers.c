/* strategy=servers, model side: every op hands messages to the servers and
 * returns; only tsr_flush and tsr_finalize wait for them (and tsr_close on
 * model rank 0 while statistics are on, for the servers' figures). Errors
 * the servers meet come back to model rank 0 in notes and acknowledgements;
 * the API layer's agreement then gives every model rank the same code.
 * Model rank 0 looks for notes (without waiting) at every put and flush, so
 * a failed file is reported at the first of those calls after its note
 * arrived, whichever file the call is on, naming the failed file; that call
 * fails its own file too (api/file_close.c). A close reports only its own
 * file's failure, so that a close that fails never leaves its file final. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"
#include "server/server_client.h"
#include "server/servers.h"
#include "strategy/strategy.h"
#include "core/reduce_msg.h"
#include "tier/drain.h"

/* The model rank's task in every group, and whether it is its first client. */
static void my_server(const tsr__srv_client *cl, int g, int parallel, int *server, int *first) {
  int t = parallel ? tsr__srv_task_of(&cl->L, cl->m) : 0;
  *server = tsr__srv_server_rank(&cl->L, g, t);
  *first = parallel ? cl->m == tsr__srv_block_lo(&cl->L, t) : cl->m == 0;
}

static void free_state(tsr_file *f) {
  tsr__srv_cfile *cf = f->sdata;
  if (!cf) return;
  tsr__srv_slabs_free(&cf->slabs);
  free(cf);
  f->sdata = NULL;
}

/* The end of an op that handed messages over: concentrators forward what
 * their group handed over (collective over the model ranks, which all make
 * every op; nothing for transports that send at once). */
static int commit(tsr__srv_client *cl, int rc) {
  int c = tsr__tp_commit(&cl->tp);
  return rc ? rc : c;
}

static int stats_on(void) {
  const tsr__stats_env_t *env = tsr__stats_env();
  return env->text || env->file != NULL;
}

/* The OPEN message: header, hints, path, packed schema, in the ring. */
static int pack_open(tsr_file *f, const tsr__srv_cfile *cf, int64_t *off, int64_t *len) {
  tsr__srv_client *cl = f->ctx->servers;
  void *packed = NULL;
  size_t plen = 0;
  int rc = tsr__schema_pack(&f->schema, &packed, &plen);
  int64_t lpath = (int64_t)strlen(f->path) + 1;
  *len = (int64_t)sizeof(tsr__wire_hdr) + (int64_t)sizeof(tsr__hints) + lpath + (int64_t)plen;
  if (!rc) *off = tsr__ring_reserve(&cl->ring, *len);
  if (!rc && *off < 0) rc = TSR_ENOMEM;
  if (!rc) {
    char *p = cl->ring.buf + *off;
    tsr__wire_hdr h = {.op = TSR__WIRE_OPEN, .file = cf->id, .parallel = cf->levels ? 2 : cf->parallel,
                       .len_path = lpath, .len_schema = (int64_t)plen};
    snprintf(h.backend, sizeof h.backend, "%s", f->backend->name);
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, &f->hints, sizeof f->hints);
    memcpy(p + sizeof h + sizeof f->hints, f->path, (size_t)lpath);
    memcpy(p + sizeof h + sizeof f->hints + lpath, packed, plen);
  }
  free(packed);
  return rc;
}

static int v_enddef(tsr_file *f) {
  tsr__srv_client *cl = f->ctx->servers;
  tsr__srv_cfile *cf = calloc(1, sizeof *cf);
  int rc = cf ? 0 : TSR_ENOMEM;
  f->sdata = cf;
  rc = tsr__agree(f->ctx->comm, rc);
  if (rc) return rc;
  cf->id = cl->next_file++;
  /* A derived file of reduce= goes to group 0, whose server 0 holds its
   * data (server_reduce.h); the others are picked as usual. */
  cf->stream = -1;
  cf->group = f->reduce_held ? 0 : tsr__srv_pick_group(cl, f->path, &f->hints, f->ctx->comm, &cf->stream);
  if (cf->group < 0) return TSR_EMPI;
  /* A task's clients' tiles are no whole levels: with a whole_levels backend
   * (GRIB2) every client sends each task the part of its tile that falls in
   * the task's whole levels (server_slabs.h), and the tasks append their
   * messages at agreed offsets, as aggregate's writers do. */
  cf->parallel = f->backend->parallel;
  cf->levels = f->backend->parallel && f->backend->whole_levels;
  my_server(cl, cf->group, cf->parallel, &cf->server, &cf->first);
  if (!cf->parallel || cf->levels)
    rc = tsr__srv_slabs_init(&cf->slabs, f->schema.nvars, cf->levels ? cl->L.T : 0);
  if (!rc && cl->m == 0)
    rc = tsr__srv_track_open(cl, cf->id, cf->group, cf->parallel ? cl->L.T : 1, stats_on(),
                             f->path);

  /* The first client of each server ships the file: hints, path, schema.
   * Packed and agreed before anything is sent, so that a failure here never
   * leaves a server with half a file. */
  int64_t off = -1, len = 0;
  if (!rc && cf->first) rc = pack_open(f, cf, &off, &len);
  rc = tsr__agree(f->ctx->comm, rc);
  /* From here the servers hold the file (the same answer on every rank):
   * aborting it means telling them to delete it. */
  cf->opened = !rc;
  if (rc && cl->m == 0)
    tsr__srv_track_open(cl, cf->id, cf->group, 0, 0, NULL); /* expects nothing */
  if (off >= 0) {
    if (rc) tsr__ring_cancel(&cl->ring);
    else rc = tsr__ring_send(&cl->ring, off, len, cf->server, TSR__WIRE_TAG_HDR);
  }
  rc = commit(cl, rc);
  if (!rc) tsr__fstats_buffer(&f->st, tsr__ring_used(&cl->ring));
  return rc;
}

/* An error of an earlier file that model rank 0 has not reported yet; its
 * message (now f->berr, shared by the API layer's agreement) names that
 * file. Only NOTES_NOW never waits: a put must not block on the servers. */
static int earlier_error(tsr_file *f, int upto) {
  tsr__srv_client *cl = f->ctx->servers;
  if (cl->m != 0) return 0;
  int rc = tsr__srv_poll_notes(cl, upto);
  tsr__berr berr;
  int err = rc ? rc : tsr__srv_take_error(cl, -1, &berr);
  if (err && !rc) f->berr = berr;
  return err;
}

/* Record frames put count towards the file's stream (frames_per_outfile). */
static void count_frame(tsr_file *f, tsr__srv_cfile *cf, int varid, int64_t frame) {
  if (cf->stream < 0 || !f->schema.vars[varid].is_record || frame + 1 <= cf->frames) return;
  tsr__srv_stream_add(f->ctx->servers, cf->stream, frame + 1 - cf->frames);
  cf->frames = frame + 1;
}

static int put_any(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf,
                   int f64) {
  tsr__srv_client *cl = f->ctx->servers;
  tsr__srv_cfile *cf = f->sdata;
  tsr__wire_hdr h;
  memset(&h, 0, sizeof h);
  h.op = TSR__WIRE_PUT;
  h.file = cf->id;
  h.varid = varid;
  h.nd = d->ndims;
  h.frame = frame;
  for (int i = 0; i < d->ndims; i++) {
    h.start[i] = d->tile.start[i];
    h.count[i] = d->tile.count[i];
  }
  /* reduce=: where this frame stands in its stream (server_reduce.h). */
  h.rstream = f->rput.sid;
  h.rvar = f->rput.var;
  h.rseq = f->rput.seq;
  h.rframe = f->rput.frame;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  int rc = commit(cl, tsr__srv_handoff_put(cl, cf, &f->hints, &h, d, buf, es, f64));
  count_frame(f, cf, varid, frame);
  tsr__fstats_buffer(&f->st, tsr__ring_used(&cl->ring));
  f->ctx->stats.server_bytes_sent = cl->ring.sent;
  /* The tile is handed over; a file that failed meanwhile is reported now
   * rather than at a close or flush that may come much later. */
  return rc ? rc : earlier_error(f, TSR__NOTES_NOW);
}

static int v_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  return put_any(f, varid, frame, d, buf, 0);
}

/* Double memory, float variable: converted before the hand-off with
 * precision=float, else by the server (server_handoff.c). */
static int v_put_f64(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                     const double *buf) {
  return put_any(f, varid, frame, d, buf, 1);
}

static int v_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  tsr__srv_client *cl = f->ctx->servers;
  tsr__srv_cfile *cf = f->sdata;
  count_frame(f, cf, varid, frame);
  if (cl->m != 0) return commit(cl, 0);
  int64_t bytes = tsr__var_frame_elems(&f->schema, varid) *
                  (int64_t)tsr__type_size(f->schema.vars[varid].type);
  tsr__wire_hdr h;
  memset(&h, 0, sizeof h);
  h.op = TSR__WIRE_PUTG;
  h.file = cf->id;
  h.varid = varid;
  h.frame = frame;
  int rc = commit(cl, tsr__srv_handoff_global(cl, cf, &h, buf, bytes));
  return rc ? rc : earlier_error(f, TSR__NOTES_NOW); /* handed over first, as in put_any */
}

/* Wait for an acknowledgement from @p src; keeps the largest writer time. */
static int wait_ack(tsr__srv_client *cl, int src, tsr__wire_reply *r) {
  tsr__msg_info info;
  int rc = tsr__tp_wait(&cl->tp, src, TSR__WIRE_TAG_ACK, 0, &info);
  if (!rc) rc = tsr__tp_recv(&cl->tp, src, TSR__WIRE_TAG_ACK, r, sizeof *r);
  if (rc) return TSR_EMPI;
  if (r->writer_s > cl->server_writer_s) cl->server_writer_s = r->writer_s;
  if (r->peak_bytes > cl->server_peak) cl->server_peak = r->peak_bytes;
  if (r->msgs > cl->server_msgs) cl->server_msgs = r->msgs;
  if (r->reduce_bytes > cl->server_reduce) cl->server_reduce = r->reduce_bytes;
  return 0;
}

/* Every model rank learns the largest server writer time and server memory
 * peak heard of (a peak below 2^53 bytes travels exactly as a double). */
static void share_writer_time(tsr_ctx *ctx) {
  tsr__srv_client *cl = ctx->servers;
  double mine[4] = {cl->server_writer_s, (double)cl->server_peak, (double)cl->server_msgs,
                    (double)cl->server_reduce},
         all[4];
  MPI_Allreduce(mine, all, 4, MPI_DOUBLE, MPI_MAX, ctx->comm);
  cl->server_reduce = (int64_t)all[3];
  ctx->stats.server_reduce_bytes = cl->server_reduce;
  cl->server_writer_s = all[0];
  cl->server_peak = (int64_t)all[1];
  ctx->stats.server_writer_s = all[0];
  ctx->stats.server_peak_bytes = cl->server_peak;
  cl->server_msgs = (int64_t)all[2];
  ctx->stats.server_msgs_received = cl->server_msgs;
}

/* Flush: this file's data reaches its file, and every file closed before is
 * finished (written and closed, or failed and deleted). */
static int v_flush(tsr_file *f) {
  tsr__srv_client *cl = f->ctx->servers;
  tsr__srv_cfile *cf = f->sdata;
  int rc = 0;
  if (cf->first) rc = tsr__srv_send_control(cl, TSR__WIRE_FLUSH, cf->id, 0, cf->server);
  rc = commit(cl, rc);
  if (cf->first) {
    tsr__wire_reply r;
    if (!rc) rc = wait_ack(cl, cf->server, &r);
    if (!rc && r.status) {
      rc = r.status;
      f->berr = r.berr;
      tsr__srv_berr_name(&f->berr, f->path);
    }
  }
  rc = tsr__file_agree(f, rc);
  if (rc && cl->m == 0) tsr__srv_track_reported(cl, cf->id); /* reported now, not again */
  int earlier = earlier_error(f, TSR__NOTES_CLOSED);
  share_writer_time(f->ctx);
  return rc ? rc : earlier;
}

/* Hand the end of the file to the servers: CLOSE from each first client,
 * with @p err nonzero when they are to delete the file rather than complete
 * it (its note then carries err, which model rank 0 counts as reported: the
 * model was told by the call that failed, or gave the file up itself). */
static int hand_close(tsr_file *f, tsr__srv_cfile *cf, int err) {
  tsr__srv_client *cl = f->ctx->servers;
  int rc = commit(cl, cf->first ? tsr__srv_send_control(cl, TSR__WIRE_CLOSE, cf->id, err,
                                                        cf->server)
                                : 0);
  if (cf->stream >= 0 && cf->frames == 0) tsr__srv_stream_add(cl, cf->stream, 1);
  if (cl->m == 0) {
    tsr__srv_track_close(cl, cf->id);
    if (err) tsr__srv_track_reported(cl, cf->id);
  }
  tsr__ring_progress(&cl->ring, 0);
  tsr__fstats_buffer(&f->st, cl->ring.peak);
  return rc;
}

static void keep_server_figures(tsr_file *f) {
  tsr__srv_client *cl = f->ctx->servers;
  if (cl->server_writer_s > f->ctx->stats.server_writer_s)
    f->ctx->stats.server_writer_s = cl->server_writer_s;
  if (cl->server_peak > f->ctx->stats.server_peak_bytes)
    f->ctx->stats.server_peak_bytes = cl->server_peak;
  if (cl->server_msgs > f->ctx->stats.server_msgs_received)
    f->ctx->stats.server_msgs_received = cl->server_msgs;
  if (cl->server_reduce > f->ctx->stats.server_reduce_bytes)
    f->ctx->stats.server_reduce_bytes = cl->server_reduce;
}

/* Close hands the file over and returns. It reports no other file's
 * failure: a close that returns an error must leave its file deleted, and
 * this one is on its way to the servers; those errors come at the next put,
 * flush or tsr_finalize. With statistics on, model rank 0 waits for this
 * file's notes, whose figures become the file's writer-side record
 * (f->st.io), reported by the API layer right after; its own error, if any,
 * is then reported here (the servers have deleted the file). */
static int v_close(tsr_file *f) {
  tsr__srv_client *cl = f->ctx->servers;
  tsr__srv_cfile *cf = f->sdata;
  int rc = hand_close(f, cf, 0);
  if (cl->m == 0 && !rc && stats_on()) {
    rc = tsr__srv_wait_file(cl, cf->id);
    if (!rc) tsr__srv_file_figures(cl, cf->id, &f->st.io);
    tsr__berr berr;
    int own = rc ? 0 : tsr__srv_take_error(cl, cf->id, &berr);
    if (own) {
      rc = own;
      f->berr = berr;
    }
  }
  keep_server_figures(f);
  free_state(f);
  return rc;
}

/* After a failed enddef nothing was handed over (agreed first); a file the
 * servers hold (it failed on the model side, or tsr_abort) is deleted. */
static void v_abort(tsr_file *f) {
  tsr__srv_cfile *cf = f->sdata;
  if (cf && cf->opened) hand_close(f, cf, f->failed ? f->failed : TSR_ESTATE);
  free_state(f);
}

/* reduce=: a header (and payload) from this rank to server rank @p to. */
static int send_op(tsr__srv_client *cl, const tsr__wire_hdr *h, const void *payload, int64_t len,
                   int to) {
  int64_t off = tsr__ring_reserve(&cl->ring, (int64_t)sizeof *h + len);
  if (off < 0) return TSR_ENOMEM;
  memcpy(cl->ring.buf + off, h, sizeof *h);
  if (len) memcpy(cl->ring.buf + off + sizeof *h, payload, (size_t)len);
  return tsr__ring_send(&cl->ring, off, (int64_t)sizeof *h + len, to, TSR__WIRE_TAG_HDR);
}

/* A derived variable from the accumulators server 0 holds: every first
 * client of the file's group (group 0) tells its server. */
static int v_reduce_put(tsr_file *df, int varid, int sid, int item, int64_t endseq,
                        int64_t frames) {
  tsr__srv_client *cl = df->ctx->servers;
  tsr__srv_cfile *cf = df->sdata;
  tsr__wire_hdr h = {.op = TSR__WIRE_PUTR, .file = cf->id, .varid = varid, .rstream = sid,
                     .rvar = item + 1, .rseq = endseq, .rframe = frames};
  int rc = commit(cl, cf->first ? send_op(cl, &h, NULL, 0, cf->server) : 0);
  return rc ? rc : earlier_error(df, TSR__NOTES_NOW);
}

/* A stream's definition or an incomplete period: model rank 0 tells
 * server 0. */
static int v_reduce_ctl(tsr_ctx *ctx, int kind, const void *payload, int64_t len) {
  tsr__srv_client *cl = ctx->servers;
  tsr__wire_hdr h = {.op = kind == TSR__RCTL_DEF ? TSR__WIRE_RDEF : TSR__WIRE_RSAVE};
  int rc = cl->m == 0 ? send_op(cl, &h, payload, len, tsr__srv_server_rank(&cl->L, 0, 0)) : 0;
  return commit(cl, rc);
}

/* Several tasks per group write in parallel (each its own clients' tiles);
 * a single task writes alone, through a serial backend. */
static int v_want(const tsr__hints *h) {
  return h->io_tasks > 1 ? TSR__BACKEND_PREFER_PARALLEL : TSR__BACKEND_WANT_SERIAL;
}

const tsr__strategy_ops tsr__strategy_servers = {
    .name = "servers",
    .backend_want = v_want,
    .needs_server_ranks = 1,
    .ranks_init = tsr__servers_init,
    .ranks_finalize = tsr__servers_finalize,
    .ranks_settle = tsr__servers_settle,
    .enddef = v_enddef,
    .put = v_put,
    .put_f64 = v_put_f64,
    .put_global = v_put_global,
    .flush = v_flush,
    .close = v_close,
    .abort = v_abort,
    .reduce_put = v_reduce_put,
    .reduce_ctl = v_reduce_ctl,
};

int tsr__servers_finalize(tsr_ctx *ctx) {
  tsr__srv_client *cl = ctx->servers;
  int rc = 0;
  /* A first client stops its server in every group, even after an error:
   * a server that is never stopped would wait forever. */
  int t = tsr__srv_task_of(&cl->L, cl->m);
  int first = cl->m == tsr__srv_block_lo(&cl->L, t);
  for (int g = 0; first && g < cl->L.G; g++) {
    int r = tsr__srv_send_control(cl, TSR__WIRE_FINAL, -1, 0, tsr__srv_server_rank(&cl->L, g, t));
    if (!rc) rc = r;
  }
  rc = commit(cl, rc);
  int r2 = tsr__ring_progress(&cl->ring, 1);
  if (!rc) rc = r2;
  if (stats_on()) tsr__srv_sizing_new(cl); /* without memory the report is skipped (agreed) */
  tsr__berr berr = {0, ""};
  int lost = rc; /* after a failure to reach a server, nothing more is heard */
  for (int g = 0; first && g < cl->L.G && !lost; g++) {
    tsr__wire_reply r;
    lost = wait_ack(cl, tsr__srv_server_rank(&cl->L, g, t), &r);
    if (lost) break;
    tsr__srv_sizing_add(cl, g, &r);
    /* Each server acknowledges one first client: counted once. */
    tsr__drain_add_remote(&(tsr__drain_totals){.files = r.drain_files, .bytes = r.drain_bytes,
                                               .failed = r.drain_failed,
                                               .busy_s = r.drain_busy_s,
                                               .wait_s = r.drain_wait_s});
    /* A server's own failure at the end (a staged file it could not drain:
     * it stays staged with its marker): the job hears why. Every group's
     * acknowledgement is still received, so no server waits on its send. */
    if (r.status && !rc) {
      rc = r.status;
      berr = r.berr;
    }
  }
  if (!rc) rc = lost;
  if (cl->m == 0 && !rc) {
    rc = tsr__srv_poll_notes(cl, TSR__NOTES_ALL);
    if (!rc) rc = tsr__srv_take_error(cl, -1, &berr);
  }
  int agreed = tsr__agree(ctx->comm, rc);
  if (agreed) { /* the failed file's path and backend message, on every rank */
    tsr__share_message(ctx->comm, rc, agreed, berr.message, sizeof berr.message);
    tsr__set_last_error(berr.message[0] ? berr.message : tsr_strerror(agreed));
    tsr__ctx_failed(ctx, agreed, tsr_last_error());
  }
  share_writer_time(ctx);
  /* Every model rank takes part (a report that cannot be made is skipped
   * by all, agreed inside). */
  if (!agreed && stats_on())
    tsr__srv_sizing_report(cl, ctx->comm, ctx->stats.blocked_s, MPI_Wtime() - cl->t_init);
  /* The servers return the job's last failure from tsr_init. */
  tsr__srv_job_code(&cl->L, ctx->last_failure, ctx->last_message, (int)sizeof ctx->last_message);
  tsr__srv_client_free(cl);
  ctx->servers = NULL;
  return agreed;
}

/* Model rank 0 hears every note; the agreement makes the others wait too. */
int tsr__servers_settle(tsr_ctx *ctx) {
  tsr__srv_client *cl = ctx->servers;
  int rc = cl->m == 0 ? tsr__srv_poll_notes(cl, TSR__NOTES_CLOSED) : 0;
  if (cl->server_reduce > ctx->stats.server_reduce_bytes) /* heard in the notes */
    ctx->stats.server_reduce_bytes = cl->server_reduce;
  return tsr__agree(ctx->comm, rc);
}
