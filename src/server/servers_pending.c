/* Placeholder until the I/O servers land: strategy=servers answers
 * TSR_ENOTBUILT on every rank. */
#include "server/servers.h"

int tsr__servers_init(tsr_ctx *ctx, MPI_Comm comm, const tsr__hints *h, MPI_Comm *model_comm,
                      int *is_server) {
  (void)ctx;
  (void)h;
  (void)model_comm;
  *is_server = 0;
  return tsr__agree(comm, TSR_ENOTBUILT);
}

int tsr__servers_finalize(tsr_ctx *ctx) {
  (void)ctx;
  return 0;
}

static int not_built(tsr_file *f) {
  (void)f;
  return TSR_ENOTBUILT;
}

const tsr__strategy_ops tsr__strategy_servers = {.name = "servers", .enddef = not_built};
