/* Server side: the files a server writes, one handler per message kind
 * (the server loop dispatches to them). Every backend request goes through
 * the file's sink.
 *
 * Parallel backends: every server of the group writes its own
 * clients' tiles (no rearrangement) and makes the same collective calls in
 * the same order, since all of them see the same op sequence. Errors are
 * agreed on the group communicator at the collective points (the drain
 * decision of each tile round, flush and close), so the servers abort a
 * failed file together. Serial backends: the group root writes
 * alone (server_assemble.c). A failed file is aborted at once (the backend
 * deletes it), and the rest of its messages are received and dropped, so
 * the clients' streams stay in step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/agree.h"
#include "core/verbose.h"
#include "core/mpiio_taken.h"
#include "server/server_reduce.h"
#include "server/server_state.h"

static tsr__srv_file *find(tsr__srv_server *s, int id) {
  for (tsr__srv_file *sf = s->files; sf; sf = sf->next)
    if (sf->id == id) return sf;
  return NULL;
}

double tsr__srv_writer_total(const tsr__srv_server *s) {
  double w = s->writer_s;
  for (const tsr__srv_file *sf = s->files; sf; sf = sf->next) w += sf->st.writer_s;
  return w;
}

void tsr__srv_fail(tsr__srv_file *sf, int code) {
  tsr__sink_abort(&sf->sink);
  if (!sf->status) sf->status = code;
  TSR_LOG("server file %s failed: %s (%s)", sf->path ? sf->path : "?", tsr_errname(code),
          sf->berr.message);
}

/* A file failed with TSR_ENOMEM because the transport refused a bundle:
 * its message says which server, which bundle, and why. */
static void refused(const tsr__srv_server *s, tsr__srv_file *sf, int code) {
  const char *why = code == TSR_ENOMEM ? tsr__tp_refusal(&s->tp) : NULL;
  if (why && !sf->berr.message[0])
    snprintf(sf->berr.message, sizeof sf->berr.message, "%s", why);
}

/* The group root records the MPI-IO hints the MPI library reports for the
 * file, for the statistics (on model ranks tsr__file_created does this).
 * Only when statistics are on, as there. */
static void created(const tsr__srv_server *s, tsr__srv_file *sf) {
  const tsr__stats_env_t *env = tsr__stats_env();
  if (s->t != 0 || (!env->text && !env->file)) return;
  MPI_Info info = tsr__sink_file_info(&sf->sink);
  if (info == MPI_INFO_NULL) return;
  tsr__mpiio_record(info, sf->st.mpiio);
  sf->st.mpiio_not_taken = tsr__mpiio_not_taken(&sf->hints, info, NULL);
  MPI_Info_free(&info);
}

int tsr__srv_open(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)r;
  tsr__srv_file *sf = calloc(1, sizeof *sf);
  if (!sf) return TSR_ENOMEM; /* the model side will wait forever on nothing: see docs */
  sf->id = h->file;
  sf->parallel = h->parallel != 0;
  sf->levels = h->parallel == 2;
  double now = MPI_Wtime();
  if (s->nopen++ == 0) s->t_first_open = now;
  s->t_last_open = now;
  tsr__schema_init(&sf->schema);
  tsr__hints_defaults(&sf->hints);
  tsr__fstats_init(&sf->st, 1 << 20);
  /* Appended: files are closed at finalize in the order they were opened,
   * the same on every server of the group. */
  tsr__srv_file **tail = &s->files;
  while (*tail) tail = &(*tail)->next;
  *tail = sf;

  const char *p = (const char *)s->in.p + sizeof *h;
  const tsr__backend_ops *ops = NULL;
  /* err: the message was lost on the way (a bundle the server could not hold). */
  int rc = h->err                                                                    ? h->err
           : s->in.len == (int64_t)(sizeof *h + sizeof(tsr__hints)) + h->len_path + h->len_schema
               ? 0
               : TSR_EINVAL;
  if (!rc) rc = tsr__backend_find(h->backend, &ops);
  if (!rc) {
    memcpy(&sf->hints, p, sizeof sf->hints);
    sf->path = strdup(p + sizeof(tsr__hints));
    rc = sf->path ? 0 : TSR_ENOMEM;
  }
  if (!rc)
    rc = tsr__schema_unpack(p + sizeof(tsr__hints) + h->len_path, (size_t)h->len_schema,
                            &sf->schema);
  if (!rc) sf->st.alignment = tsr__stats_alignment(&sf->hints);
  /* Bounded server memory: the backend may buffer at most half of it (the
   * drain rule then drains before a round that would go past). */
  if (!rc && s->bound > 0 && sf->hints.buffer_bytes > s->bound / 2)
    sf->hints.buffer_bytes = s->bound / 2;
  /* The description is unpacked: its message (larger than any data
   * message) leaves the receive buffer, which server_buffer_bytes bounds. */
  if (s->bound > 0 && s->in.cap > s->chunk) tsr__srv_buf_free(&s->in);
  if (!rc && (!sf->parallel || sf->levels))
    rc = tsr__srv_slabs_init(&sf->slabs, sf->schema.nvars, sf->levels ? s->L.T : 0);
  if (ops) tsr__sink_init(&sf->sink, ops, &sf->hints, &sf->st, &sf->berr);
  if (sf->parallel) {
    rc = tsr__agree(s->gcomm, rc);
    if (!rc) rc = tsr__sink_create(&sf->sink, s->gcomm, sf->path, &sf->schema);
    rc = tsr__agree(s->gcomm, rc); /* the backend agrees too; a mismatch would hang later */
  } else if (!rc) {
    rc = tsr__sink_create(&sf->sink, MPI_COMM_SELF, sf->path, &sf->schema);
  }
  if (!rc) created(s, sf);
  if (rc) {
    refused(s, sf, rc);
    if (!sf->berr.message[0])
      snprintf(sf->berr.message, sizeof sf->berr.message, "server %d: cannot open %s", s->index,
               sf->path ? sf->path : "(file)");
    tsr__srv_fail(sf, rc);
  }
  return rc;
}

/* One client's message of a parallel PUT round, in s->in; @p src: the
 * client's wcomm rank. */
static void put_one(tsr__srv_server *s, tsr__srv_file *sf, int src) {
  tsr__wire_hdr h;
  memcpy(&h, s->in.p, sizeof h);
  if (h.err && !sf->lerr) sf->lerr = h.err;
  /* A flat tile's runs are kept even when the file failed: the client
   * counts them as sent (server_runs.c). */
  const tsr__srv_runs *kept = NULL;
  char *runs_at = (char *)s->in.p + sizeof h + (size_t)h.nholes * sizeof(tsr__box);
  int krc = 0;
  if (h.flat == 1 && (h.nruns < 0 || runs_at - (char *)s->in.p + h.nruns * 2 * (int64_t)sizeof(int64_t) > s->in.len))
    krc = TSR_EINVAL;
  else if (h.flat && !h.err)
    kept = tsr__srv_runs_keep(s, src, &h, runs_at, &krc);
  if (sf->status || sf->lerr || h.err) return;
  char *p = (char *)s->in.p + sizeof h;
  int rc = 0;
  /* Model rank 0 sent the holes: they carry the fill value, as in direct. */
  for (int i = 0; i < h.nholes && !rc; i++) {
    tsr__box b;
    memcpy(&b, p + (size_t)i * sizeof b, sizeof b);
    rc = tsr__sink_write_fill(&sf->sink, h.varid, h.frame, b.start, b.count);
  }
  p += (size_t)h.nholes * sizeof(tsr__box);
  if (h.flat) { /* data packed in run order, after the runs sent with it */
    if (h.flat == 1) p += h.nruns * 2 * (int64_t)sizeof(int64_t);
    if (!rc) rc = krc;
    if (!rc) rc = tsr__srv_write_runs(s, &sf->sink, &h, kept, p, s->in.len - (int64_t)(p - (char *)s->in.p));
    if (rc) sf->lerr = rc;
    return;
  }
  if (!rc && h.wire_f64) { /* doubles of a float variable: converted here */
    int64_t n = 1;
    for (int i = 0; i < h.nd; i++) n *= h.count[i];
    if (s->in.len < (int64_t)(p - (char *)s->in.p) + n * (int64_t)sizeof(double)) rc = TSR_EINVAL;
    else tsr__doubles_to_floats(p, n);
  }
  if (!rc) {
    tsr__box b;
    memcpy(b.start, h.start, sizeof b.start);
    memcpy(b.count, h.count, sizeof b.count);
    int64_t shape[TSR_MAX_DIMS];
    tsr__var_shape(&sf->schema, h.varid, shape);
    tsr__srv_reduce_box(s, &h, h.nd, shape, &b, p, &b,
                        tsr__type_size(sf->schema.vars[h.varid].type));
    rc = tsr__sink_write(&sf->sink, h.varid, h.frame, h.start, h.count, p,
                         (tsr__memview){0});
  }
  if (rc) sf->lerr = rc;
}

/* One client's tile, its first message in s->in: with bounded server memory
 * the client cut it into nparts messages (sub-boxes), taken one by one. */
static void put_client(tsr__srv_server *s, tsr__srv_file *sf, int src) {
  tsr__wire_hdr h;
  memcpy(&h, s->in.p, sizeof h);
  put_one(s, sf, src);
  tsr__srv_note_memory(s);
  for (int k = 1; k < h.nparts; k++) {
    int rc = tsr__tp_take(&s->tp, src, TSR__WIRE_TAG_HDR, &s->in);
    if (rc) {
      if (!sf->lerr) sf->lerr = rc;
      continue;
    }
    put_one(s, sf, src);
    tsr__srv_note_memory(s);
  }
}

/* A parallel PUT round: one message from each of this server's clients (the
 * first one's came with the op). Before anything is written, the group
 * agrees on earlier errors and, by the sink's one rule, on draining the
 * backend buffer if the round's bytes would not fit: every server knows its
 * round's size from the messages' envelopes before receiving them. */
static void put_parallel(tsr__srv_server *s, tsr__srv_file *sf) {
  tsr__wire_hdr h0; /* the round's op, for reduce= at its end */
  memcpy(&h0, s->in.p, sizeof h0);
  int64_t incoming = s->in.len - (int64_t)sizeof(tsr__wire_hdr);
  for (int c = s->blo + 1; c < s->bhi; c++) {
    tsr__msg_info info;
    if (tsr__tp_wait(&s->tp, tsr__srv_model_rank(&s->L, c), TSR__WIRE_TAG_HDR, 1, &info) == 0)
      incoming += info.len - (int64_t)sizeof(tsr__wire_hdr);
  }
  if (!sf->status) { /* agreed before: every server of the group skips together */
    int drain_err = 0;
    int rc = tsr__sink_drain_if_needed(&sf->sink, s->gcomm, incoming, sf->lerr, &drain_err);
    if (rc) tsr__srv_fail(sf, rc);
    else if (drain_err) sf->lerr = drain_err;
  }
  put_client(s, sf, tsr__srv_model_rank(&s->L, s->blo));
  for (int c = s->blo + 1; c < s->bhi; c++) {
    int rc = tsr__tp_take(&s->tp, tsr__srv_model_rank(&s->L, c), TSR__WIRE_TAG_HDR, &s->in);
    if (rc) {
      if (!sf->lerr) sf->lerr = rc;
      continue;
    }
    put_client(s, sf, tsr__srv_model_rank(&s->L, c));
  }
  /* reduce=: every task of the group ends its share of the round. */
  tsr__srv_reduce_round(s, &h0, s->L.T, sf->status || sf->lerr);
}

/* A whole-levels PUT round: this task assembles and writes its levels, then
 * every task flushes (collective: the backend agrees where each task's
 * messages go, after those of the lower tasks), so the file holds the puts
 * in order, as aggregate's writers leave it. A task whose round failed
 * flushes too, so nobody waits; its error is agreed at the next flush or
 * close of the file. */
static void put_levels(tsr__srv_server *s, tsr__srv_file *sf) {
  int rc = tsr__srv_assemble(s, sf);
  if (rc && !sf->lerr) sf->lerr = rc;
  if (sf->status) return; /* agreed before: every task skips together */
  rc = tsr__sink_flush(&sf->sink);
  if (rc && !sf->lerr) sf->lerr = rc;
}

int tsr__srv_put(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)r;
  tsr__srv_file *sf = find(s, h->file);
  if (!sf) {
    TSR_LOG("server %d: data for unknown file %d", s->index, h->file);
    return TSR_ESTATE;
  }
  if (sf->first_put == 0) sf->first_put = MPI_Wtime();
  if (sf->levels) {
    put_levels(s, sf);
  } else if (sf->parallel) {
    put_parallel(s, sf);
  } else {
    int rc = tsr__srv_assemble(s, sf);
    if (rc && !sf->status) tsr__srv_fail(sf, rc);
  }
  /* Memory this server holds for the file's data (the sink counts what the
   * backend buffers). */
  tsr__fstats_buffer(&sf->st, s->in.cap + s->slab.cap);
  return sf->status;
}

int tsr__srv_putg(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)r;
  tsr__srv_file *sf = find(s, h->file);
  if (!sf || sf->status || (sf->parallel && sf->lerr)) return sf ? sf->status : TSR_ESTATE;
  if (sf->first_put == 0) sf->first_put = MPI_Wtime();
  int rc = h->err;
  const tsr__var *v = &sf->schema.vars[h->varid];
  int64_t bytes = tsr__var_frame_elems(&sf->schema, h->varid) * (int64_t)tsr__type_size(v->type);
  if (!rc && s->in.len != (int64_t)sizeof *h + bytes) rc = TSR_EINVAL;
  if (!rc)
    rc = tsr__sink_write_whole(&sf->sink, h->varid, h->frame,
                               (const char *)s->in.p + sizeof *h, 0);
  /* Parallel: only the root saw this op; the error is agreed at the next
   * collective point. */
  if (rc && sf->parallel) sf->lerr = rc;
  else if (rc) tsr__srv_fail(sf, rc);
  return sf->status;
}

int tsr__srv_flush(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  tsr__srv_file *sf = find(s, h->file);
  if (!sf) return TSR_ESTATE;
  if (!sf->status) {
    int rc = tsr__sink_flush(&sf->sink);
    if (sf->parallel) rc = tsr__agree(s->gcomm, rc ? rc : sf->lerr);
    if (rc) tsr__srv_fail(sf, rc);
  }
  refused(s, sf, sf->status);
  r->berr = sf->berr;
  return sf->status;
}

/* This server's figures for the file, for its close note. */
static void figures(const tsr__srv_server *s, const tsr__srv_file *sf, tsr__wire_fstats *fs) {
  const tsr__fstats *st = &sf->st;
  fs->wrote = st->is_writer;
  fs->rank = s->comm_rank;
  fs->writer_s = st->writer_s;
  fs->first_put_to_close_s = sf->first_put > 0 ? MPI_Wtime() - sf->first_put : 0.0;
  fs->writes = st->writes;
  fs->bytes_written = st->bytes_written;
  memcpy(fs->size_hist, st->size_hist, sizeof fs->size_hist);
  fs->not_aligned = st->not_aligned;
  fs->consec = st->consec;
  fs->offsets_known = st->offsets_known;
  fs->alignment = st->alignment;
  fs->peak_buffer = st->peak_buffer;
  memcpy(fs->mpiio, st->mpiio, sizeof fs->mpiio);
  fs->mpiio_not_taken = st->mpiio_not_taken;
}

static void free_file(tsr__srv_file *sf) {
  tsr__srv_slabs_free(&sf->slabs);
  tsr__schema_free(&sf->schema);
  free(sf->path);
  free(sf);
}

int tsr__srv_close(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  tsr__srv_file **pp = &s->files;
  while (*pp && (*pp)->id != h->file) pp = &(*pp)->next;
  tsr__srv_file *sf = *pp;
  if (!sf) return TSR_ESTATE;
  /* The model failed the file or gave it up (err, the same from every first
   * client of the group): deleted, never renamed, whatever was written. */
  if (!sf->status && h->err) tsr__srv_fail(sf, h->err);
  if (!sf->status) {
    int rc = tsr__sink_close(&sf->sink); /* every byte written, under the temporary name */
    if (sf->parallel) rc = tsr__agree(s->gcomm, rc ? rc : sf->lerr);
    /* Renamed into place only when complete everywhere; else the temporary
     * goes, so a failed file never looks complete. */
    int frc = tsr__sink_finish(&sf->sink, rc == 0);
    if (sf->parallel && !rc) rc = tsr__agree(s->gcomm, frc);
    else if (!rc) rc = frc;
    if (rc) sf->status = rc;
  }
  refused(s, sf, sf->status);
  r->berr = sf->berr;
  figures(s, sf, &r->fs);
  int status = sf->status;
  s->writer_s += sf->st.writer_s;
  *pp = sf->next;
  free_file(sf);
  return status;
}

int tsr__srv_putr(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)r;
  tsr__srv_file *sf = find(s, h->file);
  if (!sf) return TSR_ESTATE;
  if (sf->first_put == 0) sf->first_put = MPI_Wtime();
  int rc = tsr__srv_reduce_write(s, sf, h);
  /* Parallel: agreed at the next flush or close, as a put's error is. */
  if (rc && sf->parallel && !sf->lerr) sf->lerr = rc;
  else if (rc && !sf->parallel && !sf->status) tsr__srv_fail(sf, rc);
  return sf->status;
}

/* RDEF and RSAVE: model rank 0's message to server 0, its payload after
 * the header. */
static const void *payload(const tsr__srv_server *s, size_t len) {
  return s->in.len == (int64_t)(sizeof(tsr__wire_hdr) + len) ? (const char *)s->in.p + sizeof(tsr__wire_hdr)
                                                              : NULL;
}

int tsr__srv_rdef(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)h, (void)r;
  const void *p = payload(s, sizeof(tsr__rdef));
  tsr__rdef def;
  if (!p) return TSR_EINVAL;
  memcpy(&def, p, sizeof def);
  tsr__srv_reduce_define(s, &def);
  return 0;
}

int tsr__srv_rsave(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r) {
  (void)h, (void)r;
  const void *p = payload(s, sizeof(tsr__rsave));
  tsr__rsave *sv = p ? malloc(sizeof *sv) : NULL;
  if (!sv) return TSR_EINVAL;
  memcpy(sv, p, sizeof *sv);
  tsr__srv_reduce_save(s, sv);
  free(sv);
  return 0;
}

int tsr__srv_first_open(const tsr__srv_server *s) { return s->files ? s->files->id : -1; }
