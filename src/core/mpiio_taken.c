/* Pass-through hints the MPI library did not take (mpiio_taken.h). */
#include <string.h>
#include <strings.h>

#include "core/internal.h"
#include "core/mpiio_taken.h"

/* 1 and the value of @p key in @p info, or 0 when the library holds none. */
static int held_value(MPI_Info info, const char *key, char *out, int outlen) {
  int vlen = 0, flag = 0;
  out[0] = '\0';
  if (MPI_Info_get_valuelen(info, key, &vlen, &flag) != MPI_SUCCESS || !flag) return 0;
  if (vlen >= outlen) return 1; /* held, too long to compare: counts as different */
  if (MPI_Info_get(info, key, outlen - 1, out, &flag) != MPI_SUCCESS || !flag) return 0;
  return 1;
}

/* Sizes by value (ROMIO may print 1048576 for a given 1m), words as words. */
static int same_value(const char *given, const char *held) {
  int64_t a, b;
  if (tsr__parse_size(given, &a) == 0 && tsr__parse_size(held, &b) == 0) return a == b;
  return strcasecmp(given, held) == 0;
}

uint32_t tsr__mpiio_not_taken(const tsr__hints *h, MPI_Info info, tsr__sbuf *why) {
  uint32_t mask = 0;
  if (info == MPI_INFO_NULL) return 0;
  for (int i = 0; i < h->npass && i < TSR__MAX_PASSTHROUGH; i++) {
    char held[sizeof h->pass[i].value];
    int has = held_value(info, h->pass[i].key, held, (int)sizeof held);
    if (has && same_value(h->pass[i].value, held)) continue;
    mask |= 1u << i;
    if (why)
      tsr__sbuf_printf(why, "%s%s=%s (holds %s)", mask == 1u << i ? "" : ", ", h->pass[i].key,
                       h->pass[i].value, has ? held : "nothing");
  }
  return mask;
}

void tsr__mpiio_not_taken_list(const tsr__hints *h, uint32_t mask, tsr__sbuf *b) {
  int first = 1;
  for (int i = 0; i < h->npass && i < TSR__MAX_PASSTHROUGH; i++) {
    if (!(mask & (1u << i))) continue;
    tsr__sbuf_printf(b, "%s%s=%s", first ? "" : ", ", h->pass[i].key, h->pass[i].value);
    first = 0;
  }
}
