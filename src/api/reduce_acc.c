/* reduce= accumulators' storage and the derived files' names (contract in
 * core/reduce_state.h): what folding (core/reduce.c), writing
 * (core/reduce_write.c) and the side files of a restart
 * (core/reduce_partial.c) share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory_room.h"
#include "api/reduce_state.h"

int64_t tsr__racc_elem_bytes(int op, tsr_type type) {
  switch (op) {
  case TSR__RED_MEAN: case TSR__RED_SUM: return 8;
  case TSR__RED_STD: return 16;
  case TSR__RED_MIN: case TSR__RED_MAX: return (int64_t)tsr__type_size(type);
  default: return 0; /* count: the frames, the same for every element */
  }
}

int tsr__racc_alloc(tsr_ctx *ctx, tsr__racc *a, tsr_type type, int64_t n) {
  int64_t bytes = tsr__racc_elem_bytes(a->op, type) * n;
  tsr__memory_room room;
  tsr__memory_room_get(&room);
  if (bytes > room.bytes - ctx->stats.reduce_bytes) return TSR_ENOMEM;
  size_t m = (size_t)(n ? n : 1);
  if (a->op == TSR__RED_MEAN || a->op == TSR__RED_SUM || a->op == TSR__RED_STD)
    a->sum = malloc(m * sizeof(double));
  if (a->op == TSR__RED_STD) a->m2 = malloc(m * sizeof(double));
  if (a->op == TSR__RED_MIN || a->op == TSR__RED_MAX) a->ext = malloc(m * tsr__type_size(type));
  if ((tsr__racc_elem_bytes(a->op, type) >= 8 && !a->sum) || (a->op == TSR__RED_STD && !a->m2) ||
      ((a->op == TSR__RED_MIN || a->op == TSR__RED_MAX) && !a->ext)) {
    free(a->sum), free(a->m2), free(a->ext);
    a->sum = a->m2 = NULL;
    a->ext = NULL;
    return TSR_ENOMEM;
  }
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
