/* Write plans cached on their decomposition: the layout of a variable shape
 * onto writers and the exchanges that feed it are computed on the first put
 * and reused by every later put with the same owner and parameters. */
#include <stdlib.h>

#include "handle/handles.h"

int tsr__plan_get(tsr_decomp *d, const void *owner, int64_t key1, int64_t key2, size_t esize,
                  int phased, tsr__layout_fn make_layout, const void *arg, tsr__plan **out) {
  *out = NULL;
  /* A shuffled map read in place moves the same segments as its canon (the
   * permutation only changes where the exchange reads them): one plan,
   * cached on the canon, serves both, and is built once. */
  if (d->canon && d->tiles.perm) d = d->canon;
  for (tsr__plan *p = d->plans; p; p = p->next)
    if (p->owner == owner && p->key1 == key1 && p->key2 == key2 && p->esize == esize) {
      *out = p;
      return 0;
    }
  tsr__plan *p = calloc(1, sizeof *p);
  if (!p) return TSR_ENOMEM;
  p->owner = owner;
  p->key1 = key1;
  p->key2 = key2;
  int rc = make_layout(d, arg, &p->layout);
  if (!rc) rc = tsr__plan_build(&d->tiles, esize, phased, p);
  if (rc) {
    tsr__plans_free(p);
    return rc;
  }
  p->next = d->plans;
  d->plans = p;
  *out = p;
  return 0;
}
