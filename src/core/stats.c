/* Per-file statistics: counting (here) and the report at close. */
#include <string.h>

#include "core/internal.h"

void tsr__fstats_init(tsr__fstats *s, int64_t alignment) {
  memset(s, 0, sizeof *s);
  s->last_end = -1;
  s->alignment = alignment > 0 ? alignment : 1;
}

int tsr__size_bucket(int64_t b) {
  static const int64_t edges[TSR__NBUCKETS - 1] = {100,     1024,        10240,      102400,
                                                   1048576, 4194304,     10485760,   104857600,
                                                   1073741824};
  int k = 0;
  while (k < TSR__NBUCKETS - 1 && b >= edges[k]) k++;
  return k;
}

void tsr__fstats_request(tsr__fstats *s, int64_t bytes, int64_t offset) {
  s->writes++;
  s->bytes_written += bytes;
  s->size_hist[tsr__size_bucket(bytes)]++;
  if (offset >= 0) {
    if (offset % s->alignment != 0) s->not_aligned++;
    if (offset == s->last_end) s->consec++;
    s->last_end = offset + bytes;
  }
}

void tsr__fstats_buffer(tsr__fstats *s, int64_t held) {
  if (held > s->peak_buffer) s->peak_buffer = held;
}

int tsr__stats_report(struct tsr_file *f) {
  (void)f; /* reporting arrives with the statistics work (issue 5) */
  return 0;
}
