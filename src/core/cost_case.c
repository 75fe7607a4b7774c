/* The cost model's geometry (contract in core/cost_case.h). Each function
 * is the one of python/tessera/model/case.py named beside it, step for step,
 * so that the first ranking of strategy=auto prices what `tessera model
 * predict` prices (tests/auto/check_cost_model.py compares the two). */
#include <stdlib.h>
#include <string.h>

#include "core/cost_case.h"

static int64_t prod(const int64_t *a, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= a[i];
  return p;
}

double tsr__cost_var_bytes(const tsr__cost_var *v) {
  return (double)prod(v->shape, 0, v->nd) * v->esize;
}

void tsr__cost_case_domain(tsr__cost_case *c) {
  c->nx = c->ny = 0;
  for (int i = 0; i < c->nvars; i++) {
    const tsr__cost_var *v = &c->vars[i];
    if (!v->decomposed) continue;
    if (!c->nx || v->shape[v->nd - 1] < c->nx) c->nx = v->shape[v->nd - 1];
    if (!c->ny || v->shape[v->nd - 2] < c->ny) c->ny = v->shape[v->nd - 2];
  }
}

int tsr__cost_case_from_schema(const tsr__schema *sc, tsr__cost_case *c) {
  memset(c, 0, sizeof *c);
  if (sc->nvars > 0 && !(c->vars = calloc((size_t)sc->nvars, sizeof *c->vars))) return -1;
  int tiled = 0;
  for (int i = 0; i < sc->nvars; i++) {
    if (!sc->vars[i].is_record) continue; /* written once, not per frame */
    tsr__cost_var *v = &c->vars[c->nvars++];
    v->nd = tsr__var_shape(sc, i, v->shape);
    v->esize = (int)tsr__type_size(sc->vars[i].type);
    v->decomposed = v->nd >= 2;
    tiled += v->decomposed;
  }
  tsr__cost_case_domain(c);
  /* WRF's staggered grids: one more point than the domain (west_east_stag). */
  for (int i = 0; i < c->nvars; i++) {
    tsr__cost_var *v = &c->vars[i];
    if (!v->decomposed) continue;
    v->xstag = v->shape[v->nd - 1] == c->nx + 1;
    v->ystag = v->shape[v->nd - 2] == c->ny + 1;
  }
  return tiled ? 0 : 1;
}

void tsr__cost_case_free(tsr__cost_case *c) {
  free(c->vars);
  memset(c, 0, sizeof *c);
}

/* dims_create: MPI_Dims_create(n, 2), larger first. */
void tsr__cost_grid(const tsr__cost_case *c, int ranks, int *px, int *py) {
  int d = 1;
  while ((d + 1) * (d + 1) <= ranks) d++;
  while (ranks % d) d--;
  int a = ranks / d, b = d;
  *px = c->nx >= c->ny ? a : b;
  *py = c->nx >= c->ny ? b : a;
}

/* _split_depth: the first k dimensions hold at least n rows. */
static int split_depth(const tsr__cost_var *v, int64_t n, int64_t *rows, int64_t *unit) {
  int k = 0;
  *rows = 1;
  while (k < v->nd && *rows < n) *rows *= v->shape[k++];
  *unit = prod(v->shape, k, v->nd);
  return k;
}

int64_t tsr__cost_slab_count(const tsr__cost_var *v, int64_t max_elems) {
  int64_t total = prod(v->shape, 0, v->nd);
  if (max_elems < 1) max_elems = 1;
  int64_t n = (total + max_elems - 1) / max_elems;
  if (n < 1) n = 1;
  for (;; n++) {
    int64_t rows, unit;
    split_depth(v, n, &rows, &unit);
    if ((rows + n - 1) / n * unit <= max_elems || n >= total) return n;
  }
}

/* tile_of: the tile of p holding index i of an n-long axis. */
static int64_t tile_of(int64_t n, int64_t p, int64_t i, int stag) {
  n -= stag;
  if (i >= n) return p - 1;
  int64_t base = n / p, rem = n % p;
  if (base == 0) return i < p - 1 ? i : p - 1;
  int64_t big = rem * (base + 1);
  return i < big ? i / (base + 1) : rem + (i - big) / base;
}

static int64_t tiles_touched(int64_t n, int64_t p, int64_t lo, int64_t hi, int stag) {
  if (hi <= lo) return 0;
  if (hi - lo >= n) return p < n ? p : n;
  return tile_of(n, p, hi - 1, stag) - tile_of(n, p, lo, stag) + 1;
}

void tsr__cost_fanin(const tsr__cost_var *v, int64_t n, int64_t p, int px, int py, int64_t *m,
                     double *bytes) {
  int nd = v->nd;
  *m = 0;
  *bytes = 0.0;
  if (nd < 2) {
    if (p == 0) *m = 1, *bytes = tsr__cost_var_bytes(v);
    return;
  }
  int64_t ny = v->shape[nd - 2], nx = v->shape[nd - 1], rows, unit;
  int k = split_depth(v, n, &rows, &unit);
  int64_t lo = rows * p / n, hi = rows * (p + 1) / n;
  if (hi <= lo) return;
  *bytes = (double)((hi - lo) * unit) * v->esize;
  if (k <= nd - 2) { /* whole (y, x) planes: every tile */
    *m = (int64_t)px * py;
  } else if (k == nd - 1) { /* rows of y inside planes (may wrap one plane) */
    int64_t y0 = lo % ny, y1 = (hi - 1) % ny + 1, ty;
    if (hi - lo >= ny) ty = py;
    else if (y1 > y0) ty = tiles_touched(ny, py, y0, y1, v->ystag);
    else {
      ty = tiles_touched(ny, py, y0, ny, v->ystag) + tiles_touched(ny, py, 0, y1, v->ystag);
      if (ty > py) ty = py;
    }
    *m = ty * px;
  } else { /* pieces smaller than one row of x */
    int64_t x0 = lo % nx, x1 = (hi - 1) % nx + 1;
    *m = x1 > x0 ? tiles_touched(nx, px, x0, x1, v->xstag) : (px < 2 ? px : 2);
  }
}

/* range_boxes: the boxes tsr__flat_range_boxes cuts rows [lo, hi) of the
 * first nd dimensions of shape into. */
static int64_t range_boxes(const int64_t *shape, int nd, int64_t lo, int64_t hi, int depth) {
  if (hi <= lo) return 0;
  int64_t inner = prod(shape, depth + 1, nd);
  int64_t a = lo / inner, b = hi / inner, alo = lo % inner, bhi = hi % inner;
  if (a == b) return range_boxes(shape, nd, alo, bhi, depth + 1);
  int64_t n = 0;
  if (alo) {
    n += range_boxes(shape, nd, alo, inner, depth + 1);
    a++;
  }
  if (b > a) n++;
  if (bhi) n += range_boxes(shape, nd, 0, bhi, depth + 1);
  return n;
}

int64_t tsr__cost_boxes(const tsr__cost_var *v, int64_t n) {
  int64_t total = 0, rows, unit;
  int k = split_depth(v, n, &rows, &unit);
  for (int64_t p = 0; p < n; p++) {
    int64_t lo = rows * p / n, hi = rows * (p + 1) / n;
    total += k ? range_boxes(v->shape, k, lo, hi, 0) : hi > lo;
  }
  return total;
}

/* tile_range's count: balanced, the remainder to the first tiles, a
 * staggered axis' extra point to the last. */
static int64_t tile_count(int64_t n, int64_t p, int64_t c, int stag) {
  int64_t base = (n - stag) / p, rem = (n - stag) % p;
  return base + (c < rem) + (c == p - 1 ? stag : 0);
}

double tsr__cost_tile_bytes(const tsr__cost_var *v, int px, int py) {
  int nd = v->nd;
  int64_t ty0 = tile_count(v->shape[nd - 2], py, 0, v->ystag);
  int64_t ty1 = tile_count(v->shape[nd - 2], py, py - 1, v->ystag);
  int64_t tx0 = tile_count(v->shape[nd - 1], px, 0, v->xstag);
  int64_t tx1 = tile_count(v->shape[nd - 1], px, px - 1, v->xstag);
  return (double)prod(v->shape, 0, nd - 2) * (ty0 > ty1 ? ty0 : ty1) * (tx0 > tx1 ? tx0 : tx1) *
         v->esize;
}

int64_t tsr__cost_file_pieces(const tsr__cost_var *v, int px, int py) {
  int64_t levels = prod(v->shape, 0, v->nd - 2);
  if (px > 1) return levels * v->shape[v->nd - 2] * px;
  return py > 1 ? levels * py : 1;
}
