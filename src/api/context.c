/* Contexts: tsr_init / tsr_finalize and the per-rank running statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auto.h"
#include "api/api.h"
#include "api/reduce.h"
#include "strategy/strategy.h"
#include "tier/drain.h"

static int dup_comm(MPI_Comm comm, MPI_Comm *out) {
  if (MPI_Comm_dup(comm, out) != MPI_SUCCESS) return TSR_EMPI;
  /* Tessera reports MPI failures as TSR_EMPI instead of letting the default
   * handler abort the job. */
  MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
  return 0;
}

/* The strategy that must set ranks aside at tsr_init: the one the hints name,
 * or the registry's strategy with dedicated ranks when only their layout
 * (io_groups, io_tasks) is given. NULL when none. */
static const tsr__strategy_ops *ranks_owner(const tsr__hints *h) {
  const tsr__strategy_ops *ops = NULL;
  if (h->strategy[0] && tsr__strategy_find(h->strategy, &ops) == 0 && ops->needs_server_ranks)
    return ops;
  return h->set & (TSR__H_IO_GROUPS | TSR__H_IO_TASKS) ? tsr__strategy_with_ranks() : NULL;
}

/* io_groups / io_tasks next to a strategy without dedicated ranks would
 * quietly take ranks away from the model: refuse it. */
static int check_ranks_hints(const tsr__hints *h, char *msg, size_t msglen) {
  const tsr__strategy_ops *ops = NULL;
  if (!(h->set & (TSR__H_IO_GROUPS | TSR__H_IO_TASKS)) || !h->strategy[0]) return 0;
  if (tsr__strategy_find(h->strategy, &ops) == 0 && ops->needs_server_ranks) return 0;
  /* strategy=auto with a layout: the servers are made here, and auto
   * chooses among their per-file knobs (docs/auto.md). */
  if (tsr__strategy_is_auto(h->strategy, strlen(h->strategy))) return 0;
  const tsr__strategy_ops *owner = tsr__strategy_with_ranks();
  snprintf(msg, msglen, "hint '%s=%d' needs strategy=%s, but strategy=%s is in effect",
           h->set & TSR__H_IO_GROUPS ? "io_groups" : "io_tasks",
           h->set & TSR__H_IO_GROUPS ? h->io_groups : h->io_tasks, owner ? owner->name : "?",
           h->strategy);
  return TSR_EHINT;
}

int tsr_init(MPI_Comm comm, const char *hints, tsr_ctx **out, MPI_Comm *model_comm) {
  if (out) *out = NULL;
  if (model_comm) *model_comm = MPI_COMM_NULL;
  int up = 0;
  MPI_Initialized(&up);
  tsr__set_last_error("");
  if (!up || comm == MPI_COMM_NULL) {
    tsr__set_last_error("tsr_init: MPI is not initialised or the communicator is MPI_COMM_NULL");
    return TSR_ESTATE;
  }
  char msg[512] = "";
  tsr__hints h;
  tsr__hints_defaults(&h);
  int rc = out && model_comm ? 0 : TSR_EINVAL;
  if (!rc) rc = tsr__hints_resolve(hints, NULL, NULL, &h, msg, sizeof msg);
  if (!rc) rc = check_ranks_hints(&h, msg, sizeof msg);
  if (rc) TSR_LOG("tsr_init: %s", msg);
  tsr_ctx *ctx = rc ? NULL : calloc(1, sizeof *ctx);
  if (!rc && !ctx) rc = TSR_ENOMEM;
  if (ctx) {
    ctx->hints = h;
    ctx->init_hints = strdup(hints ? hints : "");
    if (!ctx->init_hints) rc = TSR_ENOMEM;
  }
  int agreed = tsr__agree(comm, rc);
  if (agreed) {
    tsr__share_message(comm, rc, agreed, msg, sizeof msg);
    tsr__set_last_error(msg[0] ? msg : tsr_strerror(agreed));
    goto fail;
  }
  tsr__agree_wait_init(comm);

  MPI_Comm model = MPI_COMM_NULL;
  const tsr__strategy_ops *owner = ranks_owner(&h);
  if (owner) {
    int is_server = 0;
    ctx->ranks_owner = owner;
    agreed = owner->ranks_init(ctx, comm, &h, &model, &is_server);
    if (is_server) { /* served until the model finalized: nothing left here */
      free(ctx->init_hints);
      free(ctx);
      return agreed; /* the job's last failure (its message in tsr_last_error) */
    }
    if (agreed) goto fail;
  } else {
    agreed = tsr__agree(comm, dup_comm(comm, &model));
    if (agreed) goto fail;
  }
  *model_comm = model;
  agreed = tsr__agree(model, dup_comm(model, &ctx->comm));
  if (agreed) {
    MPI_Comm_free(model_comm);
    goto fail;
  }
  MPI_Comm_rank(ctx->comm, &ctx->rank);
  MPI_Comm_size(ctx->comm, &ctx->size);
  tsr__auto_ctx_load(ctx); /* what an earlier job learned (TESSERA_AUTO_STATE) */
  *out = ctx;
  return 0;
fail:
  if (!tsr_last_error()[0]) tsr__set_last_error(tsr_strerror(agreed));
  if (ctx) {
    free(ctx->init_hints);
    free(ctx);
  }
  return agreed;
}

int tsr__ctx_settle(tsr_ctx *ctx) {
  const tsr__strategy_ops *owner = ctx->ranks_owner;
  if (!owner || !owner->ranks_settle) return 0;
  double t0 = tsr__now();
  int rc = owner->ranks_settle(ctx);
  ctx->stats.blocked_s += tsr__now() - t0;
  return rc;
}

int tsr_finalize(tsr_ctx **pctx) {
  if (!pctx || !*pctx) return 0;
  tsr_ctx *ctx = *pctx;
  double t0 = tsr__now();
  tsr__set_last_error("");
  /* Incomplete reduce= periods are saved while the servers still serve
   * (the side files are written by the model ranks, but in order). */
  char rmsg[512] = "";
  int rrc = tsr__reduce_finalize(ctx, rmsg, sizeof rmsg);
  if (rrc) tsr__set_last_error(rmsg);
  int rc = ctx->ranks_owner ? ctx->ranks_owner->ranks_finalize(ctx) : 0;
  if (!rc) rc = rrc;
  ctx->stats.blocked_s += tsr__now() - t0;
  rc = tsr__agree(ctx->comm, rc);
  /* Staged files reach their final paths before the job may end; the wait
   * is time the model spends blocked in Tessera. */
  double t1 = tsr__now();
  char msg[512];
  int drc = tsr__drain_finalize(ctx->comm, msg, sizeof msg);
  ctx->stats.blocked_s += tsr__now() - t1;
  if (!rc && drc) tsr__set_last_error(msg[0] ? msg : tsr_strerror(drc));
  if (!rc) rc = drc;
  tsr__auto_ctx_finish(ctx); /* what this job learned, for the next one */
  MPI_Comm_free(&ctx->comm);
  free(ctx->init_hints);
  free(ctx);
  *pctx = NULL;
  return rc;
}

int tsr_get_stats(const tsr_ctx *ctx, tsr_stats *st) {
  if (!ctx || !st) return TSR_EINVAL;
  *st = ctx->stats;
  return 0;
}
