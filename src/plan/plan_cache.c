/* Write plans cached on their decomposition: the layout of a variable shape
 * onto writers and the exchanges that feed it are computed on the first put
 * and reused by every later put with the same parameters. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

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

static int build(tsr_decomp *d, size_t esize, int phased, tsr__plan *p) {
  p->nphases = phased ? p->layout.npieces : 1;
  p->phases = calloc((size_t)p->nphases, sizeof *p->phases);
  if (!p->phases) return TSR_ENOMEM;
  for (int i = 0; i < p->nphases; i++) {
    int p0 = phased ? i : 0, p1 = phased ? i + 1 : p->layout.npieces;
    int rc = tsr__exchange_build(d, &p->layout, p0, p1, esize, &p->phases[i]);
    if (rc) return rc;
    const tsr__exchange *ex = &p->phases[i];
    if (ex->region_elems > p->max_region_elems) p->max_region_elems = ex->region_elems;
    if (ex->send_bytes > p->max_send_bytes) p->max_send_bytes = ex->send_bytes;
    if (ex->stage_bytes > p->max_stage_bytes) p->max_stage_bytes = ex->stage_bytes;
  }
  return 0;
}

int tsr__plan_get(tsr_decomp *d, int kind, int64_t key1, int64_t key2, size_t esize, int phased,
                  tsr__layout_fn make_layout, const void *arg, tsr__plan **out) {
  *out = NULL;
  for (tsr__plan *p = d->plans; p; p = p->next)
    if (p->kind == kind && p->key1 == key1 && p->key2 == key2 && p->esize == esize) {
      *out = p;
      return 0;
    }
  tsr__plan *p = calloc(1, sizeof *p);
  if (!p) return TSR_ENOMEM;
  p->kind = kind;
  p->key1 = key1;
  p->key2 = key2;
  p->esize = esize;
  int rc = make_layout(d, arg, &p->layout);
  if (!rc) rc = build(d, esize, phased, p);
  if (rc) {
    tsr__plans_free(p);
    return rc;
  }
  p->next = d->plans;
  d->plans = p;
  *out = p;
  return 0;
}
