/* Walking a shape's points in the model's memory: rows, the offset of a
 * global index, its (k, j, i). Boxes here, cell shapes through cells.c. Apart
 * from fields.c, which sets the shapes up, because the check (check.c) and
 * the physical state (atmosphere.c), which fields.c calls, walk them too. */
#include "bench.h"

void bench_shape_rows(const bench_shape *sh, int tile_only, bench_row_fn fn, void *arg) {
  if (sh->ncells >= 0) {
    bench_cells_rows(sh, fn, arg);
    return;
  }
  int nd = sh->ndims;
  int64_t lo[TSR_MAX_DIMS], cnt[TSR_MAX_DIMS], idx[TSR_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    lo[d] = tile_only ? sh->start[d] : sh->mstart[d];
    cnt[d] = tile_only ? sh->count[d] : sh->mcount[d];
    if (cnt[d] <= 0) return;
    idx[d] = lo[d];
  }
  for (;;) {
    /* Rows run along the last file dimension, which is the fastest in
     * memory in either order (XZY keeps x innermost). */
    int64_t moff = 0;
    for (int d = 0; d < nd; d++) moff += (idx[d] - sh->mstart[d]) * sh->mstride[d];
    fn(arg, sh, moff, idx, cnt[nd - 1]);
    int d = nd - 2;
    for (; d >= 0; d--) {
      if (++idx[d] < lo[d] + cnt[d]) break;
      idx[d] = lo[d];
    }
    if (d < 0) return;
  }
}

int64_t bench_shape_offset(const bench_shape *sh, const int64_t gidx[]) {
  if (sh->ncells >= 0) return bench_cells_offset(sh, gidx);
  int64_t off = 0;
  for (int d = 0; d < sh->ndims; d++) {
    if (gidx[d] < sh->start[d] || gidx[d] >= sh->start[d] + sh->count[d]) return -1;
    off += (gidx[d] - sh->mstart[d]) * sh->mstride[d];
  }
  return off;
}

void bench_shape_kji(const bench_shape *sh, const int64_t gidx[], int64_t *k, int64_t *j,
                     int64_t *i) {
  int64_t kk = 0;
  for (int d = 0; d < sh->ndims; d++)
    if (d != sh->xdim && d != sh->ydim) kk = kk * sh->gsize[d] + gidx[d];
  *k = kk;
  *j = sh->ydim >= 0 ? gidx[sh->ydim] : 0;
  *i = sh->xdim >= 0 ? gidx[sh->xdim] : 0;
}
