/* Reusable buffers, kept for the life of a file. */
#include <stdlib.h>

#include "core/base.h"

int tsr__grow(void **buf, int64_t *cap, int64_t need) {
  if (need <= *cap) return 0;
  /* Buffers only grow: first-touch page faults on fresh memory cost more
   * than the copy itself. */
  void *nb = realloc(*buf, (size_t)need);
  if (!nb) return TSR_ENOMEM;
  *buf = nb;
  *cap = need;
  return 0;
}
