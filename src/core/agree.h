/* Agreement: every collective call ends with the same status on every rank.
 * MPI_MIN over the (negative) codes picks the same code everywhere. */
#ifndef TSR_CORE_AGREE_H
#define TSR_CORE_AGREE_H

#include <mpi.h>
#include <stddef.h>

/* Decide how this process waits in the agreements below (each a
 * non-blocking reduction): asleep between tests once a node holding more
 * ranks of @p comm than it has CPUs was seen, else polling. Collective over
 * @p comm (tsr_init). */
void tsr__agree_wait_init(MPI_Comm comm);

/* Every rank learns the most negative status. */
int tsr__agree(MPI_Comm comm, int err);
/* Agree on a status and on "any rank raised flag" in one reduction. */
int tsr__agree_flag(MPI_Comm comm, int err, int *flag);
/* Agree on two statuses in one reduction: each becomes its most negative
 * value over the ranks. Returns 0, or TSR_EMPI (both left as they were). */
int tsr__agree_two(MPI_Comm comm, int *a, int *b);

/* After agreeing on @p agreed (this rank's status was @p mine, both not 0 on
 * some rank): copy the message of the lowest rank that failed with the agreed
 * code into every rank's @p msg. Collective over @p comm. (In errors.c.) */
void tsr__share_message(MPI_Comm comm, int mine, int agreed, char *msg, size_t len);

#endif
