/* strategy=split (WRF io_form=102): every rank writes its own file,
 * `<path>.<rank as 4 digits>`, holding only its tile of each decomposed
 * variable. Dimensions keep their names but take the tile's extents; the
 * attributes tessera_global_shape / tessera_tile_start on each variable and
 * tessera_split_rank / tessera_split_nranks on the file are enough to join
 * the pieces. Replicated variables (tsr_put_global) appear whole in every
 * piece. A variable whose tile is empty on a rank is left out of its piece.
 * Dimensions appear in the file's order; one whose extent differs between
 * variables on a rank gets a `<name>_t<k>` twin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategy/strategy_common.h"

extern const tsr__read_ops tsr__split_read; /* split_read.c */

typedef struct {
  char *path;
  tsr__schema piece;
  int *piece_var; /* file varid -> piece varid, -1 when left out */
  tsr__sink sink; /* the piece, created with the piece's schema */
} split_state;

static int sp_want(const tsr__hints *h) {
  (void)h;
  return TSR__BACKEND_WANT_SERIAL;
}

/* Find or add the piece dimension for file dimension @p fd with extent @p len:
 * the first extent seen keeps the name, another extent gets `<name>_t<k>`. */
static int piece_dim(const tsr__schema *fs, tsr__schema *ps, int fd, int64_t len, int *out) {
  const tsr__dim *d = &fs->dims[fd];
  if (d->len == TSR_UNLIMITED) len = TSR_UNLIMITED;
  for (int k = 0;; k++) {
    char name[TSR_MAX_NAME + 16];
    if (k == 0) snprintf(name, sizeof name, "%s", d->name);
    else snprintf(name, sizeof name, "%s_t%d", d->name, k);
    if (strlen(name) >= TSR_MAX_NAME) return TSR_ENAME;
    int found = -1;
    for (int i = 0; i < ps->ndims; i++)
      if (strcmp(ps->dims[i].name, name) == 0) found = i;
    if (found >= 0 && ps->dims[found].len == len) {
      *out = found;
      return 0;
    }
    if (found < 0) return tsr__schema_add_dim(ps, name, len, out);
  }
}

static int copy_atts(tsr__schema *ps, int pv, const tsr__att *atts, int n) {
  int rc = 0;
  for (int a = 0; a < n && !rc; a++)
    rc = tsr__schema_put_att(ps, pv, atts[a].name, atts[a].type, atts[a].n, atts[a].values);
  return rc;
}

static int build_piece(tsr_file *f, split_state *s) {
  const tsr__schema *fs = &f->schema;
  tsr__schema *ps = &s->piece;
  tsr__schema_init(ps);
  ps->format = fs->format;
  s->piece_var = malloc((size_t)(fs->nvars ? fs->nvars : 1) * sizeof(int));
  if (!s->piece_var) return TSR_ENOMEM;
  /* Every dimension first, in the file's order, with the extent its first
   * decomposed user gives it here (else its global length): joined files
   * then keep the dimension order, and dimensions no variable uses. */
  int rc = 0;
  for (int fd = 0; fd < fs->ndims && !rc; fd++) {
    int64_t len = fs->dims[fd].len;
    for (int v = 0, found = 0; v < fs->nvars && !found; v++) {
      const tsr__var *var = &fs->vars[v];
      int rec = var->is_record ? 1 : 0;
      if (!var->decomp || var->decomp->my_elems == 0) continue;
      for (int i = rec; i < var->ndims && !found; i++)
        if (var->dimids[i] == fd) {
          len = var->decomp->tile.count[i - rec];
          found = 1;
        }
    }
    int id;
    rc = piece_dim(fs, ps, fd, len, &id);
  }
  for (int v = 0; v < fs->nvars && !rc; v++) {
    const tsr__var *var = &fs->vars[v];
    const tsr_decomp *d = var->decomp;
    s->piece_var[v] = -1;
    if (d && d->my_elems == 0) continue;
    int dimids[TSR_MAX_DIMS], rec = var->is_record ? 1 : 0;
    for (int i = 0; i < var->ndims && !rc; i++) {
      int fd = var->dimids[i];
      int64_t len = d && i >= rec ? d->tile.count[i - rec] : fs->dims[fd].len;
      rc = piece_dim(fs, ps, fd, len, &dimids[i]);
    }
    if (!rc) rc = tsr__schema_add_var(ps, var->name, var->type, var->ndims, dimids, &s->piece_var[v]);
    if (!rc) rc = copy_atts(ps, s->piece_var[v], var->atts, var->natts);
    if (!rc && d) {
      int gshape[TSR_MAX_DIMS], tstart[TSR_MAX_DIMS];
      for (int i = 0; i < d->ndims; i++) {
        gshape[i] = (int)d->gsize[i];
        tstart[i] = (int)d->tile.start[i];
      }
      rc = tsr__schema_put_att(ps, s->piece_var[v], "tessera_global_shape", TSR_INT,
                               (size_t)d->ndims, gshape);
      if (!rc)
        rc = tsr__schema_put_att(ps, s->piece_var[v], "tessera_tile_start", TSR_INT,
                                 (size_t)d->ndims, tstart);
    }
  }
  if (!rc) rc = copy_atts(ps, TSR_GLOBAL, fs->gatts, fs->ngatts);
  int r = f->ctx->rank, n = f->ctx->size;
  if (!rc) rc = tsr__schema_put_att(ps, TSR_GLOBAL, "tessera_split_rank", TSR_INT, 1, &r);
  if (!rc) rc = tsr__schema_put_att(ps, TSR_GLOBAL, "tessera_split_nranks", TSR_INT, 1, &n);
  return rc;
}

static int sp_enddef(tsr_file *f) {
  split_state *s = calloc(1, sizeof *s);
  if (!s) return TSR_ENOMEM;
  f->sdata = s;
  size_t len = strlen(f->path) + 16;
  s->path = malloc(len);
  if (!s->path) return TSR_ENOMEM;
  snprintf(s->path, len, "%s.%04d", f->path, f->ctx->rank);
  tsr__file_sink(f, &s->sink);
  int rc = build_piece(f, s);
  /* The sink keeps the piece's schema: write requests use its variable ids. */
  if (!rc) rc = tsr__sink_create(&s->sink, MPI_COMM_SELF, s->path, &s->piece);
  if (!rc) rc = tsr__file_created(f, &s->sink, NULL, f->ctx->size);
  return rc;
}

static int sp_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  split_state *s = f->sdata;
  const tsr_decomp *def = f->schema.vars[varid].decomp;
  if (!def) {
    snprintf(f->berr.message, sizeof f->berr.message,
             "split: variable %.64s has no decomposition; call tsr_def_var_decomp",
             f->schema.vars[varid].name);
    return TSR_ESHAPE;
  }
  for (int i = 0; i < d->ndims; i++) /* the piece is laid out for def's tile */
    if (d->tile.start[i] != def->tile.start[i] || d->tile.count[i] != def->tile.count[i])
      return TSR_ESHAPE;
  if (s->piece_var[varid] < 0) return 0;
  int64_t start[TSR_MAX_DIMS] = {0}, moff[TSR_MAX_DIMS];
  tsr__memview mem = tsr__decomp_tile_view(d, moff);
  /* put_mode=deferred: the piece's backend writes the caller's array at the
   * flush that ends the frame, so the agreement after this put waits for no
   * write (serial NetCDF; backend/netcdf.c). */
  mem.deferred = f->put_lent;
  return tsr__sink_write(&s->sink, s->piece_var[varid], frame, start, d->tile.count, buf, mem);
}

static int sp_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  split_state *s = f->sdata;
  if (s->piece_var[varid] < 0) return 0;
  /* Deferred like the tiles, so the piece is written in the puts' order: a
   * later frame's Times written first would extend the file, and NetCDF
   * would read back every page of the frames before it to write them. */
  return tsr__sink_write_whole(&s->sink, s->piece_var[varid], frame, buf, f->put_lent);
}

static int sp_flush(tsr_file *f) { return tsr__sink_flush(&((split_state *)f->sdata)->sink); }

static void sp_free(split_state *s) {
  tsr__schema_free(&s->piece);
  free(s->piece_var);
  free(s->path);
  free(s);
}

static int sp_close(tsr_file *f) { return tsr__sink_close(&((split_state *)f->sdata)->sink); }

/* Pieces of an earlier run with more ranks would sit beside the new ones and
 * look like part of them: rank 0 removes them when the new set is complete. */
static void remove_stale_pieces(const tsr_file *f) {
  size_t len = strlen(f->path) + 16;
  char *p = malloc(len);
  if (!p) return;
  for (int r = f->ctx->size;; r++) {
    snprintf(p, len, "%s.%04d", f->path, r);
    if (unlink(p) != 0) break;
  }
  free(p);
}

static int sp_finish(tsr_file *f, int ok) {
  split_state *s = f->sdata;
  int rc = tsr__sink_finish(&s->sink, ok);
  if (ok && f->ctx->rank == 0) remove_stale_pieces(f);
  sp_free(s);
  f->sdata = NULL;
  return rc;
}

static void sp_abort(tsr_file *f) {
  split_state *s = f->sdata;
  if (!s) return;
  tsr__sink_abort(&s->sink);
  sp_free(s);
  f->sdata = NULL;
}

const tsr__strategy_ops tsr__strategy_split = {
    .name = "split",
    .read = &tsr__split_read,
    .backend_want = sp_want,
    .file_per_rank = 1,
    .put_is_local = 1,
    .enddef = sp_enddef,
    .put = sp_put,
    .put_global = sp_put_global,
    .flush = sp_flush,
    .close = sp_close,
    .finish = sp_finish,
    .abort = sp_abort,
};
