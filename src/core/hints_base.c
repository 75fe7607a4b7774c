/* The hint values every layer needs without the parser (contract in
 * core/hints.h): the defaults and the size syntax ("64m"). They sit below
 * everyone in a file of their own, apart from api/hints.c: the parser asks the
 * strategy, backend and transport registries whether a name exists, so it
 * is an API-level piece, while the registries, the servers' writer, the
 * statistics and the backends only need these two. */
#include "core/hints.h"

#include <stdint.h>
#include <string.h>

int tsr__parse_size(const char *s, int64_t *out) {
  if (!s || !out || *s < '0' || *s > '9') return -1;
  int64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    int d = *s - '0';
    if (v > (INT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  int shift = 0;
  switch (*s) {
  case 'k': case 'K': shift = 10; s++; break;
  case 'm': case 'M': shift = 20; s++; break;
  case 'g': case 'G': shift = 30; s++; break;
  default: break;
  }
  if (*s != '\0' || v > (INT64_MAX >> shift)) return -1;
  *out = v << shift;
  return 0;
}

/* Every key's default from core/hint_keys.h; the rest (set, the pass-through
 * keys, the padding) zero, as a static object is. */
static const tsr__hints defaults = {
#define TSR__HINT_DEFAULT(key, BIT, field, ctype, type, arg, mem, dflt) .field = dflt,
    TSR__HINT_KEYS(TSR__HINT_DEFAULT)
#undef TSR__HINT_DEFAULT
};

void tsr__hints_defaults(tsr__hints *h) { memcpy(h, &defaults, sizeof *h); }
