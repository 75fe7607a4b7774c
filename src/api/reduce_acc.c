/* reduce= accumulators' storage and the derived files' names (contract in
 * core/reduce_state.h): what folding (core/reduce.c), writing
 * (core/reduce_write.c) and the side files of a restart
 * (core/reduce_partial.c) share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory_room.h"
#include "core/reduce_fold.h"
#include "api/reduce_state.h"

int64_t tsr__racc_elem_bytes(int op, tsr_type type) { return tsr__rfold_elem_bytes(op, type); }

int tsr__racc_alloc(tsr_ctx *ctx, tsr__racc *a, tsr_type type, int64_t n) {
  int64_t bytes = tsr__racc_elem_bytes(a->op, type) * n;
  tsr__memory_room room;
  tsr__memory_room_get(&room);
  if (bytes > room.bytes - ctx->stats.reduce_bytes) return TSR_ENOMEM;
  tsr__rfold v = {a->op, type, NULL, NULL, NULL};
  if (tsr__rfold_alloc(&v, n)) return TSR_ENOMEM;
  a->sum = v.sum, a->m2 = v.m2, a->ext = v.ext;
  a->n = n;
  ctx->stats.reduce_bytes += bytes;
  return 0;
}

char *tsr__reduce_derived_path(const char *src, const char *prefix) {
  const char *slash = strrchr(src, '/');
  const char *base = slash ? slash + 1 : src;
  const char *us = strchr(base, '_');
  const char *rest = us ? us : ""; /* no '_': the whole base name is the token */
  size_t dir = (size_t)(base - src), n = dir + strlen(prefix) + strlen(rest) + 1;
  char *out = malloc(n);
  if (out) snprintf(out, n, "%.*s%s%s", (int)dir, src, prefix, rest);
  return out;
}
