/* strategy=auto's rule (docs/auto.md): the candidates of one output stream,
 * what was measured for each, and the explore/exploit decision taken after
 * every closed file. Pure arithmetic on agreed figures, no MPI and no hints:
 * every rank runs it on the same (reduced) numbers and so takes the same
 * decision, and tests/auto runs it on made-up figures. The API glue that
 * applies a decision to a file is core/auto.c; the state file is
 * core/auto_state.c. */
#ifndef TSR_CORE_AUTO_RULE_H
#define TSR_CORE_AUTO_RULE_H

#include <stdint.h>

#define TSR__AUTO_MAXC 8   /* candidates per stream */
#define TSR__AUTO_WIN 4    /* samples kept per candidate: the newest, so old regimes fade */
#define TSR__AUTO_HINTS 96 /* a candidate's hint text */
#define TSR__AUTO_WHY 240  /* a decision's reason */

/* The rule's parameters (docs/auto.md, "The rule"). */
#define TSR__AUTO_RETRY_EVERY 4 /* exploit files between two tries of a runner-up */
#define TSR__AUTO_CLOSE 0.5     /* a runner-up: median within 50 % of the incumbent's */
#define TSR__AUTO_NOISE 0.05    /* the least spread assumed: 5 % of the median */
#define TSR__AUTO_REGIME 2.0    /* compute interval ratio that starts a new regime, */
#define TSR__AUTO_REGIME_S 0.05 /* with at least this difference in seconds, two files in a row */
#define TSR__AUTO_REACH 3.0     /* a new regime re-explores the candidates within 3x of the old best */

typedef struct {
  char hints[TSR__AUTO_HINTS]; /* e.g. "strategy=aggregate:aggregators=2" */
  double predicted_s;          /* the first file's ranking (strategy/auto_candidates.c) */
  double win[TSR__AUTO_WIN];   /* measured seconds, a ring of the newest samples */
  int nwin, head;
  int last_try; /* the stream's file number of its last try; -1: never */
  int failed;   /* 1: never tried again in this job (why says why) */
  int left_out; /* 1: not explored in the present regime (far behind before it) */
  char why[TSR__AUTO_WHY];
} tsr__auto_cand;

typedef struct tsr__auto_stream {
  char key[256];       /* the path with its digits as '#': one key per output stream */
  int ranks;           /* model ranks */
  int64_t frame_bytes; /* bytes of one frame of the file's variables */
  int ncand;
  tsr__auto_cand c[TSR__AUTO_MAXC]; /* in the first ranking's order */
  int files;       /* files closed in this stream */
  int current;     /* the candidate of the file being written (or the next one) */
  int incumbent;   /* the kept choice; -1 while none */
  int since_retry; /* files on the incumbent since a runner-up was tried */
  double compute_ref; /* the compute interval of the present regime; 0: not known yet */
  int regime_pending; /* the last file's interval was off the regime's (one more starts a new one) */
  char why[TSR__AUTO_WHY]; /* why current was chosen */
  /* 1: the predictions are the cost model's, so the first exploration
   * leaves out the candidates predicted past TSR__AUTO_REACH of the best;
   * ranking says what ranked them ("the cost model, profile here", or the
   * fixed constants and why no profile). */
  int modelled;
  char ranking[TSR__AUTO_WHY];
  struct tsr__auto_stream *next;
} tsr__auto_stream;

/* What the statistics record of one file says about auto (docs/stats-format.md). */
typedef struct {
  int on;    /* the file was written with strategy=auto */
  int index; /* the file's number in its stream, from 0 */
  char choice[TSR__AUTO_HINTS], why[TSR__AUTO_WHY];
  char fallback[TSR__AUTO_WHY]; /* "" or why a candidate failed before this one was used */
  double predicted_s, measured_s, compute_s;
  char next[TSR__AUTO_HINTS], next_why[TSR__AUTO_WHY];
  int switched; /* the decision after this file changed the incumbent */
} tsr__auto_record;

/* Median and half-range of a candidate's samples (0 without any); the
 * spread is at least TSR__AUTO_NOISE of the median. */
double tsr__auto_median(const tsr__auto_cand *c);
double tsr__auto_spread(const tsr__auto_cand *c);
/* Append a candidate (the first ranking's order is the order of calls). */
void tsr__auto_add(tsr__auto_stream *s, const char *hints, double predicted_s);
/* The first decision of a stream: the incumbent learned before (state
 * file), else the first candidate in ranked order. With the cost model's
 * predictions (s->modelled), a candidate never measured whose prediction
 * lies past TSR__AUTO_REACH times the best's is left out of exploring (its
 * why says so) until a new regime. */
void tsr__auto_start(tsr__auto_stream *s);
/* A file of the stream closed on s->current, which measured @p measured_s
 * (max over ranks of its blocked time) after @p compute_s of compute (0:
 * unknown): record it and choose s->current for the next file, with s->why.
 * Returns 1 when the incumbent changed. */
int tsr__auto_next(tsr__auto_stream *s, double measured_s, double compute_s);
/* s->current failed (@p why): never again in this job; current becomes the
 * incumbent or the next untried candidate. Returns 0, or -1 when every
 * candidate failed. */
int tsr__auto_fail(tsr__auto_stream *s, const char *why);

#endif
