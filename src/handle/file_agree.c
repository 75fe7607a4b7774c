/* A handle's agreed status: the file's code and message on every rank, and
 * the context's memory of failures that lost output. The plain agreement on
 * a code is below, in core/agree.c. */
#include <stdio.h>

#include "handle/handles.h"

/* Output lost to the machine (I/O, memory, MPI, another job), as opposed to
 * a call the program made wrongly, which it sees and handles itself. */
static int output_failure(int code) {
  switch (code) {
  case TSR_ENOMEM:
  case TSR_EIO:
  case TSR_EACCES:
  case TSR_ENOSPC:
  case TSR_EMPI:
  case TSR_ETOOBIG:
  case TSR_EBUSY:
    return 1;
  default:
    return 0;
  }
}

void tsr__ctx_failed(tsr_ctx *ctx, int code, const char *msg) {
  if (!output_failure(code)) return;
  ctx->last_failure = code;
  snprintf(ctx->last_message, sizeof ctx->last_message, "%s",
           msg && msg[0] ? msg : tsr_strerror(code));
}

int tsr__file_agree(tsr_file *f, int err) {
  return tsr__file_agreed(f, err, tsr__agree(f->ctx->comm, err));
}

int tsr__file_agreed(tsr_file *f, int err, int agreed) {
  MPI_Comm comm = f->ctx->comm;
  if (agreed == 0 || agreed == TSR_EMPI) return agreed;
  /* Share the backend message of the lowest rank that failed with that code,
   * so every rank can tell the user what went wrong, not only that it did. */
  int mine = err == agreed ? f->ctx->rank : f->ctx->size, root = 0;
  MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm);
  if (root < f->ctx->size) MPI_Bcast(&f->berr, (int)sizeof f->berr, MPI_BYTE, root, comm);
  f->last_err = agreed;
  if (!f->reader) tsr__ctx_failed(f->ctx, agreed, f->berr.message); /* reading loses no output */
  TSR_LOG("%s: %s (%s)", f->path, tsr_errname(agreed), f->berr.message);
  return agreed;
}
