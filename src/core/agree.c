/* Agreement: every collective call ends with the same status on every rank.
 * MPI_MIN over the (negative) codes picks the same code everywhere. */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

int tsr__agree(MPI_Comm comm, int err) {
  int out = err;
  if (MPI_Allreduce(&err, &out, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return TSR_EMPI;
  return out;
}

int tsr__agree_flag(MPI_Comm comm, int err, int *flag) {
  /* MAX of (-err, flag): the most negative error and "any rank raised flag". */
  int in[2] = {-err, *flag ? 1 : 0}, out[2];
  if (MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return TSR_EMPI;
  *flag = out[1];
  return -out[0];
}

int tsr__file_agree(tsr_file *f, int err) {
  MPI_Comm comm = f->ctx->comm;
  int agreed = tsr__agree(comm, err);
  if (agreed == 0 || agreed == TSR_EMPI) return agreed;
  /* Share the backend message of the lowest rank that failed with that code,
   * so every rank can tell the user what went wrong, not only that it did. */
  int mine = err == agreed ? f->ctx->rank : f->ctx->size, root = 0;
  MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm);
  if (root < f->ctx->size) MPI_Bcast(&f->berr, (int)sizeof f->berr, MPI_BYTE, root, comm);
  f->last_err = agreed;
  TSR_LOG("%s: %s (%s)", f->path, tsr_errname(agreed), f->berr.message);
  return agreed;
}
