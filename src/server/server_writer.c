/* Server side: the files a server writes, one handler per op.
 *
 * Parallel backends (pnetcdf): every server of the group writes its own
 * clients' tiles (no rearrangement) and makes the same collective calls in the
 * same order, since all of them see the same op sequence. Errors are agreed
 * on the group communicator at the collective points (after each tile round,
 * at flush and close), so the servers abort a failed file together.
 * Serial backends (netcdf): the group root writes alone. It receives every
 * client's header first (their tiles), then assembles the variable slab box
 * by slab box, receiving from each client only the piece that falls in the
 * box; memory is one box (<= slab_bytes) plus one piece.
 * A failed file is aborted at once (the backend deletes it), and the rest of
 * its messages are received and dropped, so the clients' streams stay in step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server_proto.h"

struct tsr__srv_file {
  int id, parallel;
  int status; /* sticky: the file failed (agreed in the group for parallel files) */
  int lerr;   /* parallel: a local error not yet agreed in the group */
  tsr_file f; /* a server-side file: schema, hints, backend, statistics */
  tsr__sink sink;
  tsr__layout *lay; /* serial: the slab layout of each variable, built on first use */
  tsr__srv_file *next;
};

static tsr__srv_file *find(tsr__srv_server *s, int id) {
  for (tsr__srv_file *sf = s->files; sf; sf = sf->next)
    if (sf->id == id) return sf;
  return NULL;
}

double tsr__srv_writer_total(const tsr__srv_server *s) {
  double w = s->writer_s;
  for (const tsr__srv_file *sf = s->files; sf; sf = sf->next) w += sf->f.st.writer_s;
  return w;
}

/* Abort (close and delete) a failed file. Collective for parallel files,
 * which only fail at agreed points. */
static void fail_file(tsr__srv_file *sf, int code) {
  tsr__sink_abort(&sf->sink);
  if (!sf->status) sf->status = code;
  TSR_LOG("server file %s failed: %s (%s)", sf->f.path, tsr_errname(code), sf->f.berr.message);
}

static int grow(void **buf, int64_t *cap, int64_t need) { return tsr__grow(buf, cap, need + 1); }

int tsr__srv_open(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len) {
  tsr__srv_file *sf = calloc(1, sizeof *sf);
  if (!sf) return TSR_ENOMEM; /* the model side will wait forever on nothing: see docs */
  sf->id = h->file;
  sf->parallel = h->parallel;
  tsr__schema_init(&sf->f.schema);
  tsr__hints_defaults(&sf->f.hints);
  tsr__fstats_init(&sf->f.st, 1 << 20);
  /* Appended: files are closed at finalize in the order they were opened,
   * the same on every server of the group. */
  tsr__srv_file **tail = &s->files;
  while (*tail) tail = &(*tail)->next;
  *tail = sf;

  const char *p = (const char *)s->msg + sizeof *h;
  int rc = len == (int64_t)(sizeof *h + sizeof(tsr__hints)) + h->len_path + h->len_schema
               ? 0
               : TSR_EINVAL;
  if (!rc) rc = tsr__backend_find(h->backend, &sf->f.backend);
  if (!rc) {
    memcpy(&sf->f.hints, p, sizeof sf->f.hints);
    sf->f.path = strdup(p + sizeof(tsr__hints));
    rc = sf->f.path ? 0 : TSR_ENOMEM;
  }
  if (!rc)
    rc = tsr__schema_unpack(p + sizeof(tsr__hints) + h->len_path, (size_t)h->len_schema,
                            &sf->f.schema);
  if (!rc) sf->f.st.alignment = tsr__stats_alignment(&sf->f.hints);
  if (!rc) tsr__sink_init(&sf->sink, sf->f.backend, &sf->f.hints, &sf->f.st, &sf->f.berr);
  if (!rc && !sf->parallel) {
    sf->lay = calloc((size_t)(sf->f.schema.nvars ? sf->f.schema.nvars : 1), sizeof *sf->lay);
    if (!sf->lay) rc = TSR_ENOMEM;
  }
  if (sf->parallel) {
    rc = tsr__agree(s->gcomm, rc);
    if (!rc) rc = tsr__sink_create(&sf->sink, s->gcomm, sf->f.path, &sf->f.schema);
    rc = tsr__agree(s->gcomm, rc); /* the backend agrees too; a mismatch would hang later */
    if (rc && tsr__sink_is_open(&sf->sink)) fail_file(sf, rc);
  } else if (!rc) {
    rc = tsr__sink_create(&sf->sink, MPI_COMM_SELF, sf->f.path, &sf->f.schema);
  }
  if (rc) {
    if (!sf->f.berr.message[0])
      snprintf(sf->f.berr.message, sizeof sf->f.berr.message, "server %d: cannot open %s",
               s->index, sf->f.path ? sf->f.path : "(file)");
    fail_file(sf, rc);
  }
  return rc;
}

/* Write @p n hole boxes with the fill value (parallel files, from the root). */
static int write_holes(tsr__srv_server *s, tsr__srv_file *sf, const tsr__srv_hdr *h,
                       const tsr__box *holes) {
  size_t es = tsr__type_size(sf->f.schema.vars[h->varid].type);
  char fill[8];
  tsr__var_fill(&sf->f.schema, h->varid, fill);
  int rc = 0;
  for (int i = 0; i < h->nholes && !rc; i++) {
    tsr__box b;
    memcpy(&b, &holes[i], sizeof b);
    int64_t n = tsr__box_elems(h->nd, &b);
    if ((rc = grow(&s->slab, &s->slab_cap, n * (int64_t)es))) break;
    tsr__fill_elems(s->slab, fill, es, n);
    rc = tsr__sink_write(&sf->sink, h->varid, h->frame, b.start, b.count, s->slab,
                          (tsr__memview){NULL, NULL});
  }
  return rc;
}

/* One client's message of a parallel PUT round, in s->msg. */
static void put_one(tsr__srv_server *s, tsr__srv_file *sf) {
  tsr__srv_hdr h;
  memcpy(&h, s->msg, sizeof h);
  if (h.err && !sf->lerr) sf->lerr = h.err;
  if (sf->status || sf->lerr || h.err) return;
  const char *p = (const char *)s->msg + sizeof h;
  int rc = h.nholes ? write_holes(s, sf, &h, (const tsr__box *)p) : 0;
  p += (size_t)h.nholes * sizeof(tsr__box);
  if (!rc)
    rc = tsr__sink_write(&sf->sink, h.varid, h.frame, h.start, h.count, p,
                          (tsr__memview){NULL, NULL});
  if (rc) sf->lerr = rc;
}

static void put_parallel(tsr__srv_server *s, tsr__srv_file *sf) {
  put_one(s, sf); /* the first client's message came with the op */
  for (int c = s->blo + 1; c < s->bhi; c++) {
    int64_t len;
    if (tsr__srv_recv(s, tsr__srv_model_rank(&s->L, c), TSR__SRV_TAG_HDR, &len)) {
      if (!sf->lerr) sf->lerr = TSR_EMPI;
      continue;
    }
    put_one(s, sf);
  }
  if (sf->status) return; /* agreed before: every server skips together */
  /* Drain the backend's buffer at a point every server agrees on, when any
   * holds more than half of buffer_bytes; agree on errors at the same time. */
  int derr, rc = tsr__sink_drain_if_needed(&sf->sink, s->gcomm, 0, sf->lerr, &derr);
  if (rc) fail_file(sf, rc);
  else sf->lerr = derr;
}

/* Is sub-box x one contiguous run inside box b (C order)? Then its piece can
 * be received straight into the slab. */
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
 * slab when contiguous there, else through the stage buffer; dropped when
 * @p keep is 0 (a failed file). */
static int take_piece(tsr__srv_server *s, int nd, int m, const tsr__box *x, const tsr__box *b,
                      size_t es, int keep) {
  int src = tsr__srv_model_rank(&s->L, m);
  int64_t n = tsr__box_elems(nd, x), off;
  if (keep && contiguous_in(nd, x, b, &off)) {
    if (MPI_Recv((char *)s->slab + off * (int64_t)es, (int)(n * (int64_t)es), MPI_BYTE, src,
                 TSR__SRV_TAG_DATA, s->L.wcomm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return TSR_EMPI;
    return 0;
  }
  int64_t len;
  int rc = tsr__srv_recv(s, src, TSR__SRV_TAG_DATA, &len);
  if (rc || !keep) return rc;
  if (len != n * (int64_t)es) return TSR_EINVAL;
  tsr__copy_box(nd, x, es, s->msg, x->start, x->count, s->slab, b->start, b->count);
  return 0;
}

static int tile_of(const tsr__srv_hdr *h, tsr__box *t) {
  int64_t n = 1;
  for (int i = 0; i < h->nd; i++) {
    t->start[i] = h->start[i];
    t->count[i] = h->count[i];
    n *= h->count[i];
  }
  return n > 0;
}

/* Serial PUT round on the root: every model rank sent a header, then its
 * pieces in the order of the variable's slab boxes. */
static void put_serial(tsr__srv_server *s, tsr__srv_file *sf) {
  int M = s->L.M, rc = 0;
  memcpy(&s->hdrs[0], s->msg, sizeof s->hdrs[0]); /* model rank 0's, with the op */
  for (int m = 1; m < M && !rc; m++) {
    int64_t len;
    rc = tsr__srv_recv(s, tsr__srv_model_rank(&s->L, m), TSR__SRV_TAG_HDR, &len);
    if (!rc) memcpy(&s->hdrs[m], s->msg, sizeof s->hdrs[m]);
  }
  if (rc) { /* MPI failed: nothing sensible to do but fail the file */
    fail_file(sf, rc);
    return;
  }
  for (int m = 0; m < M; m++)
    if (s->hdrs[m].err && !sf->status) fail_file(sf, s->hdrs[m].err);
  const tsr__srv_hdr *h0 = &s->hdrs[0];
  int varid = h0->varid, nd = h0->nd;
  tsr__layout *L = NULL;
  int64_t shape[TSR_MAX_DIMS];
  size_t es = 1;
  if (!sf->status) {
    L = &sf->lay[varid];
    es = tsr__type_size(sf->f.schema.vars[varid].type);
    tsr__var_shape(&sf->f.schema, varid, shape);
    /* The clients cut their tiles along the same layout (same shape, type and
     * slab_bytes), so pieces arrive in the order the boxes are visited here. */
    if (!L->npieces &&
        (rc = tsr__layout_chunks(nd, shape, sf->f.hints.slab_bytes / (int64_t)es, 0, L)))
      fail_file(sf, rc);
  }
  if (sf->status) { /* drop every piece: the clients' streams stay in step */
    int r = 0;
    for (int m = 0; m < M && !r; m++)
      for (int k = 0; k < s->hdrs[m].npieces && !r; k++) {
        int64_t len;
        r = tsr__srv_recv(s, tsr__srv_model_rank(&s->L, m), TSR__SRV_TAG_DATA, &len);
      }
    return;
  }
  char fill[8];
  tsr__var_fill(&sf->f.schema, varid, fill);
  int keep = 1, nb = L->first[L->npieces];
  for (int b = 0; b < nb; b++) {
    const tsr__box *box = &L->boxes[b];
    int64_t belems = tsr__box_elems(nd, box), covered = 0;
    if (keep && (rc = grow(&s->slab, &s->slab_cap, belems * (int64_t)es))) keep = 0;
    tsr__box t, x;
    for (int m = 0; m < M; m++)
      if (tile_of(&s->hdrs[m], &t) && tsr__box_intersect(nd, box, &t, &x))
        covered += tsr__box_elems(nd, &x);
    /* Points no client owns (holes) carry the fill value, as in serial. */
    if (keep && covered < belems) tsr__fill_elems(s->slab, fill, es, belems);
    for (int m = 0; m < M; m++) {
      if (!tile_of(&s->hdrs[m], &t) || !tsr__box_intersect(nd, box, &t, &x)) continue;
      int r = take_piece(s, nd, m, &x, box, es, keep);
      if (r && !rc) rc = r;
      if (r) keep = 0;
    }
    if (keep) {
      rc = tsr__sink_write(&sf->sink, varid, h0->frame, box->start, box->count, s->slab,
                            (tsr__memview){NULL, NULL});
      if (rc) keep = 0;
    }
  }
  if (rc) fail_file(sf, rc);
}

void tsr__srv_put(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len) {
  (void)len;
  tsr__srv_file *sf = find(s, h->file);
  if (!sf) {
    TSR_LOG("server %d: data for unknown file %d", s->index, h->file);
    return;
  }
  if (sf->parallel) put_parallel(s, sf);
  else put_serial(s, sf);
}

void tsr__srv_putg(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len) {
  tsr__srv_file *sf = find(s, h->file);
  if (!sf || sf->status || (sf->parallel && sf->lerr)) return;
  int rc = h->err;
  const tsr__var *v = &sf->f.schema.vars[h->varid];
  int64_t bytes = tsr__var_frame_elems(&sf->f.schema, h->varid) * (int64_t)tsr__type_size(v->type);
  if (!rc && len != (int64_t)sizeof *h + bytes) rc = TSR_EINVAL;
  int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
  tsr__var_shape(&sf->f.schema, h->varid, count);
  if (!rc)
    rc = tsr__sink_write(&sf->sink, h->varid, h->frame, start, count,
                          (const char *)s->msg + sizeof *h, (tsr__memview){NULL, NULL});
  /* Parallel: only the root saw this op; the error is agreed at the next
   * collective point. */
  if (rc && sf->parallel) sf->lerr = rc;
  else if (rc) fail_file(sf, rc);
}

int tsr__srv_flush(tsr__srv_server *s, int file, tsr__berr *berr) {
  tsr__srv_file *sf = find(s, file);
  if (!sf) return TSR_ESTATE;
  if (!sf->status) {
    int rc = tsr__sink_flush(&sf->sink);
    if (sf->parallel) rc = tsr__agree(s->gcomm, rc ? rc : sf->lerr);
    if (rc) fail_file(sf, rc);
  }
  *berr = sf->f.berr;
  return sf->status;
}

static void free_file(tsr__srv_file *sf) {
  if (sf->lay)
    for (int v = 0; v < sf->f.schema.nvars; v++) tsr__layout_free(&sf->lay[v]);
  free(sf->lay);
  tsr__schema_free(&sf->f.schema);
  free(sf->f.path);
  free(sf);
}

int tsr__srv_close(tsr__srv_server *s, int file, tsr__berr *berr) {
  tsr__srv_file **pp = &s->files;
  while (*pp && (*pp)->id != file) pp = &(*pp)->next;
  tsr__srv_file *sf = *pp;
  if (!sf) return TSR_ESTATE;
  if (!sf->status) {
    int rc = tsr__sink_close(&sf->sink); /* always frees */
    if (sf->parallel) rc = tsr__agree(s->gcomm, rc ? rc : sf->lerr);
    /* Renamed into place only when complete; else the temporary goes. */
    int frc = tsr__sink_finish(&sf->sink, rc == 0);
    if (sf->parallel && !rc) rc = tsr__agree(s->gcomm, frc);
    else if (!rc) rc = frc;
    if (rc) sf->status = rc;
  }
  *berr = sf->f.berr;
  int status = sf->status;
  s->writer_s += sf->f.st.writer_s;
  *pp = sf->next;
  free_file(sf);
  return status;
}

int tsr__srv_first_open(const tsr__srv_server *s) { return s->files ? s->files->id : -1; }
