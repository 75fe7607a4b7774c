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
#include <string.h>

#include "server/server_state.h"

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

/* Walk the slab boxes: receive the pieces of each and write it. */
static int assemble(tsr__srv_server *s, tsr__srv_file *sf, const tsr__layout *L, size_t es) {
  const tsr__wire_hdr *h0 = &s->hdrs[0];
  int M = s->L.M, varid = h0->varid, nd = h0->nd, rc = 0, keep = 1;
  tsr__box t, x;
  for (int b = 0; b < tsr__srv_slab_count(L); b++) {
    const tsr__box *box = &L->boxes[b];
    int64_t belems = tsr__box_elems(nd, box), covered = 0;
    if (keep && (rc = tsr__srv_buf_grow(&s->slab, belems * (int64_t)es))) keep = 0;
    tsr__srv_note_memory(s);
    for (int m = 0; m < M; m++) {
      tile_of(&s->hdrs[m], &t);
      if (tsr__srv_slab_piece(L, b, nd, &t, &x)) covered += tsr__box_elems(nd, &x);
    }
    /* Points no client owns (holes) carry the fill value, as in serial. */
    if (keep && covered < belems) {
      char fill[8];
      tsr__var_fill(&sf->schema, varid, fill);
      tsr__fill_elems(s->slab.p, fill, es, belems);
    }
    for (int m = 0; m < M; m++) {
      tile_of(&s->hdrs[m], &t);
      if (!tsr__srv_slab_piece(L, b, nd, &t, &x)) continue;
      int r = take_piece(s, nd, m, &x, box, es, keep);
      if (r && !rc) rc = r;
      if (r) keep = 0;
    }
    if (!keep) continue;
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

int tsr__srv_assemble(tsr__srv_server *s, tsr__srv_file *sf) {
  int M = s->L.M, rc = 0;
  /* The first client's came with the op (model rank 0's on the root). */
  memcpy(&s->hdrs[s->blo], s->in.p, sizeof s->hdrs[s->blo]);
  for (int m = 0; m < M && !rc; m++) {
    if (m == s->blo) continue;
    rc = tsr__tp_take(&s->tp, tsr__srv_model_rank(&s->L, m), TSR__WIRE_TAG_HDR, &s->in);
    if (!rc) memcpy(&s->hdrs[m], s->in.p, sizeof s->hdrs[m]);
  }
  if (rc) return rc; /* a header is lost: the streams cannot be followed further */
  /* A whole-levels task with an error not yet agreed drops its round too. */
  int err = sf->status ? sf->status : sf->levels ? sf->lerr : 0;
  for (int m = 0; m < M && !err; m++) err = s->hdrs[m].err;
  const tsr__layout *L = NULL;
  const tsr__wire_hdr *h0 = &s->hdrs[0];
  size_t es = 1;
  if (!err) {
    int64_t shape[TSR_MAX_DIMS];
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
  return assemble(s, sf, L, es);
}
