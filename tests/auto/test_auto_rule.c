/* strategy=auto's rule and state file on made-up figures (no MPI): the exact
 * decisions of core/auto_rule.c (explore each candidate once in ranked
 * order, keep the best median, re-try a runner-up every few files, switch
 * only past the spread, a new regime of compute re-explores, a failed
 * candidate falls back) and the state file's round trip. Usage:
 * test_auto_rule SCENARIO. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auto_rule.h"
#include "core/auto_state.h"

static int failures;
#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                                   \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)
#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    int a_ = (a), b_ = (b);                                                                        \
    if (a_ != b_) {                                                                                \
      fprintf(stderr, "%s:%d: %s == %s: %d != %d\n", __FILE__, __LINE__, #a, #b, a_, b_);          \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static void three(tsr__auto_stream *s) {
  memset(s, 0, sizeof *s);
  s->incumbent = -1;
  tsr__auto_add(s, "strategy=a", 1.0);
  tsr__auto_add(s, "strategy=b", 2.0);
  tsr__auto_add(s, "strategy=c", 3.0);
  tsr__auto_start(s);
}

/* Cost of each candidate per file, constant: the decisions are exact. */
static void explore_keep_retry(void) {
  tsr__auto_stream s;
  three(&s);
  const double cost[3] = {0.30, 0.10, 0.12};
  /* files 0-2 explore a, b, c; then b is kept; a runner-up (c, within
   * 50 %) is tried after 4 files on b; a (3x) never again; once c's two
   * files lie apart from b's (0.12 - 5 % > 0.10 + 5 %), c is not tried
   * again either. */
  const int want[] = {0, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
    CHECK_EQ(s.current, want[i]);
    tsr__auto_next(&s, cost[s.current], 1.0);
  }
  CHECK_EQ(s.incumbent, 1);
  CHECK(strstr(s.why, "keep") != NULL);
}

/* The costs change: b becomes slow; c, re-tried as the runner-up, wins by
 * more than the spread, and the switch is reported. */
static void switch_past_spread(void) {
  tsr__auto_stream s;
  three(&s);
  double cost[3] = {0.30, 0.10, 0.12};
  int switched = 0, first_on_c = -1;
  for (int i = 0; i < 30; i++) {
    if (i == 8) cost[1] = 0.20;
    if (tsr__auto_next(&s, cost[s.current], 1.0)) switched++;
    if (s.incumbent == 2 && first_on_c < 0) first_on_c = i;
  }
  CHECK_EQ(s.incumbent, 2);
  CHECK(first_on_c > 8 && first_on_c <= 8 + TSR__AUTO_RETRY_EVERY + 3);
  CHECK(switched >= 2); /* the first keep, then b -> c */
  /* Within the spread: no switch. */
  three(&s);
  double near[3] = {0.100, 0.101, 0.5};
  for (int i = 0; i < 20; i++) tsr__auto_next(&s, near[s.current], 1.0);
  CHECK_EQ(s.incumbent, 0);
}

/* The compute interval jumps (twice in a row, by more than 2x and 0.05 s):
 * everything is measured again, under the new regime. */
/* Eight files at 0.1 s of compute on @p cost: b is kept. */
static void settled(tsr__auto_stream *s, const double cost[3]) {
  three(s);
  for (int i = 0; i < 8; i++) tsr__auto_next(s, cost[s->current], 0.1);
  CHECK_EQ(s->incumbent, 1);
}

static void regime(void) {
  tsr__auto_stream s;
  double cost[3] = {0.25, 0.10, 0.12}, compute = 1.0;
  settled(&s, cost);
  cost[0] = 0.05;
  tsr__auto_next(&s, cost[s.current], compute); /* once: maybe noise */
  CHECK(s.incumbent == 1);
  tsr__auto_next(&s, cost[s.current], compute); /* twice: a new regime */
  CHECK(strstr(s.why, "new regime") != NULL);
  for (int i = 0; i < 4; i++) tsr__auto_next(&s, cost[s.current], compute);
  CHECK_EQ(s.incumbent, 0);
}

/* A new regime re-explores only the candidates within 3x of the best
 * before it: a (5x) is left out, c is explored again, and the reason says
 * how many were left out. */
static void regime_reach(void) {
  tsr__auto_stream s;
  double cost[3] = {0.50, 0.10, 0.12}, compute = 1.0;
  settled(&s, cost);
  CHECK_EQ(s.current, 1);
  tsr__auto_next(&s, cost[s.current], compute);
  tsr__auto_next(&s, cost[s.current], compute); /* a new regime, measured on b */
  CHECK(strstr(s.why, "new regime (1 left out: past 3x the best before); explore: untried "
                      "candidate 3 of 3") != NULL);
  CHECK_EQ(s.current, 2);
  CHECK(s.c[0].left_out && !s.c[2].left_out);
  for (int i = 0; i < 12; i++) {
    tsr__auto_next(&s, cost[s.current], compute);
    CHECK(s.current != 0);
  }
  CHECK_EQ(s.incumbent, 1);
}

static void fallback(void) {
  tsr__auto_stream s;
  three(&s);
  CHECK_EQ(s.current, 0);
  CHECK_EQ(tsr__auto_fail(&s, "TSR_EHINT: cannot"), 0);
  CHECK_EQ(s.current, 1);
  CHECK(s.c[0].failed && strstr(s.c[0].why, "cannot") != NULL);
  CHECK(strstr(s.why, "fallback: strategy=a failed") != NULL);
  for (int i = 0; i < 10; i++) {
    CHECK(s.current != 0); /* never again */
    tsr__auto_next(&s, 0.1, 1.0);
  }
  s.current = 1;
  CHECK_EQ(tsr__auto_fail(&s, "x"), 0);
  s.current = 2;
  CHECK_EQ(tsr__auto_fail(&s, "y"), -1); /* none left */
}

static void state_roundtrip(void) {
  tsr__auto_stream *list = calloc(1, sizeof *list);
  three(list);
  snprintf(list->key, sizeof list->key, "out dir/wrfout_d#_#-#-#_#:#:#");
  list->ranks = 4;
  list->frame_bytes = 123456789;
  double cost[3] = {0.30, 0.10, 0.12};
  for (int i = 0; i < 9; i++) tsr__auto_next(list, cost[list->current], 0.25);
  list->current = 0;
  tsr__auto_fail(list, "TSR_EHINT: a reason with spaces");
  char *text = tsr__auto_state_text(list);
  tsr__auto_stream *back = NULL;
  CHECK(text && tsr__auto_state_parse(text, &back) == 0);
  char *again = back ? tsr__auto_state_text(back) : NULL;
  CHECK(again && strcmp(text, again) == 0);
  if (back) {
    CHECK_EQ(back->ranks, 4);
    CHECK(back->frame_bytes == 123456789);
    CHECK_EQ(back->ncand, 3);
    CHECK(strcmp(back->key, list->key) == 0);
    CHECK(back->c[0].failed && strcmp(back->c[0].why, "TSR_EHINT: a reason with spaces") == 0);
    /* The next job starts from what was learned: b, the best median. */
    tsr__auto_start(back);
    CHECK_EQ(back->current, 1);
    CHECK(strstr(back->why, "state file") != NULL);
  }
  tsr__auto_stream *bad = NULL;
  CHECK(tsr__auto_state_parse("not a state\n", &bad) == -1 && bad == NULL);
  free(text);
  free(again);
  tsr__auto_streams_free(&back);
  tsr__auto_streams_free(&list);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } t[] = {{"explore_keep_retry", explore_keep_retry}, {"switch_past_spread", switch_past_spread},
           {"regime", regime}, {"regime_reach", regime_reach}, {"fallback", fallback},
           {"state_roundtrip", state_roundtrip}};
  int ran = 0;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (argc < 2 || strcmp(argv[1], t[i].name) == 0) {
      t[i].fn();
      ran++;
    }
  if (!ran) fprintf(stderr, "no scenario %s\n", argv[1]);
  return ran && !failures ? 0 : 1;
}
