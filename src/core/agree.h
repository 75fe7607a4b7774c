/* Agreement: every collective call ends with the same status on every rank.
 * MPI_MIN over the (negative) codes picks the same code everywhere. */
#ifndef TSR_CORE_AGREE_H
#define TSR_CORE_AGREE_H

#include <mpi.h>

/* Every rank learns the most negative status. */
int tsr__agree(MPI_Comm comm, int err);
/* Agree on a status and on "any rank raised flag" in one reduction. */
int tsr__agree_flag(MPI_Comm comm, int err, int *flag);

#endif
