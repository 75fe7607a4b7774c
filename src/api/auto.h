/* strategy=auto in the API layer (docs/auto.md): which candidate a file is
 * written with, applied as hints before the registries choose, and what the
 * stream learns when the file closes. The rule itself is core/auto_rule.c,
 * the candidates strategy/auto_candidates.c, the state file core/auto_state.c. */
#ifndef TSR_CORE_AUTO_H
#define TSR_CORE_AUTO_H

#include "core/auto_rule.h"
#include "core/cost_profile.h"
#include "core/hints.h"

struct tsr_file;
struct tsr_ctx;

/* What a context knows of its streams. */
typedef struct tsr__auto_ctx {
  tsr__auto_stream *streams;
  /* The previous file's first put and the context's blocked time then: the
   * compute interval is the time between two files' first puts less the
   * time blocked in Tessera in between (a model closes a history file when
   * it opens the next, as WRF does, so a close does not end the compute). */
  double prev_first_put, prev_blocked;
  /* The last compute interval agreed at a close (any stream): the cost
   * model's input for a new stream's first file; 0 before any. */
  double compute_agreed;
  /* The cost model's profile (core/cost_profile.h), read at the first new
   * stream: 0 not yet, 1 read, -1 none (ranking says why). */
  int profile_state;
  tsr__cost_profile profile;
  char ranking[TSR__AUTO_WHY];
} tsr__auto_ctx;

/* What a file written with strategy=auto carries. */
typedef struct tsr__auto_file {
  tsr__auto_stream *s; /* NULL until tsr_enddef for a stream's first file */
  tsr__auto_stream *known; /* at tsr_create: the stream of this path seen before, or NULL */
  tsr__hints base;     /* the file's hints as resolved (strategy=auto) */
  char applied[TSR__AUTO_HINTS]; /* the candidate's hints now applied */
  int provisional;     /* before the stream is known: the ranking's entry applied */
  tsr__auto_record rec; /* for the statistics record */
} tsr__auto_file;

/* tsr_create, before the registries choose: with strategy=auto, a
 * candidate's hints are applied over the file's (the stream's present
 * choice, or the ranking's first when the stream is new). Local, the same
 * on every rank. 0, or TSR_ENOMEM. */
int tsr__auto_begin(struct tsr_file *f);
/* tsr_enddef, before the strategy lays the file out: the frame size is
 * known, so a stream's first file takes the ranking's (or the state file's)
 * choice. 1 when other hints were applied (the caller chooses again). */
int tsr__auto_settle(struct tsr_file *f);
/* The candidate applied to @p f failed before any data moved (agreed code
 * @p rc, its message @p why): it is never tried again in this job, and the
 * next one is applied. 0: choose again; else no candidate is left. */
int tsr__auto_fallback(struct tsr_file *f, int rc, const char *why);
/* Collective, at the close of a file (@p rc its agreed result): one
 * reduction of its blocked time and compute interval, the stream's next
 * decision, the record for the statistics. */
void tsr__auto_closed(struct tsr_file *f, int rc);
void tsr__auto_file_free(struct tsr_file *f);
/* tsr_init: TESSERA_AUTO_STATE's streams (collective; nothing without it).
 * tsr_finalize: saved there again, and freed. */
void tsr__auto_ctx_load(struct tsr_ctx *ctx);
void tsr__auto_ctx_finish(struct tsr_ctx *ctx);

#endif
