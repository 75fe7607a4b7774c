/* TESSERA_VERBOSE logging (contract in core/verbose.h); named apart from
 * backend/log.c, the log layout of stage_format=log. */
#include "core/verbose.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tsr__verbose(void) {
  static int cached = -1;
  if (cached < 0) {
    const char *v = getenv("TESSERA_VERBOSE");
    cached = v && v[0] && strcmp(v, "0") != 0;
  }
  return cached;
}

void tsr__verbose_at(const char *func, int line, const char *fmt, ...) {
  int rank = -1, up = 0;
  MPI_Initialized(&up);
  if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tessera[%d] %s:%d: %s\n", rank, func, line, msg);
}
