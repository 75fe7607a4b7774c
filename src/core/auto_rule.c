/* strategy=auto's explore/exploit rule (contract in core/auto_rule.h, the
 * rule in words in docs/auto.md). Every figure it reads was reduced over the
 * ranks before, so each rank computes the same decision without another
 * message. */
#include <stdio.h>
#include <string.h>

#include "core/auto_rule.h"

static int sorted_copy(const tsr__auto_cand *c, double v[TSR__AUTO_WIN]) {
  int n = c->nwin;
  memcpy(v, c->win, sizeof c->win);
  for (int i = 1; i < n; i++) /* insertion sort of at most four values */
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n;
}

double tsr__auto_median(const tsr__auto_cand *c) {
  double v[TSR__AUTO_WIN];
  int n = sorted_copy(c, v);
  if (n == 0) return 0.0;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double tsr__auto_spread(const tsr__auto_cand *c) {
  double v[TSR__AUTO_WIN];
  int n = sorted_copy(c, v);
  if (n == 0) return 0.0;
  double half = 0.5 * (v[n - 1] - v[0]), floor = TSR__AUTO_NOISE * tsr__auto_median(c);
  return half > floor ? half : floor;
}

void tsr__auto_add(tsr__auto_stream *s, const char *hints, double predicted_s) {
  if (s->ncand >= TSR__AUTO_MAXC) return;
  tsr__auto_cand *c = &s->c[s->ncand++];
  memset(c, 0, sizeof *c);
  snprintf(c->hints, sizeof c->hints, "%s", hints);
  c->predicted_s = predicted_s;
  c->last_try = -1;
}

static void push(tsr__auto_cand *c, double v) {
  c->win[c->head] = v;
  c->head = (c->head + 1) % TSR__AUTO_WIN;
  if (c->nwin < TSR__AUTO_WIN) c->nwin++;
}

/* The usable candidate with the lowest median among those measured; -1. */
static int best(const tsr__auto_stream *s, int except) {
  int b = -1;
  for (int i = 0; i < s->ncand; i++) {
    if (i == except || s->c[i].failed || !s->c[i].nwin) continue;
    if (b < 0 || tsr__auto_median(&s->c[i]) < tsr__auto_median(&s->c[b])) b = i;
  }
  return b;
}

static int untried(const tsr__auto_stream *s) {
  for (int i = 0; i < s->ncand; i++)
    if (!s->c[i].failed && !s->c[i].left_out && !s->c[i].nwin) return i;
  return -1;
}

/* The cost model's prediction is good enough to skip what it puts far
 * behind (an exploration file of one 3x behind costs more than it can
 * teach), not to choose among the close ones: those are measured. Returns
 * how many were left out. */
static int leave_out_far(tsr__auto_stream *s) {
  double top = -1.0;
  for (int i = 0; i < s->ncand; i++)
    if (!s->c[i].failed && (top < 0 || s->c[i].predicted_s < top)) top = s->c[i].predicted_s;
  int out = 0;
  for (int i = 0; i < s->ncand && top > 0; i++) {
    tsr__auto_cand *c = &s->c[i];
    if (c->failed || c->nwin || c->predicted_s <= TSR__AUTO_REACH * top) continue;
    c->left_out = 1;
    snprintf(c->why, sizeof c->why, "left out: predicted %.4f s, past %.0fx the best's %.4f s",
             c->predicted_s, TSR__AUTO_REACH, top);
    out++;
  }
  return out;
}

void tsr__auto_start(tsr__auto_stream *s) {
  int out = s->modelled ? leave_out_far(s) : 0;
  char left[96] = "";
  if (out)
    snprintf(left, sizeof left, "; %d left out (predicted past %.0fx the best)", out,
             TSR__AUTO_REACH);
  /* From the state file: the incumbent the last job kept (the switch rule
   * kept it within the spread of a lower median), else the best median. */
  if (s->incumbent < 0 || s->incumbent >= s->ncand || s->c[s->incumbent].failed ||
      !s->c[s->incumbent].nwin)
    s->incumbent = best(s, -1);
  if (s->incumbent >= 0) {
    s->current = s->incumbent;
    snprintf(s->why, sizeof s->why, "from the state file: median %.4f s over %d files%s",
             tsr__auto_median(&s->c[s->current]), s->c[s->current].nwin, left);
    return;
  }
  s->current = untried(s);
  if (s->current < 0) s->current = 0;
  snprintf(s->why, sizeof s->why, "first file: ranked 1 of %d by %.180s, predicted %.4f s%s",
           s->ncand, s->ranking[0] ? s->ranking : "predicted cost", s->c[s->current].predicted_s,
           left);
}

/* A new compute regime: what was measured before may no longer hold, so
 * every window but the newest sample's is dropped and exploring restarts,
 * among the candidates that were within TSR__AUTO_REACH of the best before
 * (an exploration file of one far behind costs more than it can teach):
 * returns 1 and the number left out in *@p out. */
static int new_regime(tsr__auto_stream *s, int just, double compute_s, int *out) {
  if (compute_s <= 0.0) return 0;
  if (s->compute_ref <= 0.0) {
    s->compute_ref = compute_s;
    return 0;
  }
  double r = compute_s / s->compute_ref, d = compute_s - s->compute_ref;
  /* Noise in a short interval is no new regime: the change must be large
   * in ratio and in seconds, and hold for two files in a row. */
  if ((r < TSR__AUTO_REGIME && r > 1.0 / TSR__AUTO_REGIME) ||
      (d < TSR__AUTO_REGIME_S && d > -TSR__AUTO_REGIME_S)) {
    s->regime_pending = 0;
    return 0;
  }
  if (!s->regime_pending++) return 0;
  s->regime_pending = 0;
  int b = best(s, -1);
  double reach = b >= 0 ? TSR__AUTO_REACH * tsr__auto_median(&s->c[b]) : 0.0;
  *out = 0;
  for (int i = 0; i < s->ncand; i++) {
    tsr__auto_cand *c = &s->c[i];
    c->left_out = i != just && !c->failed && (!c->nwin || tsr__auto_median(c) > reach);
    *out += c->left_out;
    if (i != just) c->nwin = c->head = 0;
  }
  /* The one kept is the file just closed, measured after the new interval. */
  double keep = s->c[just].win[(s->c[just].head + TSR__AUTO_WIN - 1) % TSR__AUTO_WIN];
  s->c[just].nwin = s->c[just].head = 0;
  push(&s->c[just], keep);
  s->compute_ref = compute_s;
  s->incumbent = -1;
  return 1;
}

int tsr__auto_next(tsr__auto_stream *s, double measured_s, double compute_s) {
  int k = s->current, was = s->incumbent;
  push(&s->c[k], measured_s);
  s->c[k].last_try = s->files++;
  char pre[160] = "";
  int out = 0;
  if (new_regime(s, k, compute_s, &out))
    snprintf(pre, sizeof pre,
             "compute interval now %.3f s: new regime (%d left out: past %.0fx the best before); ",
             compute_s, out, TSR__AUTO_REACH);
  int u = untried(s);
  if (u >= 0) { /* explore: every candidate once, in ranked order */
    s->current = u;
    snprintf(s->why, sizeof s->why, "%sexplore: untried candidate %d of %d (predicted %.4f s)",
             pre, u + 1, s->ncand, s->c[u].predicted_s);
    return 0;
  }
  int b = best(s, -1);
  if (b < 0) return 0; /* every candidate failed: tsr__auto_fail said so */
  int inc = s->incumbent;
  if (inc < 0 || s->c[inc].failed) {
    s->incumbent = b;
    snprintf(s->why, sizeof s->why, "%skeep: best median %.4f s of every candidate", pre,
             tsr__auto_median(&s->c[b]));
  } else if (b != inc && tsr__auto_median(&s->c[b]) + tsr__auto_spread(&s->c[b]) <
                             tsr__auto_median(&s->c[inc]) - tsr__auto_spread(&s->c[inc])) {
    s->incumbent = b;
    snprintf(s->why, sizeof s->why,
             "%sswitch: median %.4f s (spread %.4f) beats %.4f s (spread %.4f) of %s", pre,
             tsr__auto_median(&s->c[b]), tsr__auto_spread(&s->c[b]),
             tsr__auto_median(&s->c[inc]), tsr__auto_spread(&s->c[inc]), s->c[inc].hints);
  } else {
    snprintf(s->why, sizeof s->why, "%skeep: median %.4f s (spread %.4f, %d files)", pre,
             tsr__auto_median(&s->c[inc]), tsr__auto_spread(&s->c[inc]), s->c[inc].nwin);
  }
  inc = s->incumbent;
  s->current = inc;
  if (k != inc || s->incumbent != was) s->since_retry = 0;
  if (++s->since_retry <= TSR__AUTO_RETRY_EVERY || s->c[inc].nwin < 2) return s->incumbent != was;
  /* A runner-up close to the incumbent, the one tried longest ago: its
   * figures may be old, and the incumbent's keep coming in. One whose
   * window (2 files or more) lies apart from the incumbent's, spread and
   * all, has answered: no more tries of it in this regime. */
  int r = -1;
  const tsr__auto_cand *ic = &s->c[inc];
  double limit = tsr__auto_median(ic) * (1.0 + TSR__AUTO_CLOSE);
  double top = tsr__auto_median(ic) + tsr__auto_spread(ic);
  for (int i = 0; i < s->ncand; i++) {
    const tsr__auto_cand *c = &s->c[i];
    if (i == inc || c->failed || !c->nwin || tsr__auto_median(c) > limit) continue;
    if (c->nwin >= 2 && tsr__auto_median(c) - tsr__auto_spread(c) > top) continue;
    if (r < 0 || s->c[i].last_try < s->c[r].last_try) r = i;
  }
  if (r >= 0) {
    s->current = r;
    s->since_retry = 0;
    snprintf(s->why, sizeof s->why,
             "%sretry runner-up: median %.4f s within %.0f %% of the incumbent's %.4f s, last "
             "tried at file %d", pre, tsr__auto_median(&s->c[r]), 100.0 * TSR__AUTO_CLOSE,
             tsr__auto_median(&s->c[inc]), s->c[r].last_try);
  }
  return s->incumbent != was;
}

int tsr__auto_fail(tsr__auto_stream *s, const char *why) {
  tsr__auto_cand *c = &s->c[s->current];
  c->failed = 1;
  snprintf(c->why, sizeof c->why, "%s", why);
  int next = s->incumbent >= 0 && !s->c[s->incumbent].failed ? s->incumbent : untried(s);
  if (next < 0) next = best(s, -1);
  /* Far behind is better than a failed file: one left out takes over. */
  for (int i = 0; i < s->ncand && next < 0; i++)
    if (!s->c[i].failed && s->c[i].left_out) s->c[i].left_out = 0, next = i;
  if (next < 0) return -1;
  s->current = next;
  snprintf(s->why, sizeof s->why, "fallback: %.80s failed (%.130s)", c->hints, why);
  return 0;
}
