/* Agreement: every collective call ends with the same status on every rank.
 * MPI_MIN over the (negative) codes picks the same code everywhere. */
#include "core/base.h"

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
