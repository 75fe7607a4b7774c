/* Contexts: tsr_init / tsr_finalize and the per-rank running statistics. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "strategy/strategy.h"

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

int tsr_init(MPI_Comm comm, const char *hints, tsr_ctx **out, MPI_Comm *model_comm) {
  if (out) *out = NULL;
  if (model_comm) *model_comm = MPI_COMM_NULL;
  int up = 0;
  MPI_Initialized(&up);
  if (!up || comm == MPI_COMM_NULL) return TSR_ESTATE;
  char msg[512] = "";
  tsr__hints h;
  tsr__hints_defaults(&h);
  int rc = out && model_comm ? 0 : TSR_EINVAL;
  if (!rc) rc = tsr__hints_resolve(hints, NULL, NULL, &h, msg, sizeof msg);
  if (rc) TSR_LOG("tsr_init: %s", msg);
  tsr_ctx *ctx = rc ? NULL : calloc(1, sizeof *ctx);
  if (!rc && !ctx) rc = TSR_ENOMEM;
  if (ctx) {
    ctx->hints = h;
    ctx->init_hints = strdup(hints ? hints : "");
    if (!ctx->init_hints) rc = TSR_ENOMEM;
  }
  int agreed = tsr__agree(comm, rc);
  if (agreed) goto fail;

  MPI_Comm model = MPI_COMM_NULL;
  const tsr__strategy_ops *owner = ranks_owner(&h);
  if (owner) {
    int is_server = 0;
    ctx->ranks_owner = owner;
    agreed = owner->ranks_init(ctx, comm, &h, &model, &is_server);
    if (agreed) goto fail;
    if (is_server) { /* served until the model finalized: nothing left here */
      free(ctx->init_hints);
      free(ctx);
      return 0;
    }
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
  *out = ctx;
  return 0;
fail:
  if (ctx) {
    free(ctx->init_hints);
    free(ctx);
  }
  return agreed;
}

int tsr_finalize(tsr_ctx **pctx) {
  if (!pctx || !*pctx) return 0;
  tsr_ctx *ctx = *pctx;
  double t0 = tsr__now();
  int rc = ctx->ranks_owner ? ctx->ranks_owner->ranks_finalize(ctx) : 0;
  ctx->stats.blocked_s += tsr__now() - t0;
  rc = tsr__agree(ctx->comm, rc);
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
