/* Strategies: what a file does between the API checks and the sink. Every op
 * is called on every model rank, after the API layer has agreed that the
 * arguments are valid everywhere; it returns this rank's status, which the API
 * layer agrees on afterwards. The registry (strategy_registry.c) is the only
 * place that knows the strategies' names. */
#ifndef TSR_STRATEGY_H
#define TSR_STRATEGY_H

#include <mpi.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/hints.h"
#include "tessera.h"

typedef struct tsr__strategy_ops {
  const char *name;
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
} tsr__strategy_ops;

/* Look a strategy up by name: 0 and *ops, or TSR_EHINT for an unknown name. */
int tsr__strategy_find(const char *name, const tsr__strategy_ops **ops);
/* 1 when @p name (n bytes, not NUL-terminated) names a strategy. */
int tsr__strategy_known(const char *name, size_t n);
/* 1 when the named strategy needs dedicated ranks (0 for unknown names). */
int tsr__strategy_needs_ranks(const char *name);
/* The strategy that needs dedicated ranks (the first such row), or NULL. */
const tsr__strategy_ops *tsr__strategy_with_ranks(void);
/* The strategy used when the hints name none. */
const tsr__strategy_ops *tsr__strategy_default(void);
/* Every registered name, for tests and messages: names[i] for i < count. */
int tsr__strategy_count(void);
const char *tsr__strategy_name_at(int i);

#endif
