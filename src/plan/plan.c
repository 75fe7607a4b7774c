/* Plans: exchanges built phase by phase over a layout (plan/plan.h). */
#include "plan/plan.h"

#include <stdlib.h>

#include "plan/runs.h"
#include "tessera.h"

void tsr__plans_free(tsr__plan *p) {
  while (p) {
    tsr__plan *next = p->next;
    for (int i = 0; i < p->nphases; i++) tsr__exchange_free(&p->phases[i]);
    free(p->phases);
    tsr__layout_free(&p->layout);
    free(p);
    p = next;
  }
}

int tsr__plan_build(const tsr__tiles *t, size_t esize, int phased, tsr__plan *p) {
  p->esize = esize;
  p->nphases = phased ? p->layout.npieces : 1;
  p->phases = calloc((size_t)p->nphases, sizeof *p->phases);
  if (!p->phases) return TSR_ENOMEM;
  /* Flat tiles know only their own runs: one collective directory exchange
   * builds every phase at once (plan/runs.h). */
  if (t->flat) {
    int rc = tsr__runs_build_phases(t, &p->layout, esize, phased, p->phases);
    if (rc) return rc;
  }
  for (int i = 0; i < p->nphases; i++) {
    int p0 = phased ? i : 0, p1 = phased ? i + 1 : p->layout.npieces;
    int rc = t->flat ? 0 : tsr__exchange_build(t, &p->layout, p0, p1, esize, &p->phases[i]);
    if (rc) return rc;
    const tsr__exchange *ex = &p->phases[i];
    if (ex->region_elems > p->max_region_elems) p->max_region_elems = ex->region_elems;
    if (ex->send_bytes > p->max_send_bytes) p->max_send_bytes = ex->send_bytes;
    if (ex->stage_bytes > p->max_stage_bytes) p->max_stage_bytes = ex->stage_bytes;
  }
  return 0;
}
