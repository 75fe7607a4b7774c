/* Error names and texts, generated from the one table in tessera.h, and the
 * message of the last failed call that left no handle behind. */
#include <stdio.h>

#include "core/base.h"

static _Thread_local char last_error[512];

const char *tsr_last_error(void) { return last_error; }

void tsr__set_last_error(const char *msg) {
  snprintf(last_error, sizeof last_error, "%s", msg ? msg : "");
}

void tsr__share_message(MPI_Comm comm, int mine, int agreed, char *msg, size_t len) {
  int rank, size, root = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int me = mine == agreed ? rank : size;
  MPI_Allreduce(&me, &root, 1, MPI_INT, MPI_MIN, comm);
  if (root < size) MPI_Bcast(msg, (int)len, MPI_CHAR, root, comm);
  msg[len - 1] = '\0';
}

const char *tsr_strerror(int err) {
  switch (err) {
  case TSR_OK: return "success";
#define TSR__ERR_TEXT(name, value, text) \
  case TSR_##name: return text;
    TSR_ERRNO_MAP(TSR__ERR_TEXT)
#undef TSR__ERR_TEXT
  }
  return "unknown error code";
}

const char *tsr_errname(int err) {
  switch (err) {
  case TSR_OK: return "TSR_OK";
#define TSR__ERR_NAME(name, value, text) \
  case TSR_##name: return "TSR_" #name;
    TSR_ERRNO_MAP(TSR__ERR_NAME)
#undef TSR__ERR_NAME
  }
  return "TSR_E?";
}
