/* Box decompositions: every rank's tile, checked once for overlaps and
 * bounds, and the boxes no rank owns (holes), which writers fill. */
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"

/* Above this many grid cells the overlap check falls back to a sweep and
 * decompositions with holes are refused (irregular tilings of huge runs). */
#define TSR__MAX_CELLS (1 << 24)

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The plan engine's view of the decomposition (plan/tiles.h). */
static void set_tiles(tsr_decomp *d) {
  tsr__tiles *t = &d->tiles;
  t->ndims = d->ndims;
  memcpy(t->gsize, d->gsize, sizeof t->gsize);
  t->nranks = d->ctx->size;
  t->rank = d->ctx->rank;
  t->all = d->all;
  t->tile = d->tile;
  t->mem = d->mem;
  t->my_elems = d->my_elems;
  t->comm = d->ctx->comm;
}

void tsr__decomp_tile_of(const tsr_decomp *d, int r, tsr__box *out) {
  tsr__tiles_tile_of(&d->tiles, r, out);
}

tsr__memview tsr__decomp_tile_view(const tsr_decomp *d, int64_t moffset[TSR_MAX_DIMS]) {
  int same = 1;
  for (int i = 0; i < d->ndims; i++) {
    moffset[i] = d->tile.start[i] - d->mem.start[i];
    same &= moffset[i] == 0 && d->mem.count[i] == d->tile.count[i];
  }
  if (same) return (tsr__memview){0};
  return (tsr__memview){d->mem.count, moffset, 0};
}

/* Sorted unique cut points of dimension i: 0, gsize, every tile start and end. */
static int64_t *cuts_of(const tsr_decomp *d, int i, int *n) {
  int size = d->ctx->size;
  int64_t *c = malloc((size_t)(2 * size + 2) * sizeof *c);
  if (!c) return NULL;
  int k = 0;
  c[k++] = 0;
  c[k++] = d->gsize[i];
  for (int r = 0; r < size; r++) {
    tsr__box t;
    tsr__decomp_tile_of(d, r, &t);
    if (tsr__box_elems(d->ndims, &t) == 0) continue;
    c[k++] = t.start[i];
    c[k++] = t.start[i] + t.count[i];
  }
  qsort(c, (size_t)k, sizeof *c, cmp_i64);
  int u = 0;
  for (int j = 0; j < k; j++)
    if (u == 0 || c[j] != c[u - 1]) c[u++] = c[j];
  *n = u;
  return c;
}

static int find_cut(const int64_t *c, int n, int64_t v) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (c[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Grid method: the cut points of all tiles split the domain into cells that
 * each lie wholly inside or outside every tile. Count owners per cell: two
 * or more is an overlap, none is a hole. */
static int check_grid(tsr_decomp *d, int64_t *cuts[], const int ncut[], int64_t ncells) {
  int nd = d->ndims, size = d->ctx->size, rc = 0;
  unsigned char *own = calloc((size_t)ncells, 1);
  if (!own) return TSR_ENOMEM;
  int64_t cstride[TSR_MAX_DIMS];
  cstride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) cstride[i] = cstride[i + 1] * (ncut[i + 1] - 1);
  for (int r = 0; r < size && !rc; r++) {
    tsr__box t;
    tsr__decomp_tile_of(d, r, &t);
    if (tsr__box_elems(nd, &t) == 0) continue;
    int lo[TSR_MAX_DIMS], hi[TSR_MAX_DIMS], idx[TSR_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
      lo[i] = idx[i] = find_cut(cuts[i], ncut[i], t.start[i]);
      hi[i] = find_cut(cuts[i], ncut[i], t.start[i] + t.count[i]);
    }
    for (;;) {
      int64_t cell = 0;
      for (int i = 0; i < nd; i++) cell += idx[i] * cstride[i];
      if (own[cell]++) {
        rc = TSR_EDECOMP;
        TSR_LOG("tile of rank %d overlaps another tile", r);
        break;
      }
      int i = nd - 1;
      while (i >= 0 && ++idx[i] == hi[i]) idx[i] = lo[i], i--;
      if (i < 0) break;
    }
  }
  for (int64_t c = 0; c < ncells && !rc; c++) {
    if (own[c]) continue;
    tsr__box *nh = realloc(d->holes, (size_t)(d->nholes + 1) * sizeof *nh);
    if (!nh) {
      rc = TSR_ENOMEM;
      break;
    }
    d->holes = nh;
    int64_t rem = c;
    for (int i = 0; i < nd; i++) {
      int k = (int)(rem / cstride[i]);
      rem %= cstride[i];
      nh[d->nholes].start[i] = cuts[i][k];
      nh[d->nholes].count[i] = cuts[i][k + 1] - cuts[i][k];
    }
    d->nholes++;
  }
  free(own);
  return rc;
}

/* Sweep: tiles sorted by their start in the slowest dimension; only tiles
 * whose ranges there overlap can intersect. */
static const tsr_decomp *by_start0_decomp; /* qsort has no context argument */
static int cmp_start0(const void *a, const void *b) {
  tsr__box ta, tb;
  tsr__decomp_tile_of(by_start0_decomp, *(const int *)a, &ta);
  tsr__decomp_tile_of(by_start0_decomp, *(const int *)b, &tb);
  return (ta.start[0] > tb.start[0]) - (ta.start[0] < tb.start[0]);
}

static int check_sweep(tsr_decomp *d) {
  int size = d->ctx->size, nd = d->ndims, rc = 0;
  int *order = malloc((size_t)size * sizeof *order);
  if (!order) return TSR_ENOMEM;
  for (int r = 0; r < size; r++) order[r] = r;
  by_start0_decomp = d;
  qsort(order, (size_t)size, sizeof *order, cmp_start0);
  for (int a = 0; a < size && !rc; a++) {
    tsr__box ta, tb, x;
    tsr__decomp_tile_of(d, order[a], &ta);
    if (tsr__box_elems(nd, &ta) == 0) continue;
    for (int b = a + 1; b < size; b++) {
      tsr__decomp_tile_of(d, order[b], &tb);
      if (tb.start[0] >= ta.start[0] + ta.count[0]) break;
      if (tsr__box_elems(nd, &tb) && tsr__box_intersect(nd, &ta, &tb, &x)) {
        rc = TSR_EDECOMP;
        break;
      }
    }
  }
  free(order);
  if (!rc && d->owned_elems < d->total_elems) {
    TSR_LOG("irregular decomposition with unowned points is too large to map its holes");
    rc = TSR_EDECOMP;
  }
  return rc;
}

static int check_tiles(tsr_decomp *d) {
  int nd = d->ndims, ncut[TSR_MAX_DIMS], rc = 0;
  int64_t *cuts[TSR_MAX_DIMS] = {0}, ncells = 1;
  for (int i = 0; i < nd && !rc; i++) {
    cuts[i] = cuts_of(d, i, &ncut[i]);
    if (!cuts[i]) rc = TSR_ENOMEM;
    else if (ncells <= TSR__MAX_CELLS) ncells *= ncut[i] - 1;
  }
  if (!rc) rc = ncells <= TSR__MAX_CELLS ? check_grid(d, cuts, ncut, ncells) : check_sweep(d);
  for (int i = 0; i < nd; i++) free(cuts[i]);
  return rc;
}

/* Local checks of this rank's arguments. */
static int check_args(int ndims, const int64_t gsize[], const int64_t start[],
                      const int64_t count[], const int64_t mstart[], const int64_t mcount[]) {
  if (ndims < 1 || ndims > TSR_MAX_DIMS || !gsize || !start || !count) return TSR_EINVAL;
  for (int i = 0; i < ndims; i++) {
    if (gsize[i] < 1 || count[i] < 0) return TSR_EINVAL;
    if (start[i] < 0 || start[i] + count[i] > gsize[i]) return TSR_EDECOMP;
    if ((mstart == NULL) != (mcount == NULL)) return TSR_EINVAL;
    if (mstart && (mcount[i] < 0 || mstart[i] > start[i] ||
                   mstart[i] + mcount[i] < start[i] + count[i]))
      return TSR_EDECOMP;
  }
  return 0;
}

int tsr_decomp_box(tsr_ctx *ctx, int ndims, const int64_t gsize[], const int64_t start[],
                   const int64_t count[], const int64_t mstart[], const int64_t mcount[],
                   tsr_decomp **out) {
  if (out) *out = NULL;
  if (!ctx) return TSR_ESTATE;
  return tsr__decomp_new_box(ctx, 0, ndims, gsize, start, count, mstart, mcount, out);
}

/* Every rank must describe the same global array: compare shapes by
 * reducing (ndims, gsize) and their negatives with MIN in one call. A rank's
 * error @p rc is agreed first (its shape then counts as none). */
int tsr__decomp_agree_shape(tsr_ctx *ctx, int rc, int ndims, const int64_t gsize[]) {
  int64_t v[2 + 2 * TSR_MAX_DIMS] = {0}, m[2 + 2 * TSR_MAX_DIMS];
  int nd = rc ? 0 : ndims;
  v[0] = nd;
  v[1] = -nd;
  for (int i = 0; i < TSR_MAX_DIMS; i++) {
    v[2 + i] = i < nd ? gsize[i] : 0;
    v[2 + TSR_MAX_DIMS + i] = -v[2 + i];
  }
  int agreed = tsr__agree(ctx->comm, rc);
  if (MPI_Allreduce(v, m, 2 + 2 * TSR_MAX_DIMS, MPI_INT64_T, MPI_MIN, ctx->comm) != MPI_SUCCESS)
    return TSR_EMPI;
  if (agreed) return agreed;
  if (m[0] != -m[1]) return TSR_EINVAL; /* ranks disagree on ndims */
  for (int i = 0; i < TSR_MAX_DIMS; i++)
    if (m[2 + i] != -m[2 + TSR_MAX_DIMS + i]) return TSR_EINVAL; /* ... or on gsize */
  return 0;
}

int tsr__decomp_new_box(tsr_ctx *ctx, int rc0, int ndims, const int64_t gsize[],
                        const int64_t start[], const int64_t count[], const int64_t mstart[],
                        const int64_t mcount[], tsr_decomp **out) {
  double t0 = tsr__now();
  int rc = out ? check_args(ndims, gsize, start, count, mstart, mcount) : TSR_EINVAL;
  if (rc0 && (!rc || rc0 == TSR_EDECOMP)) rc = rc0;
  int agreed = tsr__decomp_agree_shape(ctx, rc, ndims, gsize);
  if (agreed) goto done;

  tsr_decomp *d = calloc(1, sizeof *d);
  rc = d ? 0 : TSR_ENOMEM;
  if (d) {
    d->ctx = ctx;
    d->id = ++ctx->next_id;
    d->ndims = ndims;
    int empty = 0;
    for (int i = 0; i < ndims; i++) empty |= count[i] == 0;
    d->my_elems = d->total_elems = 1;
    for (int i = 0; i < ndims; i++) {
      d->gsize[i] = gsize[i];
      d->tile.start[i] = start[i];
      d->tile.count[i] = empty ? 0 : count[i];
      d->mem.start[i] = mstart ? mstart[i] : start[i];
      d->mem.count[i] = mcount ? mcount[i] : count[i];
      d->my_elems *= d->tile.count[i];
      d->total_elems *= gsize[i];
    }
    d->all = malloc((size_t)ctx->size * 2 * (size_t)ndims * sizeof(int64_t));
    if (!d->all) rc = TSR_ENOMEM;
  }
  agreed = tsr__agree(ctx->comm, rc);
  if (!agreed) {
    int64_t mine[2 * TSR_MAX_DIMS];
    for (int i = 0; i < ndims; i++) {
      mine[i] = d->tile.start[i];
      mine[ndims + i] = d->tile.count[i];
    }
    if (MPI_Allgather(mine, 2 * ndims, MPI_INT64_T, d->all, 2 * ndims, MPI_INT64_T, ctx->comm) !=
        MPI_SUCCESS)
      agreed = TSR_EMPI;
  }
  if (!agreed) {
    set_tiles(d);
    for (int r = 0; r < ctx->size; r++) {
      tsr__box t;
      tsr__decomp_tile_of(d, r, &t);
      d->owned_elems += tsr__box_elems(ndims, &t);
    }
    /* Every rank runs the same deterministic check on the same data, so all
     * reach the same verdict; agreeing again only guards against ENOMEM. */
    agreed = tsr__agree(ctx->comm, check_tiles(d));
  }
  if (agreed) tsr_decomp_free(&d);
  else *out = d;
done:
  ctx->stats.blocked_s += tsr__now() - t0;
  return agreed;
}

/* The parts a decomposition beyond one box adds (decomp_map.c builds them);
 * here, with tsr_decomp_free, so that freeing calls nothing above it. */
void tsr__decomp_free_extra(tsr_decomp *d) {
  if (d->canon) tsr_decomp_free(&d->canon);
  free(d->spans);
  free(d->perm);
  free(d->runs);
  d->perm = NULL;
  d->spans = NULL;
  d->runs = NULL;
}

void tsr_decomp_free(tsr_decomp **d) {
  if (!d || !*d) return;
  tsr__plans_free((*d)->plans);
  tsr__decomp_free_extra(*d);
  free((*d)->all);
  free((*d)->holes);
  free(*d);
  *d = NULL;
}
