/* Strategy registry: the one place that knows the strategies' names. Adding a
 * strategy: its file (implementing tsr__strategy_ops, with its read side or
 * NULL) and one row here. */
#include <stdio.h>
#include <string.h>

#include "strategy/strategy.h"

extern const tsr__strategy_ops tsr__strategy_serial;
extern const tsr__strategy_ops tsr__strategy_direct;
extern const tsr__strategy_ops tsr__strategy_aggregate;
extern const tsr__strategy_ops tsr__strategy_split;
extern const tsr__strategy_ops tsr__strategy_servers;
/* How tsr_open reads without strategy=: every rank its own tile. */
extern const tsr__read_ops tsr__read_each;

static const struct {
  const tsr__strategy_ops *ops;
  /* Candidates for the default, tried in this order (0: never the default):
   * the first whose backend can be had (direct needs a parallel backend,
   * serial always works). */
  int default_rank;
} registry[] = {
    {&tsr__strategy_serial, 2},
    {&tsr__strategy_direct, 1},
    {&tsr__strategy_aggregate, 0},
    {&tsr__strategy_split, 0},
    {&tsr__strategy_servers, 0},
};
#define NROWS ((int)(sizeof registry / sizeof registry[0]))

int tsr__strategy_find(const char *name, const tsr__strategy_ops **ops) {
  *ops = NULL;
  for (int i = 0; i < NROWS; i++)
    if (name && strcmp(registry[i].ops->name, name) == 0) {
      *ops = registry[i].ops;
      return 0;
    }
  return TSR_EHINT;
}

int tsr__strategy_known(const char *name, size_t n) {
  if (tsr__strategy_is_auto(name, n)) return 1; /* no row: core/auto.c picks one per file */
  for (int i = 0; i < NROWS; i++)
    if (strlen(registry[i].ops->name) == n && memcmp(registry[i].ops->name, name, n) == 0) return 1;
  return 0;
}

int tsr__strategy_needs_ranks(const char *name) {
  const tsr__strategy_ops *ops;
  return tsr__strategy_find(name, &ops) == 0 && ops->needs_server_ranks;
}

const tsr__strategy_ops *tsr__strategy_with_ranks(void) {
  for (int i = 0; i < NROWS; i++)
    if (registry[i].ops->needs_server_ranks) return registry[i].ops;
  return NULL;
}

static int backend_available(const tsr__strategy_ops *ops) {
  tsr__hints h;
  tsr__hints_defaults(&h);
  const tsr__backend_ops *b;
  return tsr__backend_find(tsr__backend_default_write(ops->backend_want(&h), h.format), &b) == 0;
}

const tsr__strategy_ops *tsr__strategy_default(void) {
  for (int rank = 1; rank <= NROWS; rank++)
    for (int i = 0; i < NROWS; i++)
      if (registry[i].default_rank == rank && backend_available(registry[i].ops))
        return registry[i].ops;
  return NULL;
}

int tsr__strategy_list(int (*keep)(const tsr__strategy_ops *), char *out, size_t len) {
  int n = 0, left = 0, k = 0;
  if (len) out[0] = '\0';
  for (int i = 0; i < NROWS; i++) left += keep(registry[i].ops) != 0;
  for (int i = 0; i < NROWS && n >= 0 && (size_t)n < len; i++) {
    if (!keep(registry[i].ops)) continue;
    left--;
    n += snprintf(out + n, len - (size_t)n, "%s%s", registry[i].ops->name,
                  left > 1 ? ", " : left == 1 ? " or " : "");
    k++;
  }
  return k;
}

static int reads(const tsr__strategy_ops *ops) { return ops->read != NULL; }

int tsr__strategy_shares_a_file(const tsr__strategy_ops *s) { return !s->file_per_rank; }

int tsr__strategy_cuts_levels(const tsr__strategy_ops *s) {
  return !s->needs_parallel_backend && !s->file_per_rank && !s->needs_server_ranks;
}

int tsr__strategy_reader(const char *name, const tsr__read_ops **read, const char **name_out,
                         char *msg, size_t msglen) {
  *read = NULL;
  *name_out = "";
  if (!name || !name[0]) {
    *read = &tsr__read_each;
    return 0;
  }
  const tsr__strategy_ops *ops;
  if (tsr__strategy_find(name, &ops) == 0 && ops->read) {
    *read = ops->read;
    *name_out = ops->name;
    return 0;
  }
  /* The names that read, in the registry's order: "serial, direct or split". */
  int len = snprintf(msg, msglen, "strategy=%s does not read files: use strategy=", name);
  if (len >= 0 && (size_t)len < msglen) tsr__strategy_list(reads, msg + len, msglen - (size_t)len);
  return TSR_EHINT;
}

int tsr__strategy_count(void) { return NROWS; }

const char *tsr__strategy_name_at(int i) { return i >= 0 && i < NROWS ? registry[i].ops->name : NULL; }
