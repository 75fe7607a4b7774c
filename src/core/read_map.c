/* Reading into a decomposition beyond one box (contract in core/internal.h):
 * the tile of a box canon, or the runs of a flat one through a plan run
 * backwards. Next to the reader (read.c calls it, read_plan.c holds the
 * region reads it uses) rather than in decomp_map.c, which builds the maps
 * and which the reader calls too. */
#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"
#include "core/read_plan.h"

/* Reading a flat decomposition runs a plan backwards: every rank reads one
 * slab of the variable (disjoint, large requests) and sends each piece of it
 * to the rank whose runs hold it. Reading each rank's covering box instead
 * would read the whole variable on every rank for scattered maps. */
static const char read_plans = 0; /* the reader's plans in the decomposition's cache */

static int read_layout(const tsr_decomp *d, const void *arg, tsr__layout *out) {
  (void)arg;
  int *w = malloc((size_t)d->ctx->size * sizeof *w);
  if (!w) return TSR_ENOMEM;
  for (int r = 0; r < d->ctx->size; r++) w[r] = r;
  int rc = tsr__layout_slabs(d->ndims, d->gsize, d->ctx->size, w, out);
  free(w);
  return rc;
}

static int read_flat(tsr_file *f, tsr__sink *sk, int varid, int64_t frame, const tsr_decomp *d,
                     void *buf, size_t es) {
  tsr_decomp *c = d->canon;
  tsr__plan *plan = NULL;
  int rc = tsr__plan_get(c, &read_plans, 0, 0, es, 0, read_layout, NULL, &plan);
  const tsr__exchange *ex = plan ? &plan->phases[0] : NULL;
  int64_t rbytes = ex ? ex->region_elems * (int64_t)es : 0, sbytes = ex ? ex->stage_bytes : 0;
  int64_t qbytes = ex ? ex->send_bytes : 0;
  int64_t pbytes = d->spans || d->perm ? d->my_elems * (int64_t)es : 0;
  if (!rc) rc = tsr__grow(&f->pack, &f->pack_cap, rbytes + sbytes + qbytes + pbytes + 1);
  /* Agree on the status and on how many collective reads every rank makes. */
  int v[2] = {rc, ex ? -ex->nmybox : 0}, m[2];
  if (MPI_Allreduce(v, m, 2, MPI_INT, MPI_MIN, f->ctx->comm) != MPI_SUCCESS) return TSR_EMPI;
  if (m[0]) return m[0];
  char *region = f->pack, *stage = region + rbytes, *recvbuf = stage + sbytes;
  char *packed = d->spans || d->perm ? recvbuf + qbytes : buf;
  rc = tsr__read_region(sk, ex, varid, frame, region, tsr__sink_parallel(sk) ? -m[1] : ex->nmybox);
  int xrc = tsr__exchange_run_reverse(f->ctx->comm, ex, &c->tiles, region, stage, recvbuf, packed);
  if (!rc) rc = xrc;
  if (!rc && packed != buf) tsr__decomp_unpack(d, es, packed, buf);
  return rc;
}

int tsr__decomp_read(tsr_file *f, tsr__sink *sk, int varid, int64_t frame, const tsr_decomp *d,
                     void *buf) {
  const tsr_decomp *c = d->canon;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  if (c->tiles.flat) return read_flat(f, sk, varid, frame, d, buf, es);
  const tsr__memview whole = {0};
  /* A box canon: read its tile (no halo) and unpack it. A parallel backend
   * reads collectively, so an empty rank still calls. */
  if (d->my_elems == 0 && !tsr__sink_parallel(sk)) return 0;
  int rc = tsr__grow(&f->pack, &f->pack_cap, c->my_elems * (int64_t)es + 1);
  if (rc) { /* still take part in the collective read, with nothing */
    int64_t zero[TSR_MAX_DIMS] = {0};
    if (tsr__sink_parallel(sk)) tsr__sink_read(sk, varid, frame, zero, zero, NULL, whole);
    return rc;
  }
  rc = tsr__sink_read(sk, varid, frame, c->tile.start, c->tile.count, f->pack, whole);
  if (rc || d->my_elems == 0) return rc;
  tsr__decomp_unpack(d, es, f->pack, buf);
  return 0;
}
