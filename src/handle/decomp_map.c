/* Decompositions beyond one box in file order: index maps (PIO's compdof,
 * MPAS cells), several boxes per rank, and boxes held in another memory
 * order (WRF's a(i,k,j)).
 *
 * Each becomes a `canon` decomposition the strategies already handle, and
 * tsr_put packs the caller's buffer into it (tsr_get unpacks):
 * - a map or box list whose elements form one box on every rank becomes that
 *   box, so the box engine's fast path serves it; the buffer is packed only
 *   when its order differs from the box's C order;
 * - anything else becomes flat runs in index order (plan/runs.h), which the
 *   plan engine exchanges with one memcpy per run piece;
 * - a shuffled map (a perm index per element) is read in place by the
 *   strategies that pack through the plan engine (tiles.perm): no pack;
 * - a box in another memory order becomes the box without halos, packed by a
 *   copy whose innermost rows stay memcpy when the fastest dimension is the
 *   file's fastest (XZY). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"

/* The outer handle: what the caller holds; the checks of tsr_put/tsr_get
 * (shape, element count) read it, the strategies get its canon. */
static tsr_decomp *outer_of(tsr_ctx *ctx, int ndims, const int64_t gsize[], tsr_decomp *canon,
                            int64_t my_elems) {
  tsr_decomp *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->ctx = ctx;
  d->id = ++ctx->next_id;
  d->ndims = ndims;
  memcpy(d->gsize, gsize, (size_t)ndims * sizeof *gsize);
  d->canon = canon;
  d->tile = canon->tile; /* split lays pieces out from it (box canons only) */
  d->mem = canon->tile;
  d->my_elems = my_elems;
  d->owned_elems = canon->owned_elems;
  d->total_elems = canon->total_elems;
  d->tiles = canon->tiles;
  return d;
}

/* The flat canon: runs, the global element count, overlaps and holes found
 * through the directory (collective). */
static int flat_canon(tsr_ctx *ctx, int ndims, const int64_t gsize[], int64_t *runs,
                      int64_t nruns, int64_t my_elems, tsr_decomp **out) {
  tsr_decomp *c = calloc(1, sizeof *c);
  int rc = c ? 0 : TSR_ENOMEM;
  int64_t owned = 0, *hole_runs = NULL, nhole_runs = 0;
  int overlap = 0;
  if (c) {
    c->ctx = ctx;
    c->id = ++ctx->next_id;
    c->ndims = ndims;
    memcpy(c->gsize, gsize, (size_t)ndims * sizeof *gsize);
    c->my_elems = my_elems;
    c->total_elems = 1;
    for (int i = 0; i < ndims; i++) c->total_elems *= gsize[i];
    c->runs = runs;
    runs = NULL;
    tsr__tiles *t = &c->tiles;
    t->ndims = ndims;
    memcpy(t->gsize, gsize, (size_t)ndims * sizeof *gsize); /* the rest stays 0 */
    t->nranks = ctx->size;
    t->rank = ctx->rank;
    t->flat = 1;
    t->nruns = nruns;
    t->runs = c->runs;
    t->comm = ctx->comm;
    t->my_elems = my_elems;
  }
  free(runs);
  rc = tsr__agree(ctx->comm, rc);
  if (rc) goto done;
  if (MPI_Allreduce(&my_elems, &owned, 1, MPI_INT64_T, MPI_SUM, ctx->comm) != MPI_SUCCESS)
    rc = TSR_EMPI;
  c->owned_elems = owned;
  if (!rc) rc = tsr__runs_check(&c->tiles, &overlap, &hole_runs, &nhole_runs);
  if (!rc && overlap) {
    TSR_LOG("index maps of two ranks share an element");
    rc = TSR_EDECOMP;
  }
  /* This rank's share of the holes, as boxes its strategy can write. */
  if (!rc && nhole_runs > 0) {
    c->holes = malloc((size_t)nhole_runs * (size_t)(2 * ndims) * sizeof *c->holes);
    if (!c->holes) rc = TSR_ENOMEM;
    for (int64_t h = 0; h < nhole_runs && !rc; h++)
      c->nholes += tsr__flat_range_boxes(ndims, gsize, hole_runs[2 * h], hole_runs[2 * h + 1],
                                         c->holes + c->nholes);
  }
  c->holes_here = 1;
  rc = tsr__agree(ctx->comm, rc);
done:
  free(hole_runs);
  if (rc) tsr_decomp_free(&c);
  *out = c;
  return rc;
}

/* Shared tail of tsr_decomp_map and tsr_decomp_boxes: from this rank's
 * spans (and status @p rc) to a decomposition. Collective. */
static int from_spans(tsr_ctx *ctx, int rc, int ndims, const int64_t gsize[], tsr__span *spans,
                      int64_t nspans, int64_t nelems, tsr_decomp **out) {
  int64_t *runs = NULL, nruns = 0;
  tsr__box cover;
  memset(&cover, 0, sizeof cover);
  int is_box = 1;
  if (!rc) rc = tsr__runs_from_spans(spans, nspans, &runs, &nruns);
  if (!rc) is_box = tsr__runs_cover(ndims, gsize, runs, nruns, &cover);
  /* One reduction: the status, and whether every rank's elements form a box. */
  int v[2] = {rc, is_box}, m[2];
  if (MPI_Allreduce(v, m, 2, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS) m[0] = TSR_EMPI;
  tsr_decomp *canon = NULL;
  if (m[0]) {
    rc = m[0];
  } else if (m[1]) {
    free(runs);
    runs = NULL;
    rc = tsr__decomp_new_box(ctx, 0, ndims, gsize, cover.start, cover.count, NULL, NULL, &canon);
  } else {
    rc = flat_canon(ctx, ndims, gsize, runs, nruns, nelems, &canon);
    runs = NULL;
  }
  free(runs);
  tsr_decomp *d = NULL;
  if (!rc) {
    d = outer_of(ctx, ndims, gsize, canon, nelems);
    if (d && !tsr__spans_identity(spans, nspans)) {
      d->spans = spans;
      d->nspans = nspans;
      spans = NULL;
      /* Spans of one or two elements (a shuffled map) pack faster from a
       * plain index per element: a sixth of the bytes to stream. */
      if (nelems < INT32_MAX && d->nspans * 2 > nelems) {
        d->perm = malloc((size_t)(nelems > 0 ? nelems : 1) * sizeof *d->perm);
        for (int64_t i = 0, k = 0; d->perm && i < d->nspans; i++)
          for (int64_t e = 0; e < d->spans[i].len; e++) d->perm[k++] = (int32_t)(d->spans[i].src + e);
        if (d->perm) {
          free(d->spans);
          d->spans = NULL;
          d->nspans = 0;
          /* serial and aggregate gather through perm straight into their
           * messages (plan/tiles.h) instead of packing first: a shuffled
           * map then costs one random-access pass over the buffer, not a
           * pack plus the box's copy. Plans are cached on this handle. */
          d->tiles.perm = d->perm;
        }
      }
    }
    rc = tsr__agree(ctx->comm, d ? 0 : TSR_ENOMEM);
  }
  free(spans);
  if (rc) {
    if (d) tsr_decomp_free(&d);
    else tsr_decomp_free(&canon);
  }
  *out = d;
  return rc;
}

/* Local checks shared by the constructors. */
static int check_shape(int ndims, const int64_t gsize[], int64_t *total) {
  if (ndims < 1 || ndims > TSR_MAX_DIMS || !gsize) return TSR_EINVAL;
  *total = 1;
  for (int i = 0; i < ndims; i++) {
    if (gsize[i] < 1) return TSR_EINVAL;
    *total *= gsize[i];
  }
  return 0;
}

/* The end of tsr_decomp_map and tsr_decomp_boxes: agree on the result and
 * the shape, then build the decomposition from this rank's spans (taken
 * over, freed on error); the time counts as blocked. */
static int finish_spans(tsr_ctx *ctx, int rc, int ndims, const int64_t gsize[],
                        tsr__span *spans, int64_t nspans, int64_t nelems, double t0,
                        tsr_decomp **out) {
  rc = tsr__decomp_agree_shape(ctx, rc, ndims, gsize);
  tsr_decomp *d = NULL;
  if (!rc) rc = from_spans(ctx, 0, ndims, gsize, spans, nspans, nelems, &d);
  else free(spans);
  if (!rc) *out = d;
  ctx->stats.blocked_s += tsr__now() - t0;
  return rc;
}

int tsr_decomp_map(tsr_ctx *ctx, int ndims, const int64_t gsize[], int64_t n,
                   const int64_t idx[], tsr_decomp **out) {
  if (out) *out = NULL;
  if (!ctx) return TSR_ESTATE;
  double t0 = tsr__now();
  int64_t total = 0, nspans = 0, nelems = 0;
  tsr__span *spans = NULL;
  int rc = out ? check_shape(ndims, gsize, &total) : TSR_EINVAL;
  if (!rc && (n < 0 || (n > 0 && !idx))) rc = TSR_EINVAL;
  if (!rc) rc = tsr__spans_from_map(idx, n, total, &spans, &nspans, &nelems);
  return finish_spans(ctx, rc, ndims, gsize, spans, nspans, nelems, t0, out);
}

int tsr_decomp_boxes(tsr_ctx *ctx, int ndims, const int64_t gsize[], int nboxes,
                     const int64_t start[], const int64_t count[], tsr_decomp **out) {
  if (out) *out = NULL;
  if (!ctx) return TSR_ESTATE;
  double t0 = tsr__now();
  int64_t total = 0, nspans = 0, nelems = 0;
  tsr__span *spans = NULL;
  int rc = out ? check_shape(ndims, gsize, &total) : TSR_EINVAL;
  if (!rc && (nboxes < 0 || (nboxes > 0 && (!start || !count)))) rc = TSR_EINVAL;
  tsr__box *boxes = NULL;
  if (!rc) {
    boxes = calloc((size_t)(nboxes > 0 ? nboxes : 1), sizeof *boxes);
    if (!boxes) rc = TSR_ENOMEM;
    for (int b = 0; b < nboxes && !rc; b++)
      for (int i = 0; i < ndims; i++) {
        boxes[b].start[i] = start[(size_t)b * (size_t)ndims + (size_t)i];
        boxes[b].count[i] = count[(size_t)b * (size_t)ndims + (size_t)i];
      }
  }
  if (!rc) rc = tsr__spans_from_boxes(ndims, gsize, nboxes, boxes, &spans, &nspans, &nelems);
  free(boxes);
  return finish_spans(ctx, rc, ndims, gsize, spans, nspans, nelems, t0, out);
}

int tsr_decomp_box_ordered(tsr_ctx *ctx, int ndims, const int64_t gsize[], const int64_t start[],
                           const int64_t count[], const int64_t mstart[], const int64_t mcount[],
                           const int order[], tsr_decomp **out) {
  if (out) *out = NULL;
  if (!ctx) return TSR_ESTATE;
  int rc = 0, identity = 1;
  if (order && ndims >= 1 && ndims <= TSR_MAX_DIMS) {
    int seen[TSR_MAX_DIMS] = {0};
    for (int k = 0; k < ndims && !rc; k++) {
      if (order[k] < 0 || order[k] >= ndims || seen[order[k]]++) rc = TSR_EINVAL;
      identity &= order[k] == k;
    }
  }
  /* In file order nothing is packed: the plain box, halos and all. */
  if (rc || identity)
    return tsr__decomp_new_box(ctx, rc, ndims, gsize, start, count, mstart, mcount, out);
  if ((mstart == NULL) != (mcount == NULL)) rc = TSR_EINVAL;
  for (int i = 0; !rc && mstart && i < ndims; i++)
    if (mcount[i] < 0 || mstart[i] > start[i] || mstart[i] + mcount[i] < start[i] + count[i])
      rc = TSR_EDECOMP;
  tsr_decomp *canon = NULL;
  rc = tsr__decomp_new_box(ctx, rc, ndims, gsize, start, count, NULL, NULL, &canon);
  if (rc) return rc;
  tsr_decomp *d = outer_of(ctx, ndims, gsize, canon, canon->my_elems);
  if (d) {
    d->ordered = 1;
    memcpy(d->order, order, (size_t)ndims * sizeof *order);
    for (int i = 0; i < ndims; i++) {
      d->mem.start[i] = mstart ? mstart[i] : start[i];
      d->mem.count[i] = mcount ? mcount[i] : count[i];
    }
    /* Strategies that pack through the plan engine take this handle itself
     * and read the caller's memory in place: the canon's tiles (every rank's
     * tile, shared, not owned) with my memory box in its order. Plans are
     * cached on it like on any box. */
    d->tiles.mem = d->mem;
    d->tiles.ordered = 1;
    memcpy(d->tiles.order, order, (size_t)ndims * sizeof *order);
  }
  rc = tsr__agree(ctx->comm, d ? 0 : TSR_ENOMEM);
  if (rc) {
    if (d) tsr_decomp_free(&d);
    else tsr_decomp_free(&canon);
    return rc;
  }
  *out = d;
  return 0;
}

/* Copy the tile between the caller's memory (C-ordered over the memory box,
 * dimensions in d->order) and a C-ordered tile in file order. Walks the tile
 * in file order; rows are one memcpy when the fastest file dimension is also
 * the fastest in memory. */
static void copy_ordered(const tsr_decomp *d, size_t es, const void *mem, void *tile, int to_mem) {
  int nd = d->ndims;
  int64_t mst[TSR_MAX_DIMS], s = 1;
  for (int k = nd - 1; k >= 0; k--) {
    mst[d->order[k]] = s;
    s *= d->mem.count[d->order[k]];
  }
  const tsr__box *t = &d->tile;
  if (tsr__box_elems(nd, t) == 0) return;
  int64_t rows = 1, row = t->count[nd - 1], idx[TSR_MAX_DIMS] = {0};
  for (int i = 0; i < nd - 1; i++) rows *= t->count[i];
  char *tp = tile;
  char *mp = (char *)mem;
  for (int64_t r = 0; r < rows; r++) {
    int64_t mo = 0;
    for (int i = 0; i < nd; i++) mo += (t->start[i] - d->mem.start[i] + (i < nd - 1 ? idx[i] : 0)) * mst[i];
    char *m = mp + mo * (int64_t)es;
    if (mst[nd - 1] == 1) {
      if (to_mem) memcpy(m, tp, (size_t)row * es);
      else memcpy(tp, m, (size_t)row * es);
    } else {
      int64_t step = mst[nd - 1] * (int64_t)es;
      for (int64_t x = 0; x < row; x++) {
        if (to_mem) memcpy(m + x * step, tp + x * (int64_t)es, es);
        else memcpy(tp + x * (int64_t)es, m + x * step, es);
      }
    }
    tp += row * (int64_t)es;
    for (int i = nd - 2; i >= 0; i--) {
      if (++idx[i] < t->count[i]) break;
      idx[i] = 0;
    }
  }
}

/* packed[j] = buf[perm[j]] (or back, for reading), by element size. */
#define PERMUTE(T)                                                              \
  do {                                                                          \
    T *p = packed;                                                              \
    T *b = buf;                                                                 \
    if (to_buf)                                                                 \
      for (int64_t j = 0; j < n; j++) b[perm[j]] = p[j];                        \
    else                                                                        \
      for (int64_t j = 0; j < n; j++) p[j] = b[perm[j]];                        \
  } while (0)
static void permute(const int32_t *perm, int64_t n, size_t es, const void *cbuf, void *packed,
                    int to_buf) {
  void *buf = (void *)cbuf; /* written only when to_buf */
  if (es == 4) PERMUTE(int32_t);
  else if (es == 8) PERMUTE(int64_t);
  else if (es == 2) PERMUTE(int16_t);
  else if (es == 1) PERMUTE(char);
  else
    for (int64_t j = 0; j < n; j++)
      if (to_buf) memcpy((char *)buf + perm[j] * (int64_t)es, (char *)packed + j * (int64_t)es, es);
      else memcpy((char *)packed + j * (int64_t)es, (char *)buf + perm[j] * (int64_t)es, es);
}
#undef PERMUTE

int tsr__decomp_pack(tsr_file *f, const tsr_decomp *d, size_t esize, const void *buf,
                     const void **out) {
  *out = buf;
  if (!d->canon || (!d->ordered && !d->spans && !d->perm)) return 0; /* read in place */
  int rc = tsr__grow(&f->pack, &f->pack_cap, d->my_elems * (int64_t)esize + 1);
  if (rc) return rc;
  if (d->ordered) copy_ordered(d, esize, buf, f->pack, 0);
  else if (d->perm) permute(d->perm, d->my_elems, esize, buf, f->pack, 0);
  else tsr__spans_pack(d->spans, d->nspans, esize, buf, f->pack);
  *out = f->pack;
  return 0;
}

void tsr__decomp_unpack(const tsr_decomp *d, size_t es, const void *packed, void *buf) {
  if (d->my_elems == 0) return;
  if (d->ordered) copy_ordered(d, es, buf, (void *)packed, 1);
  else if (d->perm) permute(d->perm, d->my_elems, es, buf, (void *)packed, 1);
  else if (d->spans) tsr__spans_unpack(d->spans, d->nspans, es, packed, buf);
  else memcpy(buf, packed, (size_t)(d->my_elems * (int64_t)es));
}
