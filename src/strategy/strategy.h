/* Strategies: what a file does between the API checks and the sink, for
 * writing (tsr_create .. tsr_close) and for reading (tsr_open, tsr_get). Every
 * op is called on every model rank, after the API layer has agreed that the
 * arguments are valid everywhere; it returns this rank's status, which the API
 * layer agrees on afterwards. The registry (strategy_registry.c) is the only
 * place that knows the strategies' names; a strategy is one row there, its
 * writer and its reader together. */
#ifndef TSR_STRATEGY_H
#define TSR_STRATEGY_H

#include <mpi.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/sink.h"
#include "core/hints.h"
#include "tessera.h"

/* Who reads a file opened by tsr_open: filled by the read side's setup, kept
 * on the reader for every tsr_get, released by tsr__readers_free. */
typedef struct tsr__readers {
  const char *name; /* what tsr_file_strategy answers: "" without strategy= */
  int n, *ranks;    /* the reader ranks, when a few read for everyone */
  int mine;         /* 1 on a rank that opens the file */
  MPI_Comm comm;    /* the communicator the file is opened on (readers only) */
  MPI_Comm own;     /* a communicator made by setup, freed by tsr__readers_free */
} tsr__readers;

/* The read side of a strategy (its row's `read`): who opens a file and how
 * the values reach every rank's tile. The API layer (api/read.c) runs the
 * steps every reader shares (hints, agreement, staging, opening the sink on
 * r->comm where r->mine) and calls these in this order; each returns an
 * agreed code where it says collective. */
typedef struct tsr__read_ops {
  /* Optional, local: tsr_open's merged hints checked on this rank before
   * anything opens; TSR_EHINT with the reason in @p msg. */
  int (*check)(const tsr_file *f, char *msg, size_t msglen);
  /* Optional: the reader the file is read through, shaped as a read-only
   * backend, in place of the registry's reading backend (split: its pieces
   * read as the one file). There is then no one file at the path, so
   * stage_dir does not apply. */
  const tsr__backend_ops *backend;
  /* Which ranks open the file (r->mine) and on what communicator, for a
   * backend that is @p parallel. Collective; an agreed code. */
  int (*setup)(tsr_file *f, int parallel, tsr__readers *r);
  /* After the ranks of setup opened the file (f->schema and *nrecs hold on
   * them): every rank gets both, and the file is checked as one this
   * strategy reads. Collective; an agreed code. */
  int (*opened)(tsr_file *f, const tsr__readers *r, int64_t *nrecs);
  /* tsr_get: this rank's status, the arguments agreed valid. Collective. */
  int (*get)(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid, int64_t frame,
             const tsr_decomp *d, void *buf);
} tsr__read_ops;

typedef struct tsr__strategy_ops {
  const char *name;
  /* How tsr_open reads with strategy=<name>; NULL: files are not read this
   * way (tsr_open answers TSR_EHINT). Strategies whose every rank reads its
   * own tile share tsr__read_each (strategy/read_each.c). */
  const tsr__read_ops *read;
  /* What kind of backend the strategy writes through when the hints name
   * none (backend.h: TSR__BACKEND_WANT_*). */
  int (*backend_want)(const tsr__hints *h);
  /* 1: the strategy runs on dedicated ranks that tsr_init must set aside;
   * then ranks_init / ranks_finalize are called by tsr_init / tsr_finalize
   * (see server/servers.h for their contract). */
  int needs_server_ranks;
  int (*ranks_init)(tsr_ctx *ctx, MPI_Comm comm, const tsr__hints *h, MPI_Comm *model_comm,
                    int *is_server);
  int (*ranks_finalize)(tsr_ctx *ctx);
  /* Optional, model ranks: wait until every file closed so far is finished
   * on the dedicated ranks (written and renamed, or failed and deleted), so
   * that tsr_open sees it. Their errors stay for the next write call.
   * Collective over the model communicator; returns an agreed code. */
  int (*ranks_settle)(tsr_ctx *ctx);
  /* 1: every rank creates a file of its own (each checks its directory). */
  int file_per_rank;
  /* 1: every rank writes the one shared file, so with more than one rank
   * the backend must be parallel (checked at tsr_create). */
  int needs_parallel_backend;
  /* 1: put reads a box held in another memory order, or a shuffled index
   * map, in place (it packs through the plan engine, which follows
   * tiles.order and tiles.perm); else the API layer packs the tile into
   * file order first. */
  int reads_in_place;
  /* 1: put, put_f64 and put_global exchange nothing with other ranks (each
   * rank writes a file of its own), so a rank may run them before the ranks
   * agree on the call's arguments, and one reduction agrees on both (unless
   * safe_mode=1). Else the arguments are agreed first: a rank must not enter
   * an exchange that another refused. */
  int put_is_local;
  int (*enddef)(tsr_file *f);
  int (*put)(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf);
  /* Optional: a TSR_FLOAT variable from double memory (tsr_put_typed); the
   * strategy converts where it chooses, each value as (float)x. Without it
   * the API layer converts a copy of the memory box and calls put. */
  int (*put_f64)(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const double *buf);
  int (*put_global)(tsr_file *f, int varid, int64_t frame, const void *buf);
  int (*flush)(tsr_file *f);
  /* Close the backend file(s): every byte is written, under the temporary
   * name. The API agrees on the result, then calls finish. */
  int (*close)(tsr_file *f);
  /* Optional. @p ok: every rank closed without error. Commit (rename the
   * temporaries into place) or discard them, and free f->sdata. */
  int (*finish)(tsr_file *f, int ok);
  void (*abort)(tsr_file *f); /* after a failed enddef/close: release, delete */
  /* Optional (reduce=, docs/reductions.md): the strategy's writers hold the
   * accumulators (the I/O servers), so the model ranks fold nothing and
   * only count frames, which each put carries in f->rput. reduce_put
   * writes variable @p varid of derived file @p df from item @p item of
   * stream @p sid once its variable's frames up to @p endseq are folded
   * (@p frames in the period); reduce_ctl hands the writers a stream's
   * definition (TSR__RCTL_DEF, a tsr__rdef) or an incomplete period to save
   * (TSR__RCTL_SAVE, a tsr__rsave; core/reduce_msg.h). Collective over the
   * model ranks; this rank's status. */
  int (*reduce_put)(tsr_file *df, int varid, int sid, int item, int64_t endseq, int64_t frames);
  int (*reduce_ctl)(tsr_ctx *ctx, int kind, const void *payload, int64_t len);
} tsr__strategy_ops;

/* Look a strategy up by name: 0 and *ops, or TSR_EHINT for an unknown name. */
int tsr__strategy_find(const char *name, const tsr__strategy_ops **ops);
/* 1 when @p name (n bytes, not NUL-terminated) names a strategy. */
int tsr__strategy_known(const char *name, size_t n);
/* 1 when the named strategy needs dedicated ranks (0 for unknown names). */
int tsr__strategy_needs_ranks(const char *name);
/* The strategy that needs dedicated ranks (the first such row), or NULL. */
const tsr__strategy_ops *tsr__strategy_with_ranks(void);
/* The names of the registered strategies for which @p keep is true, in the
 * registry's order, as "a, b or c" in @p out (so messages name no strategy
 * themselves); returns how many. */
int tsr__strategy_list(int (*keep)(const tsr__strategy_ops *), char *out, size_t len);
/* For tsr__strategy_list: every writer writes into one shared file (not a
 * file per rank); and its writers hold whole levels of that file (serial's
 * one writer, aggregate's slabs: what a whole-levels backend can take). */
int tsr__strategy_shares_a_file(const tsr__strategy_ops *s);
int tsr__strategy_cuts_levels(const tsr__strategy_ops *s);
/* The strategy used when the hints name none. */
const tsr__strategy_ops *tsr__strategy_default(void);
/* The read side for tsr_open's strategy= @p name: its row's `read`, and
 * for NULL or "" the default, every rank reading its own tile. *name_out is
 * what tsr_file_strategy answers. TSR_EHINT with the reason in @p msg for an
 * unknown name or a strategy that does not read. Local. */
int tsr__strategy_reader(const char *name, const tsr__read_ops **read, const char **name_out,
                         char *msg, size_t msglen);
/* Release what a reader's setup made (the ranks, the communicator). */
void tsr__readers_free(tsr__readers *r);
/* strategy=auto (docs/auto.md) is no row: the API layer (core/auto.c) picks
 * one of these candidates per file, each a hint text for a row above,
 * cheapest predicted first. Without reserved ranks: the rows that need none
 * and write one shared file. With ranks reserved for servers at tsr_init:
 * the servers' per-file knobs only (the set of server ranks is fixed). */
typedef struct {
  char hints[96];
  double predicted_s;
} tsr__auto_offer;
struct tsr__schema;
struct tsr__cost_profile_s;
/* What the candidates depend on. */
typedef struct {
  int ranks;              /* model ranks */
  int64_t frame_bytes;    /* bytes of one frame; 0: not known yet */
  int io_groups, io_tasks; /* the servers' layout; 0: no ranks reserved */
  /* The cost model's inputs (core/cost_model.h), for the ranking without
   * servers: the file's schema (NULL: not known yet), the profile (NULL:
   * fixed constants), the file's slab_bytes and buffer_bytes, and the
   * compute interval agreed before the file (0: unknown). */
  const struct tsr__schema *schema;
  const struct tsr__cost_profile_s *profile;
  int64_t slab_bytes, buffer_bytes;
  double interval_s;
} tsr__auto_case;
/* 1 when @p name (n bytes) is "auto". */
int tsr__strategy_is_auto(const char *name, size_t n);
/* The candidates for @p c, at most @p max, ranked; their number. *@p
 * modelled (may be NULL) is 1 when the cost model priced them, 0 when the
 * fixed constants did (servers' knobs, no schema or profile, no variable
 * tiled). */
int tsr__auto_candidates(const tsr__auto_case *c, tsr__auto_offer *out, int max, int *modelled);
/* Every registered name, for tests and messages: names[i] for i < count. */
int tsr__strategy_count(void);
const char *tsr__strategy_name_at(int i);

#endif
