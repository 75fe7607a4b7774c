/* strategy=auto: the API layer's part (contract in core/auto.h). A decision
 * is a candidate's hint text applied over the file's own hints, so the
 * registries and the strategies see an ordinary file; the bytes written are
 * the chosen strategy's, which every strategy keeps identical. Decisions
 * are taken from figures reduced over the ranks (one MPI_Allreduce per
 * closed file), so every rank takes the same one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auto.h"
#include "core/auto_state.h"
#include "api/api.h"
#include "strategy/strategy.h"

static int is_auto(const tsr__hints *h) {
  return tsr__strategy_is_auto(h->strategy, strlen(h->strategy));
}

/* One key per output stream: the path with its runs of digits as '#', so
 * wrfout_d01_2026-01-01_00:10:00 and the next output share one. */
static void stream_key(const char *path, char *key, size_t len) {
  size_t k = 0;
  for (const char *p = path; *p && k + 1 < len; p++) {
    if (*p >= '0' && *p <= '9') {
      key[k++] = '#';
      while (p[1] >= '0' && p[1] <= '9') p++;
    } else {
      key[k++] = *p;
    }
  }
  key[k] = '\0';
}

/* The candidates of this context: with ranks reserved for servers, their
 * knobs (the layout is the context's); frames of @p fb bytes (0: unknown). */
static int offers_of(const tsr_ctx *ctx, int64_t fb, tsr__auto_offer *offers) {
  int servers = ctx->ranks_owner != NULL;
  tsr__auto_case c = {.ranks = ctx->size, .frame_bytes = fb,
                      .io_groups = servers ? ctx->hints.io_groups : 0,
                      .io_tasks = servers ? ctx->hints.io_tasks : 0};
  return tsr__auto_candidates(&c, offers, TSR__AUTO_MAXC, NULL);
}

/* Collective (every rank settles the same file): the profile, once per
 * context; rank 0 reads it and every rank parses the same bytes. */
static void load_profile(tsr_ctx *ctx) {
  tsr__auto_ctx *a = ctx->autos;
  if (a->profile_state) return;
  char note[TSR__AUTO_WHY];
  a->profile_state = tsr__cost_profile_load(ctx->comm, &a->profile, note, sizeof note) < 0 ? -1 : 1;
  if (a->profile_state < 0) snprintf(a->ranking, sizeof a->ranking, "fixed constants (%.200s)", note);
  else snprintf(a->ranking, sizeof a->ranking, "the cost model (profile %.60s)", a->profile.name);
}

/* The ranking of a stream's first file: the cost model's on the file's
 * schema when there is a profile and no servers (else the fixed
 * constants'), the predictions copied onto the stream's candidates (a
 * stream from the state file keeps its windows). Collective. */
static void rank_first(tsr_file *f, tsr__auto_stream *s) {
  tsr_ctx *ctx = f->ctx;
  int servers = ctx->ranks_owner != NULL, by_model = 0;
  if (!servers) load_profile(ctx);
  const tsr__auto_ctx *a = ctx->autos;
  tsr__auto_case c = {.ranks = ctx->size, .frame_bytes = s->frame_bytes,
                      .io_groups = servers ? ctx->hints.io_groups : 0,
                      .io_tasks = servers ? ctx->hints.io_tasks : 0,
                      .schema = &f->schema, .profile = a->profile_state > 0 ? &a->profile : NULL,
                      .slab_bytes = f->autof->base.slab_bytes,
                      .buffer_bytes = f->autof->base.buffer_bytes,
                      .interval_s = a->compute_agreed};
  tsr__auto_offer offers[TSR__AUTO_MAXC];
  int n = tsr__auto_candidates(&c, offers, TSR__AUTO_MAXC, &by_model);
  for (int i = 0; i < s->ncand; i++)
    for (int j = 0; j < n; j++)
      if (strcmp(s->c[i].hints, offers[j].hints) == 0) s->c[i].predicted_s = offers[j].predicted_s;
  /* A new stream explores in the order of these predictions (a stream
   * from the state file keeps its order: its incumbent is an index). */
  int measured = s->incumbent >= 0;
  for (int i = 0; i < s->ncand; i++) measured |= s->c[i].nwin > 0;
  for (int i = 1; i < s->ncand && !measured; i++)
    for (int j = i; j > 0 && s->c[j - 1].predicted_s > s->c[j].predicted_s; j--) {
      tsr__auto_cand t = s->c[j];
      s->c[j] = s->c[j - 1];
      s->c[j - 1] = t;
    }
  s->modelled = by_model;
  if (by_model || a->profile_state < 0) snprintf(s->ranking, sizeof s->ranking, "%s", a->ranking);
  else if (servers) snprintf(s->ranking, sizeof s->ranking, "fixed constants (servers' knobs)");
  else snprintf(s->ranking, sizeof s->ranking, "fixed constants (no variable is tiled)");
}

/* A stream learned with other candidates (a state file of a job without
 * servers, another build) is another case. */
static int same_candidates(const tsr__auto_stream *s, const tsr__auto_offer *o, int n) {
  if (s->ncand != n) return 0;
  for (int i = 0; i < s->ncand; i++) {
    int found = 0;
    for (int j = 0; j < n && !found; j++) found = strcmp(s->c[i].hints, o[j].hints) == 0;
    if (!found) return 0;
  }
  return 1;
}

static tsr__auto_stream *find(const tsr_ctx *ctx, const char *key, int64_t fb) {
  tsr__auto_offer offers[TSR__AUTO_MAXC];
  int n = offers_of(ctx, fb > 0 ? fb : 0, offers);
  for (tsr__auto_stream *s = ctx->autos->streams; s; s = s->next)
    if (s->ranks == ctx->size && strcmp(s->key, key) == 0 && (fb < 0 || s->frame_bytes == fb) &&
        same_candidates(s, offers, n))
      return s;
  return NULL;
}

/* The file's hints, then the candidate's. The candidate's text comes from
 * the registry of strategies, so it parses. */
static int apply(tsr_file *f, const char *cand) {
  tsr__auto_file *af = f->autof;
  f->hints = af->base;
  snprintf(af->applied, sizeof af->applied, "%s", cand);
  char err[256];
  return tsr__hints_parse(cand, f->path, &f->hints, err, sizeof err) ? TSR_EHINT : 0;
}

int tsr__auto_begin(tsr_file *f) {
  if (!is_auto(&f->hints)) return 0;
  tsr_ctx *ctx = f->ctx;
  if (!ctx->autos && !(ctx->autos = calloc(1, sizeof *ctx->autos))) return TSR_ENOMEM;
  if (!(f->autof = calloc(1, sizeof *f->autof))) return TSR_ENOMEM;
  f->autof->base = f->hints;
  char key[256];
  stream_key(f->path, key, sizeof key);
  tsr__auto_stream *s = find(ctx, key, -1);
  f->autof->known = s;
  if (s) return apply(f, s->c[s->current].hints);
  tsr__auto_offer offers[TSR__AUTO_MAXC];
  return apply(f, offers_of(ctx, 0, offers) ? offers[0].hints : "");
}

static int64_t frame_bytes(const tsr__schema *sc) {
  int64_t b = 0;
  for (int v = 0; v < sc->nvars; v++)
    b += tsr__var_frame_elems(sc, v) * (int64_t)tsr__type_size(sc->vars[v].type);
  return b;
}

static tsr__auto_stream *new_stream(tsr_ctx *ctx, const char *key, int64_t fb) {
  tsr__auto_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  snprintf(s->key, sizeof s->key, "%s", key);
  s->ranks = ctx->size;
  s->frame_bytes = fb;
  s->incumbent = -1;
  tsr__auto_offer offers[TSR__AUTO_MAXC];
  int n = offers_of(ctx, fb, offers);
  for (int i = 0; i < n; i++) tsr__auto_add(s, offers[i].hints, offers[i].predicted_s);
  s->next = ctx->autos->streams;
  ctx->autos->streams = s;
  return s;
}

int tsr__auto_settle(tsr_file *f) {
  tsr__auto_file *af = f->autof;
  if (!af || af->s) return 0;
  char key[256];
  stream_key(f->path, key, sizeof key);
  int64_t fb = frame_bytes(&f->schema);
  /* A stream seen before in this job, one the state file knows, or new. */
  tsr__auto_stream *s = find(f->ctx, key, fb);
  if (!s) s = new_stream(f->ctx, key, fb);
  if (!s) return 0; /* out of memory: the provisional choice stays */
  if (!s->why[0]) { /* its first decision */
    rank_first(f, s);
    tsr__auto_start(s);
  }
  af->s = s;
  snprintf(af->rec.why, sizeof af->rec.why, "%s", s->why);
  if (strcmp(af->applied, s->c[s->current].hints) == 0) return 0;
  apply(f, s->c[s->current].hints);
  return 1;
}

int tsr__auto_fallback(tsr_file *f, int rc, const char *why) {
  tsr__auto_file *af = f->autof;
  if (!af) return rc;
  char msg[TSR__AUTO_WHY];
  snprintf(msg, sizeof msg, "%s: %s", tsr_errname(rc), why && why[0] ? why : tsr_strerror(rc));
  /* At tsr_create the frame size is not known yet; a stream of this path
   * seen before gave the choice: it learns the failure (a hint that rules a
   * candidate out does so whatever the frame size). */
  tsr__auto_stream *s = af->s ? af->s : af->known;
  if (!s) { /* a new stream: the ranking's next */
    tsr__auto_offer offers[TSR__AUTO_MAXC];
    int n = offers_of(f->ctx, 0, offers);
    if (++af->provisional >= n) return rc;
    snprintf(af->rec.fallback, sizeof af->rec.fallback, "fallback: %.80s failed (%.130s)", af->applied,
             msg);
    apply(f, offers[af->provisional].hints);
    return 0;
  }
  if (tsr__auto_fail(s, msg)) return rc;
  snprintf(af->rec.fallback, sizeof af->rec.fallback, "%s", s->why);
  snprintf(af->rec.why, sizeof af->rec.why, "%s", s->why);
  apply(f, s->c[s->current].hints);
  return 0;
}

void tsr__auto_closed(tsr_file *f, int rc) {
  tsr__auto_file *af = f->autof;
  if (!af || !af->s) return;
  tsr__auto_stream *s = af->s;
  tsr__auto_ctx *a = f->ctx->autos;
  double compute = a->prev_first_put > 0 && f->st.first_put > a->prev_first_put
                       ? (f->st.first_put - a->prev_first_put) -
                             (f->st.blocked_before - a->prev_blocked)
                       : 0.0;
  if (compute < 0) compute = 0;
  if (f->st.first_put > 0) a->prev_first_put = f->st.first_put, a->prev_blocked = f->st.blocked_before;
  /* The one reduction: every rank decides on the slowest rank's figures. */
  double x[3] = {f->st.blocked_s, compute, rc ? 1.0 : 0.0}, y[3] = {0, 0, 0};
  if (MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_MAX, f->ctx->comm) != MPI_SUCCESS) return;
  tsr__auto_record *r = &af->rec;
  tsr__auto_cand *c = &s->c[s->current];
  r->on = 1;
  r->index = s->files;
  snprintf(r->choice, sizeof r->choice, "%s", c->hints);
  r->predicted_s = c->nwin ? tsr__auto_median(c) : c->predicted_s;
  r->measured_s = y[0];
  r->compute_s = y[1];
  if (y[1] > 0.0) a->compute_agreed = y[1];
  if (y[2] > 0.0) {
    char why[TSR__AUTO_WHY];
    snprintf(why, sizeof why, "the file failed: %s", tsr_errname(rc ? rc : TSR_EIO));
    s->files++;
    tsr__auto_fail(s, why);
  } else {
    r->switched = tsr__auto_next(s, y[0], y[1]);
  }
  snprintf(r->next, sizeof r->next, "%s", s->c[s->current].hints);
  snprintf(r->next_why, sizeof r->next_why, "%s", s->why);
}

void tsr__auto_file_free(tsr_file *f) {
  free(f->autof);
  f->autof = NULL;
}

void tsr__auto_ctx_load(tsr_ctx *ctx) {
  const char *path = getenv("TESSERA_AUTO_STATE");
  if (!path || !path[0]) return;
  tsr__auto_stream *list = NULL;
  tsr__auto_state_load(ctx->comm, path, &list); /* collective: before anything may fail */
  if ((ctx->autos = calloc(1, sizeof *ctx->autos))) ctx->autos->streams = list;
  else tsr__auto_streams_free(&list);
}

void tsr__auto_ctx_finish(tsr_ctx *ctx) {
  if (!ctx->autos) return;
  const char *path = getenv("TESSERA_AUTO_STATE");
  if (path && path[0]) tsr__auto_state_save(ctx->rank, path, ctx->autos->streams);
  tsr__auto_streams_free(&ctx->autos->streams);
  free(ctx->autos);
  ctx->autos = NULL;
}
