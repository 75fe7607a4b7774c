/* What the MPI-IO layer holds for a file, and the pass-through hints it did
 * not take (mpiio_taken.h). */
#include <string.h>
#include <strings.h>

#include "core/base.h"
#include "core/mpiio_taken.h"

int tsr__info_get(MPI_Info info, const char *key, char *out, int outlen) {
  int vlen = 0, flag = 0;
  out[0] = '\0';
  if (MPI_Info_get_valuelen(info, key, &vlen, &flag) != MPI_SUCCESS || !flag) return 0;
  if (vlen >= outlen) return -1;
  if (MPI_Info_get(info, key, outlen - 1, out, &flag) != MPI_SUCCESS || !flag) {
    out[0] = '\0';
    return 0;
  }
  return 1;
}

void tsr__mpiio_record(MPI_Info info, int64_t out[]) {
  for (int i = 0; i < TSR__NMPIIO; i++) {
    char v[64];
    int64_t n;
    out[i] = tsr__info_get(info, tsr__mpiio_keys[i], v, (int)sizeof v) == 1 &&
                     tsr__parse_size(v, &n) == 0
                 ? n
                 : -1;
  }
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
    /* Held but too long to compare (-1) counts as held with another value. */
    int has = tsr__info_get(info, h->pass[i].key, held, (int)sizeof held) != 0;
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
