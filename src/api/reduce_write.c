/* reduce=: the derived files (core/reduce.h): when a period ends with a
 * source file, its statistics are written through the ordinary API with the
 * source's hints less reduce=, so every strategy, the servers and staging
 * write them as they write the source. Apart from core/reduce.c, which
 * tsr_put calls: this file calls the file API, which must not call back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/reduce.h"
#include "api/reduce_state.h"
#include "core/reduce_fold.h"
#include "strategy/strategy.h"

static tsr_type out_type(int op, tsr_type type) { return tsr__rfold_out_type(op, type); }

/* Elements of memory a buffer laid out as @p vd describes holds. */
static int64_t mem_elems(const tsr_decomp *vd) {
  if (vd->tiles.flat) return vd->my_elems;
  int64_t n = 1;
  for (int i = 0; i < vd->ndims; i++) n *= vd->mem.count[i];
  return n;
}

/* A dimension of @p v in the derived file, defined on first use. */
static int dim_of(tsr_file *df, const tsr__dim *d, int *id) {
  int n = df->schema.ndims;
  for (int i = 0; i < n; i++)
    if (strcmp(df->schema.dims[i].name, d->name) == 0) {
      *id = i;
      return 0;
    }
  return tsr_def_dim(df, d->name, d->len, id);
}

static int def_like(tsr_file *df, const tsr__rvar *v, const char *name, tsr_type type, int *id) {
  int dims[TSR_MAX_DIMS];
  for (int i = 0; i < v->ndims; i++) {
    int rc = dim_of(df, &v->dims[i], &dims[i]);
    if (rc) return rc;
  }
  return tsr_def_var(df, name, type, v->ndims, dims, id);
}

static void put_text(tsr_file *df, int id, const char *name, const char *text) {
  tsr_put_att(df, id, name, TSR_CHAR, strlen(text), text);
}

/* The derived variable of item @p a: the source's dimensions and
 * attributes (those of a value only where the type is the source's), and
 * CF cell_methods over the record dimension. */
static int def_item(tsr_file *df, const tsr__rstream *s, const tsr__racc *a, int *id) {
  const tsr__rvar *v = &s->vars[a->var];
  char name[TSR_MAX_NAME + 8], cm[TSR_MAX_NAME + 32];
  snprintf(name, sizeof name, "%s%s", v->name, tsr__reduce_op_suffix(a->op));
  tsr_type ot = out_type(a->op, v->type);
  int rc = def_like(df, v, name, ot, id);
  if (rc) return rc;
  for (int i = 0; !rc && i < v->natts; i++) {
    const tsr__att *at = &v->atts[i];
    int numeric = at->type != TSR_CHAR;
    if (numeric && (ot != v->type || strcmp(at->name, "tessera_crc32") == 0)) continue;
    if (a->op == TSR__RED_COUNT && strcmp(at->name, "units") == 0) continue;
    rc = tsr_put_att(df, *id, at->name, at->type, at->n, at->values);
  }
  snprintf(cm, sizeof cm, "%s: %s", v->dims[0].name, tsr__reduce_op_cf(a->op));
  put_text(df, *id, "cell_methods", cm);
  return rc;
}

typedef struct {
  const tsr__racc *a;
  tsr_type type;
  char *out;
  size_t esize;
} result_arg;

static void result_one_run(void *arg, int64_t mem_off, int64_t tile_off, int64_t n) {
  result_arg *ra = arg;
  const tsr__racc *a = ra->a;
  tsr__rfold v = {a->op, ra->type, a->sum, a->m2, a->ext};
  tsr__rfold_result(&v, a->frames, ra->out + mem_off * (int64_t)ra->esize, tile_off, n);
}

/* Item @p a's statistics laid out as its decomposition's memory, halo zero. */
static int put_item(tsr_file *df, const tsr__rstream *s, const tsr__racc *a, int id) {
  if (s->held) /* the writers hold the accumulators: they write it */
    return tsr__file_agree(df, df->strategy->reduce_put(df, id, s->sid, (int)(a - s->items),
                                                        s->vseq[a->var], a->frames));
  tsr_type type = s->vars[a->var].type;
  size_t es = tsr__type_size(out_type(a->op, type));
  int64_t m = a->n > 0 ? mem_elems(a->vd) : 0;
  char *buf = calloc((size_t)(m > 0 ? m : 1), es);
  int rc = buf ? 0 : TSR_ENOMEM;
  result_arg ra = {a, type, buf, es};
  if (buf && a->n > 0) tsr__reduce_walk(a->vd, result_one_run, &ra);
  /* Put agrees, so a rank out of memory makes every rank's put fail. */
  int prc = tsr_put(df, id, 0, a->vd, rc ? NULL : buf);
  free(buf);
  return rc ? rc : prc;
}

/* Forget the period: the next frame starts the next one. */
static void reset_period(tsr__rstream *s) {
  for (int i = 0; i < s->nitems; i++) s->items[i].frames = 0;
  free(s->first_path);
  s->first_path = NULL;
}

/* "frames 0 to 5 of the stream ... from FILE frame F to FILE frame G". */
static void describe_source(const tsr__rstream *s, int64_t frames, char *out, size_t cap) {
  char spec[320];
  tsr__hint_reduce.format(&s->spec, spec, sizeof spec);
  /* Base names: the derived file lies beside its sources, and the same
   * output in another directory gives the same bytes. */
  const char *a = strrchr(s->first_path, '/'), *b = strrchr(s->last_path, '/');
  snprintf(out, cap, "reduce=%s over %lld frames: from %s frame %lld to %s frame %lld", spec,
           (long long)frames, a ? a + 1 : s->first_path, (long long)s->first_frame,
           b ? b + 1 : s->last_path, (long long)s->last_frame);
}

/* Write the derived file of the stream's current period, through the
 * ordinary API with the source's hints less reduce=: every strategy and the
 * servers write it as they write the source. Collective; agreed codes. */
static int write_derived(tsr_ctx *ctx, tsr__rstream *s, char *msg, size_t msglen) {
  char *path = tsr__reduce_derived_path(s->first_path, s->prefix);
  int rc = tsr__agree(ctx->comm, path ? 0 : TSR_ENOMEM);
  tsr_file *df = NULL;
  if (!rc) rc = tsr__create_with(ctx, path, &s->hints, &df);
  if (!rc) df->reduce_held = s->held;
  int ids[TSR__REDUCE_MAX], tid = -1;
  int64_t frames = 0;
  for (int i = 0; !rc && i < s->nitems; i++) {
    if (s->items[i].frames > frames) frames = s->items[i].frames;
    def_item(df, s, &s->items[i], &ids[i]);
    /* strategy=split lays each rank's file out for its tile at enddef: the
     * derived variable's tile is the one its accumulators hold. */
    if (df->strategy->file_per_rank) tsr_def_var_decomp(df, ids[i], s->items[i].vd);
  }
  if (!rc && s->has_times && s->times_buf) def_like(df, &s->times, "Times", TSR_CHAR, &tid);
  if (!rc) {
    char src[2048];
    describe_source(s, frames, src, sizeof src);
    put_text(df, TSR_GLOBAL, "tessera_reduce_source", src);
    rc = tsr_enddef(df);
  }
  for (int i = 0; !rc && i < s->nitems; i++) rc = put_item(df, s, &s->items[i], ids[i]);
  if (!rc && tid >= 0) rc = tsr_put_global(df, tid, 0, s->times_buf);
  if (df && rc) {
    if (snprintf(msg, msglen, "derived file '%s': %s", path,
                 df->berr.message[0] ? df->berr.message : tsr_strerror(rc)) < 0)
      msg[0] = '\0';
    tsr__file_abort(&df);
  }
  if (df) {
    rc = tsr__file_close(&df);
    if (rc) snprintf(msg, msglen, "derived file '%s': %s", path, tsr_last_error());
  }
  /* The writers that hold the accumulators remove it themselves, once
   * they wrote the period (their load may come after this). */
  if (!rc && s->partial && !s->held) { /* the side file this period came from is done with */
    if (ctx->rank == 0) remove(s->partial);
    free(s->partial);
    s->partial = NULL;
  }
  free(path);
  return rc;
}

int tsr__reduce_close(tsr_file *f, int ok) {
  tsr__rstream *s = f->reduce;
  if (!s || !s->first_path) return 0;
  int complete = 1;
  for (int i = 0; i < s->nitems; i++)
    complete &= s->spec.period ? s->items[i].frames == s->spec.period : s->items[i].frames > 0;
  if (!ok) { /* a period with frames of a file that never appeared is dropped */
    reset_period(s);
    return 0;
  }
  if (!complete) return 0;
  /* The outer tsr_close times the whole; the derived file's own calls
   * would count it twice. */
  double blocked = f->ctx->stats.blocked_s;
  char msg[sizeof f->berr.message] = "";
  int rc = write_derived(f->ctx, s, msg, sizeof msg);
  f->ctx->stats.blocked_s = blocked;
  reset_period(s);
  if (rc) snprintf(f->berr.message, sizeof f->berr.message, "%s", msg);
  return rc;
}
