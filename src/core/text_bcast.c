/* Rank 0 reads a small text file and every rank gets its bytes (contract
 * in core/text_bcast.h). Read in pieces up to max + 1 bytes, so a pipe or a
 * device that never ends is refused instead of read forever. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text_bcast.h"

/* Rank 0: the file's bytes, or -1 and the reason. */
static long read_bounded(const char *path, long max, char **text, int *enoent, char *err,
                         size_t errlen) {
  FILE *fp = fopen(path, "r");
  if (!fp) {
    *enoent = errno == ENOENT;
    snprintf(err, errlen, "cannot be read (%s)", strerror(errno));
    return -1;
  }
  char *buf = malloc((size_t)max + 2);
  long len = buf ? (long)fread(buf, 1, (size_t)max + 1, fp) : -1;
  int bad = buf && ferror(fp);
  fclose(fp);
  if (len < 0) snprintf(err, errlen, "cannot be read (out of memory)");
  else if (bad) snprintf(err, errlen, "cannot be read (a read error)");
  else if (len == 0) snprintf(err, errlen, "is empty");
  else if (len > max) snprintf(err, errlen, "is larger than the %ld bytes it may hold", max);
  if (len <= 0 || bad || len > max) {
    free(buf);
    return -1;
  }
  buf[len] = '\0';
  *text = buf;
  return len;
}

int tsr__text_bcast(MPI_Comm comm, const char *path, long max, char **text, int *enoent,
                    char *err, size_t errlen) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  *text = NULL;
  char why[200] = "";
  long len = 0;
  int missing = 0;
  if (rank == 0) len = read_bounded(path, max, text, &missing, why, sizeof why);
  long head[2] = {len, missing};
  MPI_Bcast(head, 2, MPI_LONG, 0, comm);
  len = head[0];
  *enoent = (int)head[1];
  if (len < 0) {
    MPI_Bcast(why, (int)sizeof why, MPI_CHAR, 0, comm);
    snprintf(err, errlen, "%s", why);
    return -1;
  }
  if (rank != 0) *text = malloc((size_t)len + 1);
  int ok = *text != NULL, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm); /* every rank has it, or none */
  if (!all) {
    free(*text);
    *text = NULL;
    snprintf(err, errlen, "cannot be read (out of memory)");
    return -1;
  }
  MPI_Bcast(*text, (int)len, MPI_CHAR, 0, comm);
  (*text)[len] = '\0';
  return 0;
}
