/* I/O servers (strategy=servers): dedicated ranks that receive tiles from the
 * model ranks through non-blocking messages and write files while the model
 * computes (WRF quilting, without its stalls). These two are the strategy's
 * ranks_init / ranks_finalize (strategy/strategy.h), which tsr_init and
 * tsr_finalize call; the strategy's row is tsr__strategy_servers. */
#ifndef TSR_SERVER_SERVERS_H
#define TSR_SERVER_SERVERS_H

#include <mpi.h>

#include "core/hints.h"
#include "tessera.h"

/* Called on every rank of @p comm when the hints ask for servers.
 * Splits @p comm into model ranks and io_groups*io_tasks servers. On a server
 * it serves until the model ranks call tsr_finalize, then returns 0 with
 * *is_server = 1. On a model rank it sets ctx->servers, and *model_comm to
 * the model ranks' communicator, and returns at once. Errors (a layout that
 * does not fit: TSR_ESERVERS) are returned on every rank of @p comm. */
int tsr__servers_init(tsr_ctx *ctx, MPI_Comm comm, const tsr__hints *h, MPI_Comm *model_comm,
                      int *is_server);
/* Model ranks, from tsr_finalize: wait until every file is written, stop the
 * servers, report any server error not reported before. Collective. */
int tsr__servers_finalize(tsr_ctx *ctx);
/* Model ranks, from tsr_open: wait for the notes of every file closed so far
 * (see ranks_settle in strategy/strategy.h). */
int tsr__servers_settle(tsr_ctx *ctx);

#endif
