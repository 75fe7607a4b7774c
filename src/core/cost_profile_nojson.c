/* A build without json-c (libjson-c-dev) reads no profile: strategy=auto
 * ranks its first files with the fixed constants of
 * strategy/auto_candidates.c, and says why in each stream's first record. */
#include <stdio.h>
#include <string.h>

#include "core/cost_profile.h"

int tsr__cost_profile_parse(const char *text, const char *origin, tsr__cost_profile *p,
                            char *err, size_t errlen) {
  (void)text;
  memset(p, 0, sizeof *p);
  snprintf(err, errlen, "%s: not read, this build has no JSON reader (json-c: libjson-c-dev)",
           origin);
  return -1;
}
