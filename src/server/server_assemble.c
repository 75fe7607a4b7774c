/* Serial backends: a PUT round on the group root; whole-levels backends
 * (GRIB2): the same on every task of the group, for its own levels. Every
 * model rank sent a header (its tile), then one piece per slab box its tile
 * meets, in the order of the shared slab walk (server_slabs.h). The root takes every
 * header first, then assembles box by box: it receives from each client only
 * the piece that falls in the box (straight into the slab when the piece is
 * contiguous there), fills points no client owns with the fill value, and
 * writes the box through the file's sink. Memory: one slab box plus one
 * piece, whatever the field size.
 *
 * Why not the plan engine's exchange (plan/exchange.h), which serves
 * strategy=serial: it is collective over one communicator holding senders
 * and writer, matched phase by phase, and built from a decomposition that
 * every rank holds. Here the senders are model ranks that have moved on, the
 * root learns their tiles only from this round's headers, it interleaves
 * rounds of several files, and a failed file must keep receiving (and
 * dropping) its pieces. What the two share is the layout (tsr__layout_chunks)
 * and the box arithmetic (tsr__box_intersect, tsr__copy_box). */
#include <stdlib.h>
#include <string.h>

#include "server/server_reduce.h"
#include "server/server_state.h"

/* What the server's own buffers hold. Here, below server_writer.c and
 * server_loop.c, which call it too, since assembling grows the slab. The
 * backend's buffered bytes are not added: only the sink may ask a backend,
 * and it has no call for it yet; they are held to bound/2 by the drain rule
 * (tsr__srv_open). */
void tsr__srv_note_memory(tsr__srv_server *s) {
  /* Concentrators: the bundles held since the last note count too (the
   * buffers only grow, so their sum with that peak bounds what was held). */
  int64_t held = s->in.cap + s->slab.cap + tsr__tp_held(&s->tp);
  if (held > s->peak) s->peak = held;
}

/* Is sub-box x one contiguous run inside box b (C order)? Then its piece can
 * be received straight into the slab, at element *offset. */
static int contiguous_in(int nd, const tsr__box *x, const tsr__box *b, int64_t *offset) {
  int last = -1;
  for (int i = 0; i < nd; i++)
    if (x->count[i] != b->count[i]) last = i;
  for (int i = 0; i < last; i++)
    if (x->count[i] != 1) return 0;
  int64_t off = 0;
  for (int i = 0; i < nd; i++) off = off * b->count[i] + (x->start[i] - b->start[i]);
  *offset = off;
  return 1;
}

/* Receive client m's next piece @p x of slab box @p b: straight into the
 * slab when contiguous there, else through the receive buffer; dropped when
 * @p keep is 0. */
static int take_piece(tsr__srv_server *s, int nd, int m, const tsr__box *x, const tsr__box *b,
                      size_t es, int keep) {
  int src = tsr__srv_model_rank(&s->L, m);
  int f64 = s->hdrs[m].wire_f64; /* doubles of a float variable: converted here */
  int64_t n = tsr__box_elems(nd, x), off;
  if (keep && !f64 && contiguous_in(nd, x, b, &off))
    return tsr__tp_recv(&s->tp, src, TSR__WIRE_TAG_DATA, (char *)s->slab.p + off * (int64_t)es,
                        n * (int64_t)es);
  int rc = tsr__tp_take(&s->tp, src, TSR__WIRE_TAG_DATA, &s->in);
  if (rc || !keep) return rc;
  if (s->in.len != n * (int64_t)(f64 ? sizeof(double) : es)) return TSR_EINVAL;
  if (f64) tsr__doubles_to_floats(s->in.p, n);
  tsr__copy_box(nd, x, es, s->in.p, x->start, x->count, s->slab.p, b->start, b->count);
  return 0;
}

static void tile_of(const tsr__wire_hdr *h, tsr__box *t) {
  for (int i = 0; i < h->nd; i++) {
    t->start[i] = h->start[i];
    t->count[i] = h->count[i];
  }
}

/* A failed round: receive and drop every piece, so the streams stay in step
 * (a piece already lost, TSR_ENOMEM, was taken all the same). */
static void drop_pieces(tsr__srv_server *s) {
  int r = 0;
  for (int m = 0; m < s->L.M && r != TSR_EMPI; m++)
    for (int k = 0; k < s->hdrs[m].npieces && r != TSR_EMPI; k++)
      r = tsr__tp_take(&s->tp, tsr__srv_model_rank(&s->L, m), TSR__WIRE_TAG_DATA, &s->in);
}

/* Client m's piece of a flat tile (runs[m]) in slab box [lo, hi): n
 * elements packed in run order, placed run by run; dropped when @p keep is 0. */
static int take_runs(tsr__srv_server *s, int m, const int64_t *runs, int64_t lo, int64_t hi,
                     int64_t n, size_t es, int keep) {
  int f64 = s->hdrs[m].wire_f64, rc = tsr__tp_take(&s->tp, tsr__srv_model_rank(&s->L, m),
                                                   TSR__WIRE_TAG_DATA, &s->in);
  if (rc || !keep) return rc;
  if (s->in.len != n * (int64_t)(f64 ? sizeof(double) : es)) return TSR_EINVAL;
  if (f64) tsr__doubles_to_floats(s->in.p, n);
  int64_t first;
  tsr__srv_runs_in(runs, s->hdrs[m].nruns, lo, hi, &first);
  tsr__srv_runs_place(runs, s->hdrs[m].nruns, first, lo, hi, s->in.p, es, s->slab.p);
  return 0;
}

/* Client m's elements in slab box b: its tile's piece *x, or (flat) those of
 * its runs in [lo, hi). */
static int64_t piece_elems(const tsr__srv_server *s, int m, int64_t *const *runs,
                           const tsr__layout *L, int b, int64_t lo, int64_t hi, tsr__box *x) {
  const tsr__wire_hdr *h = &s->hdrs[m];
  int64_t first;
  if (h->flat) return tsr__srv_runs_in(runs[m], h->nruns, lo, hi, &first);
  tsr__box t;
  tile_of(h, &t);
  return tsr__srv_slab_piece(L, b, h->nd, &t, x) ? tsr__box_elems(h->nd, x) : 0;
}

/* reduce=: client m's elements of slab box b, now in the slab. */
static void feed(tsr__srv_server *s, int m, int64_t *const *runs, const tsr__layout *L, int b,
                 int64_t lo, int64_t hi, const int64_t shape[], size_t es) {
  const tsr__wire_hdr *h = &s->hdrs[m], *h0 = &s->hdrs[0];
  if (!h->flat) {
    tsr__box x;
    if (piece_elems(s, m, runs, L, b, lo, hi, &x))
      tsr__srv_reduce_box(s, h0, h0->nd, shape, &x, s->slab.p, &L->boxes[b], es);
    return;
  }
  int64_t first;
  tsr__srv_runs_in(runs[m], h->nruns, lo, hi, &first);
  for (int64_t r = first; r < h->nruns && runs[m][2 * r] < hi; r++) {
    int64_t a = runs[m][2 * r] > lo ? runs[m][2 * r] : lo;
    int64_t e = runs[m][2 * r + 1] < hi ? runs[m][2 * r + 1] : hi;
    if (e > a) tsr__srv_reduce_run(s, h0, a, e - a, (const char *)s->slab.p + (a - lo) * (int64_t)es, es);
  }
}

/* Walk the slab boxes: receive the pieces of each and write it. */
static int assemble(tsr__srv_server *s, tsr__srv_file *sf, const tsr__layout *L, size_t es,
                    int64_t *const *runs, const int64_t shape[]) {
  const tsr__wire_hdr *h0 = &s->hdrs[0];
  int M = s->L.M, varid = h0->varid, nd = h0->nd, rc = 0, keep = 1;
  tsr__box x;
  for (int b = 0; b < tsr__srv_slab_count(L); b++) {
    const tsr__box *box = &L->boxes[b];
    int64_t belems = tsr__box_elems(nd, box), covered = 0, lo = 0, hi = 0;
    /* Flat clients cut their runs by the same range (server_handoff_runs.c). */
    tsr__srv_slab_range(L, b, nd, shape, &lo, &hi);
    if (keep && (rc = tsr__srv_buf_grow(&s->slab, belems * (int64_t)es))) keep = 0;
    tsr__srv_note_memory(s);
    for (int m = 0; m < M; m++) covered += piece_elems(s, m, runs, L, b, lo, hi, &x);
    /* Points no client owns (holes) carry the fill value, as in serial. */
    if (keep && covered < belems) {
      char fill[8];
      tsr__var_fill(&sf->schema, varid, fill);
      tsr__fill_elems(s->slab.p, fill, es, belems);
    }
    for (int m = 0; m < M; m++) {
      int64_t n = piece_elems(s, m, runs, L, b, lo, hi, &x);
      if (!n) continue;
      int r = s->hdrs[m].flat ? take_runs(s, m, runs[m], lo, hi, n, es, keep)
                              : take_piece(s, nd, m, &x, box, es, keep);
      if (r && !rc) rc = r;
      if (r) keep = 0;
    }
    if (!keep) continue;
    for (int m = 0; m < M && h0->rvar; m++) /* reduce=: each client's elements, holes not */
      feed(s, m, runs, L, b, lo, hi, shape, es);
    /* The sink's one rule; serial backends rarely buffer. A whole-levels
     * file flushes (collectively) after the round instead. */
    int drain_err = 0;
    if (!sf->levels)
      rc = tsr__sink_drain_if_needed(&sf->sink, MPI_COMM_SELF, belems * (int64_t)es, 0,
                                     &drain_err);
    if (!rc) rc = drain_err;
    if (!rc)
      rc = tsr__sink_write(&sf->sink, varid, h0->frame, box->start, box->count, s->slab.p,
                           (tsr__memview){0});
    if (rc) keep = 0;
  }
  return rc;
}

/* The header in s->in, client m's: kept, and for a flat tile the runs kept
 * for its decomposition (sent with it, flat 1, or before) in runs[m];
 * TSR_ENOMEM or TSR_EINVAL when there are none (the round then fails and
 * its pieces are dropped). */
static int keep_header(tsr__srv_server *s, int m, int64_t **runs) {
  tsr__wire_hdr *h = &s->hdrs[m];
  memcpy(h, s->in.p, sizeof *h);
  if (!h->flat || h->err) return 0;
  if (h->nruns < 0) return TSR_EINVAL;
  int src = tsr__srv_model_rank(&s->L, m), rc = 0;
  const tsr__srv_runs *k = NULL;
  if (h->flat == 2) k = tsr__srv_runs_keep(s, src, h, NULL, &rc);
  /* flat 1: the runs follow in DATA messages (each taken, even after an
   * error, so that the stream stays in step); the first starts afresh. */
  int64_t per = tsr__wire_runs_per_msg(s->chunk);
  for (int64_t r = 0; h->flat == 1 && (r < h->nruns || r == 0); r += per) {
    tsr__wire_hdr hx = *h;
    hx.nruns = h->nruns - r < per ? h->nruns - r : per;
    hx.at = r;
    if (hx.nruns > 0) {
      int t = tsr__tp_take(&s->tp, src, TSR__WIRE_TAG_DATA, &s->in);
      if (t) return t;
      if (!rc && s->in.len != hx.nruns * 2 * (int64_t)sizeof(int64_t)) rc = TSR_EINVAL;
    }
    if (!rc) k = tsr__srv_runs_keep(s, src, &hx, s->in.p, &rc);
  }
  if (!rc) { /* a parallel file's parts may have kept them cut in more runs: the same elements */
    runs[m] = k->runs;
    h->nruns = k->nruns;
  }
  return rc;
}

/* Every header (and runs) of the round is in: write it, or drop its pieces. */
static int assemble_round(tsr__srv_server *s, tsr__srv_file *sf, int64_t *const *runs, int kerr) {
  int M = s->L.M;
  /* A whole-levels task with an error not yet agreed drops its round too. */
  int err = sf->status ? sf->status : sf->levels && sf->lerr ? sf->lerr : kerr;
  for (int m = 0; m < M && !err; m++) err = s->hdrs[m].err;
  const tsr__layout *L = NULL;
  const tsr__wire_hdr *h0 = &s->hdrs[0];
  size_t es = 1;
  int64_t shape[TSR_MAX_DIMS];
  if (!err) {
    es = tsr__type_size(sf->schema.vars[h0->varid].type);
    tsr__var_shape(&sf->schema, h0->varid, shape);
    /* The clients cut their tiles along the same layout (same shape, type
     * and slab_bytes), so pieces arrive in the order the boxes are walked. */
    err = tsr__srv_slabs_of(&sf->slabs, h0->varid, s->t, h0->nd, shape, es,
                            tsr__srv_slab_bytes(sf->hints.slab_bytes, s->chunk), &L);
  }
  if (err) {
    drop_pieces(s);
    return err;
  }
  return assemble(s, sf, L, es, runs, shape);
}

int tsr__srv_assemble(tsr__srv_server *s, tsr__srv_file *sf) {
  int M = s->L.M, rc = 0, kerr = 0;
  int64_t **runs = calloc((size_t)M, sizeof *runs);
  if (!runs) kerr = TSR_ENOMEM;
  /* The first client's header came with the op (model rank 0's on the
   * root): kept first, then the others', in model order. */
  for (int i = 0; i < M && !rc; i++) {
    int m = i == 0 ? s->blo : i <= s->blo ? i - 1 : i;
    if (i > 0) rc = tsr__tp_take(&s->tp, tsr__srv_model_rank(&s->L, m), TSR__WIRE_TAG_HDR, &s->in);
    if (rc) break;
    if (!runs) memcpy(&s->hdrs[m], s->in.p, sizeof s->hdrs[m]);
    int k = runs ? keep_header(s, m, runs) : 0;
    if (k && !kerr) kerr = k;
  }
  if (!rc) rc = assemble_round(s, sf, runs, kerr);
  /* reduce=: the root ends the round; a whole-levels file's every task. */
  tsr__srv_reduce_round(s, &s->hdrs[0], sf->levels ? s->L.T : 1, rc || sf->status);
  free(runs); /* the runs themselves stay kept */
  return rc; /* a lost header: the streams cannot be followed further */
}
