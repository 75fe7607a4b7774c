/* strategy=serial on tsr_open (WRF io_form=2 input): one reader, the rank
 * writer= as for writing, opens the file on its own and reads it in slabs of
 * at most slab_bytes (the serial write plan's layout, tsr__layout_chunks),
 * each sent to the ranks whose tiles hold it (read_plans.c). */
#include <stdio.h>

#include "strategy/read_common.h"

/* Its plans' owner in a decomposition's cache: distinct from the serial
 * writer's (a decomposition may be written and read). */
static const char plans = 0;

static int sr_check(const tsr_file *f, char *msg, size_t msglen) {
  if (f->hints.writer >= 0 && f->hints.writer < f->ctx->size) return 0;
  snprintf(msg, msglen, "strategy=serial: writer=%d is not a rank of this job (0..%d)",
           f->hints.writer, f->ctx->size - 1);
  return TSR_EHINT;
}

static int sr_setup(tsr_file *f, int parallel, tsr__readers *r) {
  int rc = tsr__readers_alloc(r, 1);
  if (!rc) r->ranks[0] = f->hints.writer;
  return tsr__readers_setup(f, parallel, r, rc);
}

static int sr_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  const tsr__read_layout_arg *a = arg;
  return tsr__layout_chunks(d->ndims, d->gsize, a->f->hints.slab_bytes / (int64_t)a->esize,
                            a->r->ranks[0], out);
}

static int sr_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid, int64_t frame,
                  const tsr_decomp *d, void *buf) {
  const tsr__read_plan plan = {&plans, f->hints.slab_bytes, r->ranks[0], 1, sr_layout};
  return tsr__readers_get(f, sk, r, &plan, varid, frame, d, buf);
}

const tsr__read_ops tsr__serial_read = {
    .check = sr_check,
    .setup = sr_setup,
    .opened = tsr__readers_opened,
    .get = sr_get,
};
