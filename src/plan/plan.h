/* A write plan: a layout (who writes which part of a variable) and the
 * exchanges that feed its pieces, one per phase. Serial writes in phases (one
 * slab at a time, so the writer never holds more than one); aggregate and the
 * servers in one. Built once per (decomposition, layout, element size) by the
 * caller's cache (src/handle/decomp_plans.c) and run once per put. */
#ifndef TSR_PLAN_PLAN_H
#define TSR_PLAN_PLAN_H

#include "plan/exchange.h"
#include "plan/layout.h"
#include "plan/tiles.h"

typedef struct tsr__plan {
  const void *owner;  /* who built it (a strategy's ops), for the cache */
  int64_t key1, key2; /* the owner's layout parameters */
  size_t esize;
  tsr__layout layout;
  int nphases;
  tsr__exchange *phases;
  int64_t max_region_elems, max_send_bytes, max_stage_bytes;
  struct tsr__plan *next; /* the cache's list */
} tsr__plan;

/* Build the exchanges of @p p (whose layout is set) for tiles @p t: one
 * phase per piece when @p phased, else one. Collective over t->comm when
 * the tiles are flat (their exchanges are built through a directory). */
int tsr__plan_build(const tsr__tiles *t, size_t esize, int phased, tsr__plan *p);
/* Free a list of plans. */
void tsr__plans_free(tsr__plan *p);

#endif
