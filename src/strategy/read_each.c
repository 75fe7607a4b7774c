/* The read side where every rank reads its own tile straight from the file:
 * tsr_open's default (no strategy=), direct's, and split's over its pieces.
 * Through a parallel backend the file is opened collectively and each call
 * is one collective read; through a serial one every rank opens the file
 * itself and reads independently. Index maps, box lists and other memory
 * orders read through their canon: the tile of a box canon, or the runs of a
 * flat one through a plan run backwards. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strategy/read_common.h"

int tsr__read_each_setup(tsr_file *f, int parallel, tsr__readers *r) {
  r->mine = 1;
  r->comm = parallel ? f->ctx->comm : MPI_COMM_SELF;
  return 0;
}

/* Split pieces (split.c marks them with tessera_split_nranks) hold one
 * rank's tile under the file's dimension names with the tile's lengths:
 * reading one as if it were the whole file would give wrong shapes, not an
 * error. Joining is the tool's job, or split's read side's, whose merged
 * schema carries no such mark. */
static int refuse_split_piece(const tsr__schema *s, const char *path, char *msg, size_t msglen) {
  if (!tsr__att_find(s->gatts, s->ngatts, "tessera_split_nranks")) return 0;
  snprintf(msg, msglen,
           "'%s' is one piece of a file written with strategy=split; join the pieces with "
           "`tessera join` and open the joined file",
           path);
  return TSR_EFORMAT;
}

/* Every rank opened the file, so each holds its schema and record count;
 * what remains is refusing a split piece. */
int tsr__read_each_opened(tsr_file *f, const tsr__readers *r, int64_t *nrecs) {
  (void)r;
  (void)nrecs;
  return tsr__file_agree(
      f, refuse_split_piece(&f->schema, f->path, f->berr.message, sizeof f->berr.message));
}

int tsr__read_each_region(tsr__sink *sk, const tsr__exchange *ex, int varid, int64_t frame,
                          void *region, int nreads) {
  int64_t zero[TSR_MAX_DIMS] = {0};
  int rc = 0;
  for (int b = 0; b < nreads; b++) { /* a failed read still joins the later ones */
    int e = b < ex->nmybox
                ? tsr__sink_read(sk, varid, frame, ex->mybox[b].start, ex->mybox[b].count,
                                 (char *)region + ex->mybox_off[b] * (int64_t)ex->esize,
                                 (tsr__memview){0})
                : tsr__sink_read(sk, varid, frame, zero, zero, NULL, (tsr__memview){0});
    if (!rc) rc = e;
  }
  return rc;
}

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
  rc = tsr__read_each_region(sk, ex, varid, frame, region,
                             tsr__sink_parallel(sk) ? -m[1] : ex->nmybox);
  int xrc = tsr__exchange_run_reverse(f->ctx->comm, ex, &c->tiles, region, stage, recvbuf, packed);
  if (!rc) rc = xrc;
  if (!rc && packed != buf) tsr__decomp_unpack(d, es, packed, buf);
  return rc;
}

/* @p d's elements through d->canon: a flat canon's runs, or a box canon's
 * tile (no halo) unpacked into the caller's layout. */
static int read_canon(tsr_file *f, tsr__sink *sk, int varid, int64_t frame, const tsr_decomp *d,
                      void *buf) {
  const tsr_decomp *c = d->canon;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  if (c->tiles.flat) return read_flat(f, sk, varid, frame, d, buf, es);
  const tsr__memview whole = {0};
  /* A parallel backend reads collectively, so an empty rank still calls. */
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

int tsr__read_each_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid,
                       int64_t frame, const tsr_decomp *d, void *buf) {
  (void)r;
  const tsr__memview whole = {0};
  if (!d) { /* replicated: the whole frame of the variable on every rank */
    int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
    tsr__var_shape(&f->schema, varid, count);
    return tsr__sink_read(sk, varid, frame, start, count, buf, whole);
  }
  if (d->canon) return read_canon(f, sk, varid, frame, d, buf);
  /* A serial backend has nobody to wait for; a parallel one reads
   * collectively, so an empty tile still makes the (empty) call. */
  if (d->my_elems == 0 && !tsr__sink_parallel(sk)) return 0;
  int64_t moff[TSR_MAX_DIMS];
  tsr__memview mem = d->my_elems > 0 ? tsr__decomp_tile_view(d, moff) : whole;
  return tsr__sink_read(sk, varid, frame, d->tile.start, d->tile.count, buf, mem);
}

const tsr__read_ops tsr__read_each = {
    .setup = tsr__read_each_setup,
    .opened = tsr__read_each_opened,
    .get = tsr__read_each_get,
};
