/* Per-file statistics, the counting half (contract in core/stats.h): the
 * counters every writer (sink, strategies, servers) adds to while the file
 * is open, and the statistics environment read once. Apart from the report
 * (stats.c), which the API layer makes at close: the counters are called
 * from below it, the report calls above them (hints, MPI-IO notes). */
#include <stdlib.h>
#include <string.h>

#include "core/hints.h"
#include "core/stats.h"

const char *const tsr__mpiio_keys[TSR__NMPIIO] = {"cb_nodes", "cb_buffer_size",
                                                  "striping_factor", "striping_unit"};

static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && v[0] && strcmp(v, "0") != 0;
}

/* Read once: a report must cost nothing when statistics are off, and every
 * rank must take the same decision, since the report is collective. The
 * environment is the same on every rank of an MPI job in practice. */
const tsr__stats_env_t *tsr__stats_env(void) {
  static tsr__stats_env_t env;
  static int done;
  if (!done) {
    env.text = env_on("TESSERA_STATS");
    const char *p = getenv("TESSERA_STATS_FILE");
    env.file = p && p[0] ? p : NULL;
    env.display = env_on("TESSERA_HINTS_DISPLAY");
    done = 1;
  }
  return &env;
}

int64_t tsr__stats_alignment(const struct tsr__hints *h) {
  for (int i = 0; h && i < h->npass && i < TSR__MAX_PASSTHROUGH; i++) {
    int64_t v;
    if (strcmp(h->pass[i].key, "striping_unit") == 0 && tsr__parse_size(h->pass[i].value, &v) == 0 &&
        v > 0)
      return v;
  }
  return (int64_t)1 << 20;
}

void tsr__fstats_init(tsr__fstats *s, int64_t alignment) {
  memset(s, 0, sizeof *s);
  s->last_end = -1;
  s->alignment = alignment > 0 ? alignment : 1;
  for (int i = 0; i < TSR__NMPIIO; i++) s->mpiio[i] = s->io.mpiio[i] = -1;
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
    s->offsets_known++;
    if (offset % s->alignment != 0) s->not_aligned++;
    if (offset == s->last_end) s->consec++;
    s->last_end = offset + bytes;
  }
}

void tsr__fstats_buffer(tsr__fstats *s, int64_t held) {
  if (held > s->peak_buffer) s->peak_buffer = held;
}
