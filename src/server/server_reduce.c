/* reduce= on the I/O servers (contract and design in server_reduce.h).
 *
 * Order: every frame of a reduced variable carries its serial in the
 * stream (rseq) and its place in its period (rframe), given by the model
 * ranks, which count frames but fold nothing. A server that wrote part of a
 * frame sends server 0 its elements with tag tag_of(stream, variable,
 * rseq) on the servers' communicator; server 0 receives only the tag of the
 * variable's next frame (done), so later frames wait in MPI's queue, and
 * counts the round's last messages (one per sender, nsend senders) before
 * it moves on. Its own rounds it folds in place, after every earlier frame.
 * No cycle: server 0 waits only for frames the model handed over before
 * the one it is at, and the groups that write them never wait for server 0
 * (their sends do not block). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory_room.h"
#include "core/reduce_fold.h"
#include "core/verbose.h"
#include "server/server_reduce.h"

enum { SLOTS = TSR__REDUCE_HELD_STREAMS * TSR__REDUCE_MAX, FLUSH_BYTES = 1 << 20 };

/* A message to server 0: this header, nruns (lo, n) pairs, the data. */
typedef struct {
  int32_t sid, var, nsend, last, err, pad_;
  int64_t seq, rframe, nruns, bytes;
} rmsg;

typedef struct {
  int64_t n, done; /* elements; frames folded completely (this job) */
  int lasts;       /* frame `done`: senders whose last message came */
  unsigned char *covered;
  tsr_type type;
} rvar;

typedef struct rstream {
  tsr__rdef def;
  rvar v[TSR__REDUCE_MAX];
  tsr__rfold acc[TSR__REDUCE_MAX];
  int failed;
  char why[256];
  struct rstream *next;
} rstream;

typedef struct pending {
  MPI_Request req;
  char *buf;
  struct pending *next;
} pending;

struct tsr__srv_reduce {
  MPI_Comm scomm;
  int me, tags;
  rstream *streams;
  int64_t bytes;
  pending *sends;
  /* The round being collected for server 0 (not on server 0). */
  int64_t nruns, cap_runs, nbytes, cap_bytes;
  int64_t *runs;
  char *data;
};

struct tsr__srv_reduce *tsr__srv_reduce_new(MPI_Comm scomm) {
  struct tsr__srv_reduce *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->scomm = scomm;
  MPI_Comm_rank(scomm, &r->me);
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(scomm, MPI_TAG_UB, &ub, &flag);
  r->tags = (flag && ub ? *ub : 32767) / SLOTS;
  return r;
}

static int tag_of(const struct tsr__srv_reduce *r, int sid, int var, int64_t seq) {
  return (sid * TSR__REDUCE_MAX + var) * r->tags + (int)(seq % r->tags);
}

static void reap(struct tsr__srv_reduce *r, int wait) {
  for (pending **pp = &r->sends; *pp;) {
    int done = 0;
    if (wait) MPI_Wait(&(*pp)->req, MPI_STATUS_IGNORE), done = 1;
    else MPI_Test(&(*pp)->req, &done, MPI_STATUS_IGNORE);
    if (!done) {
      pp = &(*pp)->next;
      continue;
    }
    pending *p = *pp;
    *pp = p->next;
    free(p->buf);
    free(p);
  }
}

void tsr__srv_reduce_free(struct tsr__srv_reduce *r) {
  if (!r) return;
  reap(r, 1);
  while (r->streams) {
    rstream *st = r->streams;
    r->streams = st->next;
    for (int i = 0; i < st->def.nitems; i++) tsr__rfold_free(&st->acc[i]);
    for (int v = 0; v < st->def.nvars; v++) free(st->v[v].covered);
    free(st);
  }
  free(r->runs), free(r->data), free(r);
}

int64_t tsr__srv_reduce_bytes(const tsr__srv_server *s) { return s->red ? s->red->bytes : 0; }

static rstream *find(struct tsr__srv_reduce *r, int sid) {
  for (rstream *st = r->streams; st; st = st->next)
    if (st->def.sid == sid) return st;
  return NULL;
}

static void fail(rstream *st, const char *why) {
  if (st->failed) return;
  st->failed = TSR_EIO;
  if (snprintf(st->why, sizeof st->why, "%s", why) < 0) st->why[0] = '\0';
  TSR_LOG("reduce on server 0: %s", why);
}

/* ---- server 0: folding in the stream's order ------------------------------ */

static void fold(rstream *st, int var, int64_t before, int64_t lo, int64_t n, const char *x) {
  rvar *v = &st->v[var];
  if (lo < 0 || n < 0 || lo + n > v->n) {
    fail(st, "a frame's elements lie outside their variable");
    return;
  }
  for (int i = 0; i < st->def.nitems; i++)
    if (st->def.item_var[i] == var && st->def.item_op[i] != TSR__RED_COUNT)
      tsr__rfold_run(&st->acc[i], before, x, lo, n);
  memset(v->covered + lo, 1, (size_t)n);
}

/* A round's end heard for frame `done` of @p var. */
static void last_heard(rstream *st, int var, int nsend) {
  rvar *v = &st->v[var];
  if (++v->lasts < nsend) return;
  v->lasts = 0;
  v->done++;
}

/* Receive and fold every message of @p var until its frames before @p upto
 * are complete. */
static void drain(struct tsr__srv_reduce *r, rstream *st, int var, int64_t upto) {
  rvar *v = &st->v[var];
  while (v->done < upto) {
    MPI_Status status;
    int tag = tag_of(r, st->def.sid, var, v->done), bytes = 0;
    if (MPI_Probe(MPI_ANY_SOURCE, tag, r->scomm, &status) != MPI_SUCCESS) {
      fail(st, "the servers' communicator failed");
      return;
    }
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    char *buf = malloc((size_t)(bytes > 0 ? bytes : 1));
    if (!buf) {
      /* Taken all the same, so that the stream stays in step. */
      char one;
      MPI_Recv(&one, 0, MPI_BYTE, status.MPI_SOURCE, tag, r->scomm, MPI_STATUS_IGNORE);
      fail(st, "out of memory for a frame's elements");
      continue;
    }
    MPI_Recv(buf, bytes, MPI_BYTE, status.MPI_SOURCE, tag, r->scomm, MPI_STATUS_IGNORE);
    rmsg m;
    memcpy(&m, buf, sizeof m);
    const int64_t *runs = (const int64_t *)(buf + sizeof m);
    const char *x = (const char *)(runs + 2 * m.nruns);
    size_t es = tsr__type_size(v->type);
    if (m.seq != v->done || m.var != var) fail(st, "a frame arrived out of its order");
    else if (m.err) fail(st, "a server lost part of a frame");
    for (int64_t k = 0; !st->failed && k < m.nruns; k++) {
      fold(st, var, m.rframe, runs[2 * k], runs[2 * k + 1], x);
      x += runs[2 * k + 1] * (int64_t)es;
    }
    free(buf);
    if (m.last) last_heard(st, var, m.nsend);
  }
}

/* ---- every server: a round's elements ------------------------------------ */

/* This server's stream of the round when it is server 0 (after every
 * earlier frame of the variable), else NULL. */
static rstream *here(tsr__srv_server *s, const tsr__wire_hdr *h) {
  struct tsr__srv_reduce *r = s->red;
  if (!r || r->me != 0) return NULL;
  rstream *st = find(r, h->rstream);
  if (st && !st->failed) drain(r, st, h->rvar - 1, h->rseq);
  return st;
}

static int grow(void **p, int64_t *cap, int64_t need, size_t unit) {
  if (need <= *cap) return 0;
  int64_t c = *cap * 2 > need ? *cap * 2 : need;
  void *q = realloc(*p, (size_t)c * unit);
  if (!q) return TSR_ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

static void send_out(tsr__srv_server *s, const tsr__wire_hdr *h, int nsend, int last, int err) {
  struct tsr__srv_reduce *r = s->red;
  rmsg m = {h->rstream, h->rvar - 1, nsend, last, err, 0, h->rseq, h->rframe, r->nruns, r->nbytes};
  int64_t len = (int64_t)sizeof m + 16 * r->nruns + r->nbytes;
  pending *p = malloc(sizeof *p);
  char *buf = p && len <= INT_MAX ? malloc((size_t)len) : NULL;
  if (!buf) { /* the round's end still goes, empty and marked lost */
    free(p);
    rmsg e = m;
    e.err = TSR_ENOMEM, e.nruns = 0, e.bytes = 0, e.last = 1;
    r->nruns = r->nbytes = 0;
    if (last) MPI_Send(&e, sizeof e, MPI_BYTE, 0, tag_of(r, m.sid, m.var, m.seq), r->scomm);
    return;
  }
  memcpy(buf, &m, sizeof m);
  memcpy(buf + sizeof m, r->runs, (size_t)(16 * r->nruns));
  memcpy(buf + sizeof m + 16 * r->nruns, r->data, (size_t)r->nbytes);
  p->buf = buf;
  MPI_Isend(buf, (int)len, MPI_BYTE, 0, tag_of(r, m.sid, m.var, m.seq), r->scomm, &p->req);
  p->next = r->sends;
  r->sends = p;
  r->nruns = r->nbytes = 0;
}

void tsr__srv_reduce_run(tsr__srv_server *s, const tsr__wire_hdr *h, int64_t lo, int64_t n,
                         const char *data, size_t es) {
  if (!h->rvar || !s->red || n <= 0) return;
  rstream *st = here(s, h);
  if (st) {
    if (!st->failed) fold(st, h->rvar - 1, h->rframe, lo, n, data);
    return;
  }
  if (s->red->me == 0) return; /* a stream server 0 was never told of: nothing to keep */
  struct tsr__srv_reduce *r = s->red;
  int64_t bytes = n * (int64_t)es;
  if (r->nruns < 0) return;
  if (grow((void **)&r->runs, &r->cap_runs, 2 * (r->nruns + 1), sizeof(int64_t)) ||
      grow((void **)&r->data, &r->cap_bytes, r->nbytes + bytes, 1)) {
    r->nruns = -1; /* lost: the round's end says so */
    return;
  }
  r->runs[2 * r->nruns] = lo;
  r->runs[2 * r->nruns + 1] = n;
  r->nruns++;
  memcpy(r->data + r->nbytes, data, (size_t)bytes);
  r->nbytes += bytes;
  if (r->nbytes >= FLUSH_BYTES) send_out(s, h, 0, 0, 0);
}

void tsr__srv_reduce_box(tsr__srv_server *s, const tsr__wire_hdr *h, int nd, const int64_t shape[],
                         const tsr__box *x, const char *data, const tsr__box *in, size_t es) {
  if (!h->rvar || !s->red || tsr__box_elems(nd, x) == 0) return;
  if (nd == 0) {
    tsr__srv_reduce_run(s, h, 0, 1, data, es);
    return;
  }
  /* Row by row: the innermost dimension of x is contiguous in both. */
  int64_t idx[TSR_MAX_DIMS] = {0}, rows = 1, len = x->count[nd - 1];
  for (int i = 0; i < nd - 1; i++) rows *= x->count[i];
  for (int64_t k = 0; k < rows; k++) {
    int64_t g = 0, m = 0;
    for (int i = 0; i < nd; i++) {
      g = g * shape[i] + x->start[i] + idx[i];
      m = m * in->count[i] + x->start[i] - in->start[i] + idx[i];
    }
    tsr__srv_reduce_run(s, h, g, len, data + m * (int64_t)es, es);
    for (int i = nd - 2; i >= 0 && ++idx[i] == x->count[i]; i--) idx[i] = 0;
  }
}

void tsr__srv_reduce_round(tsr__srv_server *s, const tsr__wire_hdr *h, int nsend, int err) {
  if (!h->rvar || !s->red) return;
  struct tsr__srv_reduce *r = s->red;
  rstream *st = here(s, h);
  if (st) {
    if (err) fail(st, "a server lost part of a frame");
    if (!st->failed) last_heard(st, h->rvar - 1, nsend);
    return;
  }
  if (r->me == 0) return;
  int lost = r->nruns < 0;
  if (lost) r->nruns = r->nbytes = 0;
  send_out(s, h, nsend, 1, err ? err : lost ? TSR_ENOMEM : 0);
  reap(r, 0);
}

/* ---- server 0: definitions, saved periods --------------------------------- */

/* The saved period's block (docs/reductions.md, "Restart"): after the
 * header, each variable's covered flags (n bytes), then each item's arrays. */
static int64_t block_bytes(const rstream *st) {
  int64_t b = 0;
  for (int v = 0; v < st->def.nvars; v++) b += st->v[v].n;
  for (int i = 0; i < st->def.nitems; i++)
    b += tsr__rfold_elem_bytes(st->def.item_op[i], st->acc[i].type) * st->v[st->def.item_var[i]].n;
  return b;
}

/* Move the block to (@p save) or from @p fp. */
static int block_io(rstream *st, FILE *fp, int save) {
  int ok = 1;
#define IO(p, n) (ok = ok && ((n) == 0 || (save ? fwrite(p, 1, (size_t)(n), fp) : fread(p, 1, (size_t)(n), fp)) == (size_t)(n)))
  for (int v = 0; v < st->def.nvars; v++) IO(st->v[v].covered, st->v[v].n);
  for (int i = 0; i < st->def.nitems; i++) {
    tsr__rfold *a = &st->acc[i];
    int64_t n = st->v[st->def.item_var[i]].n;
    if (a->sum) IO(a->sum, n * 8);
    if (a->m2) IO(a->m2, n * 8);
    if (a->ext) IO(a->ext, n * (int64_t)tsr__type_size(a->type));
  }
#undef IO
  return ok ? 0 : TSR_EIO;
}

enum { HEADER = 4096 };

void tsr__srv_reduce_define(tsr__srv_server *s, const tsr__rdef *def) {
  struct tsr__srv_reduce *r = s->red;
  if (!r || r->me != 0 || find(r, def->sid)) return;
  rstream *st = calloc(1, sizeof *st);
  if (!st) return; /* its frames are taken and dropped; the derived file fails */
  st->def = *def;
  st->next = r->streams;
  r->streams = st;
  int64_t need = 0;
  for (int v = 0; v < def->nvars; v++) {
    int64_t n = 1;
    for (int d = 0; d < def->nd[v]; d++) n *= def->shape[v][d];
    st->v[v].n = n;
    st->v[v].type = (tsr_type)def->type[v];
    need += n;
  }
  for (int i = 0; i < def->nitems; i++) {
    st->acc[i].op = def->item_op[i];
    st->acc[i].type = st->v[def->item_var[i]].type;
  }
  need = block_bytes(st);
  tsr__memory_room room;
  tsr__memory_room_get(&room);
  char why[256];
  if (need > room.bytes - r->bytes) {
    if (snprintf(why, sizeof why, "the accumulators (%lld bytes on server 0) do not fit in what it "
             "may allocate (%lld bytes, %s)", (long long)need, (long long)room.bytes, room.what) < 0) why[0] = '\0';
    fail(st, why);
    return;
  }
  int bad = 0;
  for (int v = 0; v < def->nvars; v++)
    bad |= !(st->v[v].covered = calloc((size_t)(st->v[v].n ? st->v[v].n : 1), 1));
  for (int i = 0; i < def->nitems; i++) bad |= tsr__rfold_alloc(&st->acc[i], st->v[def->item_var[i]].n) != 0;
  if (bad) {
    fail(st, "out of memory for the accumulators on server 0");
    return;
  }
  r->bytes += need;
  if (!def->partial[0]) return;
  FILE *fp = fopen(def->partial, "rb");
  int rc = fp && fseek(fp, HEADER, SEEK_SET) == 0 ? block_io(st, fp, 0) : TSR_EIO;
  if (fp && !rc && fgetc(fp) != EOF) rc = TSR_EIO; /* another stream's, or another shape */
  if (fp) fclose(fp);
  if (rc) {
    if (snprintf(why, sizeof why, "cannot read '%s' (short or not written by this stream)", def->partial) < 0) why[0] = '\0';
    fail(st, why);
  }
}

void tsr__srv_reduce_save(tsr__srv_server *s, const tsr__rsave *sv) {
  struct tsr__srv_reduce *r = s->red;
  rstream *st = r && r->me == 0 ? find(r, sv->sid) : NULL;
  if (!st) return;
  for (int v = 0; v < st->def.nvars && !st->failed; v++) drain(r, st, v, sv->endseq[v]);
  if (st->failed) return; /* no side file: the period cannot be continued */
  char *head = calloc(1, HEADER);
  FILE *fp = head ? fopen(sv->path, "wb") : NULL;
  int rc = fp ? 0 : TSR_EIO;
  if (!rc) {
    snprintf(head, HEADER, "%s", sv->header);
    rc = fwrite(head, 1, HEADER, fp) == HEADER ? block_io(st, fp, 1) : TSR_EIO;
  }
  if (fp && fclose(fp) && !rc) rc = TSR_EIO;
  free(head);
  if (rc) {
    char why[TSR__RMSG_PATH + 64];
    if (snprintf(why, sizeof why, "cannot save the incomplete period in '%s'", sv->path) < 0) why[0] = '\0';
    remove(sv->path);
    s->red_err = TSR_EIO;
    if (snprintf(s->red_msg, sizeof s->red_msg, "reduce: %s", why) < 0) s->red_msg[0] = '\0';
  }
}

/* ---- group 0: a derived variable ------------------------------------------- */

int tsr__srv_reduce_write(tsr__srv_server *s, tsr__srv_file *sf, const tsr__wire_hdr *h) {
  struct tsr__srv_reduce *r = s->red;
  int owner = r && r->me == 0, rc = 0;
  rstream *st = owner ? find(r, h->rstream) : NULL;
  int item = h->rvar - 1;
  if (owner && (!st || item < 0 || item >= st->def.nitems)) rc = TSR_EINVAL;
  int var = rc || !owner ? -1 : st->def.item_var[item];
  if (var >= 0 && !st->failed) drain(r, st, var, h->rseq);
  if (var >= 0 && st->failed) {
    rc = st->failed;
    if (snprintf(sf->berr.message, sizeof sf->berr.message, "reduce on the I/O servers: %s", st->why) < 0) sf->berr.message[0] = '\0';
  }
  int64_t shape[TSR_MAX_DIMS];
  int nd = tsr__var_shape(&sf->schema, h->varid, shape);
  tsr_type ot = sf->schema.vars[h->varid].type;
  size_t es = tsr__type_size(ot);
  if (!rc && var >= 0) { /* the derived variable is the source's shape */
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    if (n != st->v[var].n || ot != tsr__rfold_out_type(st->acc[item].op, st->acc[item].type))
      rc = TSR_EINVAL;
  }
  /* Rows of the slowest dimension, at most slab_bytes at a time: every
   * server of the group counts the same chunks (the drain rule is
   * collective for a parallel file). */
  int64_t row = 1, rows = nd > 0 ? shape[0] : 1;
  for (int d = 1; d < nd; d++) row *= shape[d];
  int64_t per = tsr__srv_slab_bytes(sf->hints.slab_bytes, s->chunk) / ((int64_t)es * (row ? row : 1));
  if (per < 1) per = 1;
  char *buf = owner ? malloc((size_t)(per * row > 0 ? per * row : 1) * es) : NULL;
  if (owner && !buf && !rc) rc = TSR_ENOMEM;
  char fill[8];
  tsr__var_fill(&sf->schema, h->varid, fill);
  for (int64_t r0 = 0; r0 < rows; r0 += per) {
    int64_t nr = rows - r0 < per ? rows - r0 : per, n = nr * row, lo = r0 * row;
    int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
    for (int d = 0; d < nd; d++) count[d] = shape[d];
    if (nd > 0) start[0] = r0, count[0] = nr;
    if (!sf->status && sf->parallel) {
      int drain_err = 0;
      int drc = tsr__sink_drain_if_needed(&sf->sink, s->gcomm, owner ? n * (int64_t)es : 0,
                                          sf->lerr ? sf->lerr : rc, &drain_err);
      if (drc && !rc) rc = drc;
      if (drain_err && !rc) rc = drain_err;
    }
    if (!owner || rc || sf->status) continue;
    tsr__rfold_result(&st->acc[item], h->rframe, buf, lo, n);
    /* Elements no tile holds (holes) carry the fill value, as a put of
     * the model's decomposition leaves them. */
    for (int64_t i = 0; i < n; i++)
      if (!st->v[var].covered[lo + i]) memcpy(buf + i * (int64_t)es, fill, es);
    rc = tsr__sink_write(&sf->sink, h->varid, 0, start, count, buf, (tsr__memview){0});
  }
  free(buf);
  /* The period's last item is written: the side file it was loaded from
   * (if any) is done with, as on the model ranks (api/reduce_write.c). */
  if (!rc && var >= 0 && item == st->def.nitems - 1 && st->def.partial[0]) {
    remove(st->def.partial);
    st->def.partial[0] = '\0';
  }
  return rc;
}
