/* reduce=: time statistics folded in as tsr_put hands each frame over, on
 * the rank that holds the tile, and written to a derived file through the
 * ordinary API when a period ends (contract in core/reduce.h, user's view in
 * docs/reductions.md).
 *
 * Summation order: every element is folded in frame order (the order the
 * frames reach tsr_put, which must be the stream's order), by the one rank
 * whose tile holds it, in double precision. Nothing depends on the strategy
 * or on how many ranks there are, so derived files are bit-identical across
 * strategies and decompositions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/memory_room.h"
#include "core/reduce_fold.h"
#include "core/reduce_msg.h"
#include "api/reduce.h"
#include "api/reduce_state.h"
#include "strategy/strategy.h"

/* ---- the tile inside a memory box --------------------------------------- */

/* The tile inside its memory box (contract in core/reduce_state.h). */
void tsr__reduce_walk(const tsr_decomp *vd, tsr__reduce_run_fn fn, void *arg) {
  if (vd->tiles.flat || vd->ndims == 0) {
    if (vd->my_elems > 0) fn(arg, 0, 0, vd->my_elems);
    return;
  }
  int nd = vd->ndims;
  int64_t stride[TSR_MAX_DIMS], idx[TSR_MAX_DIMS] = {0}, rows = 1;
  stride[nd - 1] = 1;
  for (int i = nd - 1; i > 0; i--) stride[i - 1] = stride[i] * vd->mem.count[i];
  for (int i = 0; i < nd; i++)
    if (vd->tile.count[i] == 0) return;
  for (int i = 0; i < nd - 1; i++) rows *= vd->tile.count[i];
  int64_t len = vd->tile.count[nd - 1];
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0;
    for (int i = 0; i < nd; i++) off += (vd->tile.start[i] - vd->mem.start[i] + idx[i]) * stride[i];
    fn(arg, off, r * len, len);
    for (int i = nd - 2; i >= 0 && ++idx[i] == vd->tile.count[i]; i--) idx[i] = 0;
  }
}

static int64_t tile_elems(const tsr_decomp *vd) {
  if (vd->tiles.flat) return vd->my_elems;
  int64_t n = 1;
  for (int i = 0; i < vd->ndims; i++) n *= vd->tile.count[i];
  return n;
}

/* ---- streams ------------------------------------------------------------ */

static tsr__reducer *reducer(tsr_ctx *ctx) {
  if (!ctx->reduce) ctx->reduce = calloc(1, sizeof(tsr__reducer));
  return ctx->reduce;
}

/* Two files belong to one stream when the same hint group (glob) gave them
 * the same reduce= and reduce_prefix=. */
static tsr__rstream *find_stream(tsr__reducer *r, const tsr__hints *h) {
  for (tsr__rstream *s = r->streams; s; s = s->next)
    if (memcmp(&s->spec, &h->reduce, sizeof s->spec) == 0 && strcmp(s->prefix, h->reduce_prefix) == 0)
      return s;
  return NULL;
}

static void free_atts(tsr__rvar *v) {
  for (int i = 0; i < v->natts; i++) free(v->atts[i].values);
  free(v->atts);
  v->atts = NULL;
  v->natts = 0;
}

/* The definition of variable @p varid of @p sc into @p v (attributes
 * copied). Returns 0 or TSR_ENOMEM. */
static int copy_var(const tsr__schema *sc, int varid, tsr__rvar *v) {
  const tsr__var *src = &sc->vars[varid];
  free_atts(v);
  snprintf(v->name, sizeof v->name, "%s", src->name);
  v->type = src->type;
  v->ndims = src->ndims;
  for (int i = 0; i < src->ndims; i++) v->dims[i] = sc->dims[src->dimids[i]];
  v->atts = calloc((size_t)src->natts + 1, sizeof *v->atts);
  if (!v->atts) return TSR_ENOMEM;
  for (int i = 0; i < src->natts; i++) {
    const tsr__att *a = &src->atts[i];
    size_t bytes = a->n * tsr__type_size(a->type);
    v->atts[i] = *a;
    v->atts[i].values = malloc(bytes ? bytes : 1);
    if (!v->atts[i].values) return TSR_ENOMEM;
    memcpy(v->atts[i].values, a->values, bytes);
    v->natts = i + 1;
  }
  return 0;
}

static int same_shape(const tsr__rvar *a, const tsr__rvar *b) {
  if (a->ndims != b->ndims || a->type != b->type) return 0;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i].len != b->dims[i].len) return 0;
  return 1;
}

static int refuse(tsr_file *f, int code, const char *fmt, const char *a, const char *b) {
  f->berr.code = 0;
  /* A long spec may be cut short; the sentence still names it first. */
  if (snprintf(f->berr.message, sizeof f->berr.message, fmt, a, b) < 0) f->berr.message[0] = '\0';
  return code;
}

/* The schema's checks, the same on every rank (the schema was agreed). */
static int check_schema(tsr_file *f, char *spec) {
  const tsr__reduce *r = &f->hints.reduce;
  for (int i = 0; i < r->n; i++) {
    const char *name = r->item[i].var;
    int v = tsr__schema_find_var(&f->schema, name);
    char what[TSR_MAX_NAME + 64];
    snprintf(what, sizeof what, "%s", name);
    if (v < 0)
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': the file has no variable '%s'", spec, what);
    if (f->schema.vars[v].type == TSR_CHAR)
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': variable '%s' is text (char), not a number",
                    spec, what);
    if (!f->schema.vars[v].is_record)
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': variable '%s' has no record dimension, so "
                    "no frames to reduce over", spec, what);
  }
  return 0;
}

static tsr__rstream *new_stream(tsr__reducer *r, const tsr__hints *h) {
  tsr__rstream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->spec = h->reduce;
  snprintf(s->prefix, sizeof s->prefix, "%s", h->reduce_prefix);
  s->nitems = h->reduce.n;
  for (int i = 0; i < s->nitems; i++) {
    const tsr__reduce_item *it = &h->reduce.item[i];
    int v = 0;
    while (v < s->nvars && strcmp(s->vars[v].name, it->var) != 0) v++;
    if (v == s->nvars) snprintf(s->vars[s->nvars++].name, TSR_MAX_NAME, "%s", it->var);
    s->items[i].op = it->op;
    s->items[i].var = v;
    s->items[i].n = -1;
    s->items[i].last_file = -1;
  }
  s->sid = r->nstreams++;
  s->next = r->streams;
  r->streams = s;
  return s;
}

/* GRIB2 keeps only the variables it has a parameter for (docs/grib2.md),
 * and a statistic over a period has none there: without this the derived
 * file of a GRIB2 stream would hold nothing. Its derived files are NetCDF
 * (the format hint's default, written by that format's default backend). */
static void derived_format(tsr__hints *h) {
  int grib2 = -1;
  for (const tsr__choice *c = tsr__format_choices; c->text; c++)
    if (strcmp(c->text, "grib2") == 0) grib2 = c->value;
  if (h->format != grib2) return;
  tsr__hints plain;
  tsr__hints_defaults(&plain);
  h->format = plain.format;
  h->backend[0] = '\0';
  h->set &= ~(TSR__H_FORMAT | TSR__H_BACKEND);
}

/* This file's definitions into the stream: the first file's start it, a
 * later file's must have the same shapes (accumulators are per element). */
static int take_schema(tsr_file *f, tsr__rstream *s, const char *spec) {
  for (int v = 0; v < s->nvars; v++) {
    int id = tsr__schema_find_var(&f->schema, s->vars[v].name);
    tsr__rvar now = {0};
    if (copy_var(&f->schema, id, &now)) {
      free_atts(&now);
      return TSR_ENOMEM;
    }
    if (s->vars[v].ndims && !same_shape(&s->vars[v], &now)) {
      free_atts(&now);
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': variable '%s' has another type or shape than "
                    "in the stream's earlier files (give each domain a hint group of its own)",
                    spec, s->vars[v].name);
    }
    free_atts(&s->vars[v]);
    s->vars[v] = now;
    s->varid[v] = id;
  }
  int t = tsr__schema_find_var(&f->schema, "Times");
  s->has_times = t >= 0 && f->schema.vars[t].type == TSR_CHAR && f->schema.vars[t].is_record;
  s->times_varid = s->has_times ? t : -1;
  if (s->has_times && copy_var(&f->schema, t, &s->times)) return TSR_ENOMEM;
  s->hints = f->hints;
  memset(&s->hints.reduce, 0, sizeof s->hints.reduce);
  s->hints.set &= ~TSR__H_REDUCE;
  derived_format(&s->hints);
  return 0;
}

/* The writers that hold the accumulators learn the stream (and the side
 * file of the period it continues). */
static int send_def(tsr_file *f, const tsr__rstream *s) {
  tsr__rdef *def = calloc(1, sizeof *def);
  if (!def) return TSR_ENOMEM;
  def->sid = s->sid;
  def->nvars = s->nvars;
  def->nitems = s->nitems;
  for (int i = 0; i < s->nitems; i++) {
    def->item_op[i] = s->items[i].op;
    def->item_var[i] = s->items[i].var;
  }
  for (int v = 0; v < s->nvars; v++) {
    const tsr__rvar *rv = &s->vars[v];
    def->type[v] = rv->type;
    def->nd[v] = rv->ndims - 1; /* the record dimension is first */
    for (int d = 1; d < rv->ndims; d++) def->shape[v][d - 1] = rv->dims[d].len;
  }
  if (s->partial) snprintf(def->partial, sizeof def->partial, "%s", s->partial);
  int rc = f->strategy->reduce_ctl(f->ctx, TSR__RCTL_DEF, def, (int64_t)sizeof *def);
  free(def);
  return rc;
}

int tsr__reduce_enddef(tsr_file *f) {
  if (f->hints.reduce.n == 0) return 0;
  char spec[320];
  tsr__hint_reduce.format(&f->hints.reduce, spec, sizeof spec);
  int rc = check_schema(f, spec);
  tsr__reducer *r = rc ? NULL : reducer(f->ctx);
  if (!rc && !r) rc = TSR_ENOMEM;
  tsr__rstream *s = r ? find_stream(r, &f->hints) : NULL;
  int fresh = r && !s, held = f->strategy->reduce_put != NULL;
  /* A stream's number is its place in the servers' tag space. */
  if (!rc && fresh && held && r->nstreams >= TSR__REDUCE_HELD_STREAMS) {
    char limit[16];
    snprintf(limit, sizeof limit, "%d", TSR__REDUCE_HELD_STREAMS);
    rc = refuse(f, TSR_EHINT, "hint 'reduce=%s': the I/O servers hold at most %s reduce= "
                "streams (distinct reduce= and reduce_prefix values) in one context", spec, limit);
  }
  if (!rc && fresh && !(s = new_stream(r, &f->hints))) rc = TSR_ENOMEM;
  if (!rc && fresh) s->held = held;
  if (!rc) rc = take_schema(f, s, spec);
  rc = tsr__file_agree(f, rc);
  /* The first file of the stream in this job may continue a period an
   * earlier job left (core/reduce_partial.c). */
  if (!rc && fresh && s->spec.period > 0) {
    char msg[sizeof f->berr.message] = "";
    rc = tsr__reduce_partial_load(f->ctx, s, f->path, msg, sizeof msg);
    if (rc) snprintf(f->berr.message, sizeof f->berr.message, "%s", msg);
  }
  if (!rc && fresh && s->held) rc = tsr__file_agree(f, send_def(f, s));
  if (rc) return rc;
  f->reduce = s;
  s->file_serial = ++r->files;
  return 0;
}

/* ---- puts ---------------------------------------------------------------- */

static void tile_of(const tsr_decomp *vd, tsr__box *b, int *flat) {
  memset(b, 0, sizeof *b);
  *flat = vd->tiles.flat;
  if (*flat) b->count[0] = vd->my_elems;
  else *b = vd->tile;
}

int tsr__reduce_put_check(tsr_file *f, int varid, int64_t frame, const tsr_decomp *vd) {
  tsr__rstream *s = f->reduce;
  if (!s) return 0;
  char spec[320];
  for (int i = 0; i < s->nitems; i++) {
    tsr__racc *a = &s->items[i];
    if (s->varid[a->var] != varid) continue;
    const char *name = s->vars[a->var].name;
    tsr__hint_reduce.format(&s->spec, spec, sizeof spec);
    tsr__box b;
    int flat;
    tile_of(vd, &b, &flat);
    if (a->n < 0 && s->held) { /* the writers hold it: the tile is kept to check */
      a->tile = b;
      a->flat = flat;
      a->n = tile_elems(vd);
    } else if (a->n < 0) {
      a->tile = b;
      a->flat = flat;
      if (tsr__racc_alloc(f->ctx, a, s->vars[a->var].type, tile_elems(vd))) {
        tsr__memory_room room;
        tsr__memory_room_get(&room);
        f->berr.code = 0;
        if (snprintf(f->berr.message, sizeof f->berr.message, "hint 'reduce=%s': the "
                     "accumulators of '%s' (%lld bytes on this rank) do not fit in what this "
                     "process may allocate (%lld bytes, %s)", spec, name,
                     (long long)(tsr__racc_elem_bytes(a->op, s->vars[a->var].type) * tile_elems(vd)),
                     (long long)room.bytes, room.what) < 0)
          f->berr.message[0] = '\0';
        return TSR_ENOMEM;
      }
    } else if (a->flat != flat || memcmp(&a->tile, &b, sizeof b) != 0) {
      return refuse(f, TSR_EDECOMP, "hint 'reduce=%s': this rank's tile of '%s' differs from the "
                    "one its accumulators hold (a stream keeps one decomposition for the whole "
                    "run, also across a restart)", spec, name);
    }
    if (a->last_file == s->file_serial && frame <= a->last_frame)
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': a frame of '%s' was put again or out of order "
                    "(each frame is reduced once, in order)", spec, name);
    if (s->spec.period > 0 && a->frames == s->spec.period)
      return refuse(f, TSR_EHINT, "hint 'reduce=%s': '%s' gets a frame past the end of its "
                    "period inside a file; a period must end with a file (make N a multiple "
                    "of the frames per file)", spec, name);
  }
  return 0;
}

typedef struct {
  tsr__racc *a;
  tsr_type type;
  const char *src;
  size_t esize;
  float *conv; /* double memory into a float variable: the row as (float)x */
} fold_arg;

static void fold_one_run(void *arg, int64_t mem_off, int64_t tile_off, int64_t n) {
  fold_arg *fa = arg;
  const void *x = fa->src + mem_off * (int64_t)fa->esize;
  if (fa->conv) { /* the values the file gets: each the C cast (float)x */
    for (int64_t i = 0; i < n; i++) fa->conv[i] = (float)((const double *)x)[i];
    x = fa->conv;
  }
  tsr__racc *a = fa->a;
  tsr__rfold v = {a->op, fa->type, a->sum, a->m2, a->ext};
  tsr__rfold_run(&v, a->frames, x, tile_off, n);
}

void tsr__reduce_tag(tsr_file *f, int varid) {
  tsr__rstream *s = f->reduce;
  memset(&f->rput, 0, sizeof f->rput);
  if (!s || !s->held) return;
  for (int v = 0; v < s->nvars; v++)
    if (s->varid[v] == varid) {
      int64_t frames = 0;
      for (int i = 0; i < s->nitems; i++)
        if (s->items[i].var == v) frames = s->items[i].frames;
      f->rput.sid = s->sid;
      f->rput.var = v + 1;
      f->rput.seq = s->vseq[v];
      f->rput.frame = frames;
    }
}

void tsr__reduce_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                     const tsr_decomp *vd, const void *vbuf, const void *buf, tsr_type memtype) {
  tsr__rstream *s = f->reduce;
  if (!s) return;
  for (int i = 0; i < s->nitems; i++) {
    tsr__racc *a = &s->items[i];
    if (s->varid[a->var] != varid) continue;
    tsr_type type = s->vars[a->var].type;
    if (s->held) goto counted; /* the writers fold it */
    if (!vbuf && d->canon &&
        tsr__decomp_pack(f, d, tsr__type_size(memtype), buf, &vbuf) != 0)
      return; /* cannot happen after put's own pack; nothing folded */
    if (!vbuf) vbuf = buf;
    fold_arg fa = {a, type, vbuf, tsr__type_size(memtype), NULL};
    if (memtype != type) {
      int64_t row = vd->tiles.flat || vd->ndims == 0 ? vd->my_elems : vd->tile.count[vd->ndims - 1];
      fa.conv = malloc((size_t)(row > 0 ? row : 1) * sizeof(float));
      if (!fa.conv) return;
    }
    if (a->op != TSR__RED_COUNT) tsr__reduce_walk(vd, fold_one_run, &fa);
    free(fa.conv);
  counted:
    a->frames++;
    a->last_file = s->file_serial;
    a->last_frame = frame;
    a->vd = vd;
    if (!s->first_path) {
      s->first_path = strdup(f->path);
      s->first_frame = frame;
    }
    if (!s->last_path || strcmp(s->last_path, f->path) != 0) {
      free(s->last_path);
      s->last_path = strdup(f->path);
    }
    s->last_frame = frame;
  }
  for (int v = 0; v < s->nvars; v++)
    if (s->varid[v] == varid) s->vseq[v]++;
}

void tsr__reduce_put_global(tsr_file *f, int varid, const void *buf) {
  tsr__rstream *s = f->reduce;
  if (!s || !s->has_times || varid != s->times_varid) return;
  int64_t n = tsr__var_frame_elems(&f->schema, varid);
  char *t = realloc(s->times_buf, (size_t)(n > 0 ? n : 1));
  if (!t) return;
  memcpy(t, buf, (size_t)n);
  s->times_buf = t;
  s->times_len = n;
}

/* ---- the end of a job ------------------------------------------------------- */

static void free_stream(tsr_ctx *ctx, tsr__rstream *s) {
  for (int i = 0; i < s->nitems; i++) {
    tsr__racc *a = &s->items[i];
    if (a->n > 0 && !s->held) ctx->stats.reduce_bytes -= tsr__racc_elem_bytes(a->op, s->vars[a->var].type) * a->n;
    free(a->sum), free(a->m2), free(a->ext);
  }
  for (int v = 0; v < s->nvars; v++) free_atts(&s->vars[v]);
  free_atts(&s->times);
  free(s->times_buf), free(s->first_path), free(s->last_path), free(s->partial);
  free(s);
}

int tsr__reduce_finalize(tsr_ctx *ctx, char *msg, size_t msglen) {
  tsr__reducer *r = ctx->reduce;
  if (!r) return 0;
  int rc = 0;
  for (tsr__rstream *s = r->streams, *next; s; s = next) {
    next = s->next;
    /* Streams are made in the same order on every rank, so every rank
     * saves the same ones. */
    if (s->first_path && s->spec.period > 0 && !rc && s->held)
      rc = tsr__reduce_partial_save_held(ctx, ctx->ranks_owner, s);
    else if (s->first_path && s->spec.period > 0 && !rc)
      rc = tsr__reduce_partial_save(ctx, s, msg, msglen);
    free_stream(ctx, s);
  }
  free(r);
  ctx->reduce = NULL;
  return rc;
}
