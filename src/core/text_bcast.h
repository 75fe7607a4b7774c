/* A small text file that every rank needs the same bytes of (a state file,
 * a profile): rank 0 reads it, the others receive it, so a file that only
 * rank 0 sees, or that changes meanwhile, still gives every rank one text. */
#ifndef TSR_CORE_TEXT_BCAST_H
#define TSR_CORE_TEXT_BCAST_H

#include <mpi.h>
#include <stddef.h>

/* Collective over @p comm. Rank 0 reads @p path (its argument counts; the
 * others' is ignored), at most @p max bytes. 0 and *@p text (malloc'd,
 * NUL-terminated, the same on every rank), or -1 and one sentence in @p err
 * (the same on every rank): the file cannot be read, is empty or is larger
 * than @p max, or memory ran out. *@p enoent is 1 when the file does not
 * exist (a state file's first job). */
int tsr__text_bcast(MPI_Comm comm, const char *path, long max, char **text, int *enoent,
                    char *err, size_t errlen);

#endif
