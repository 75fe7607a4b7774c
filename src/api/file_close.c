/* tsr_close and tsr_abort: the end of a file handle (api/file_end.c), and
 * for a source file of reduce= the derived file of a period that ends with
 * it (api/reduce_write.c), written before the handle goes. */
#include "api/api.h"
#include "api/reduce.h"

int tsr_close(tsr_file **pf) {
  if (!pf || !*pf) return TSR_EINVAL;
  tsr_file *f = *pf;
  double t0 = tsr__now();
  int written = f->strategy && !f->in_define;
  int rc = tsr__file_end(f);
  if (written && f->reduce) {
    int drc = tsr__reduce_close(f, rc == 0);
    if (!rc) rc = drc;
  }
  return tsr__file_release(pf, t0, 1, rc);
}

int tsr_abort(tsr_file **pf) {
  if (pf && *pf && (*pf)->reduce) tsr__reduce_close(*pf, 0); /* drops the period; local */
  return tsr__file_abort(pf);
}
