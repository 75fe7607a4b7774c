#include "plan/layout.h"

#include <stdlib.h>
#include <string.h>

/* Smallest k such that the first k dimensions hold at least n rows, so
 * pieces can be cut on row boundaries of those k dimensions. */
static int split_depth(int nd, const int64_t shape[], int maxk, int64_t n, int64_t *rows,
                       int64_t *unit) {
  int64_t r = 1;
  int k = 0;
  while (k < maxk && r < n) r *= shape[k++];
  int64_t u = 1;
  for (int i = k; i < nd; i++) u *= shape[i];
  *rows = r;
  *unit = u;
  return k;
}

static int64_t piece_lo(int64_t rows, int npieces, int p) {
  return rows * p / npieces; /* balanced: sizes differ by at most one row */
}

int tsr__layout_slabs(int nd, const int64_t shape[], int npieces, const int writers[],
                      tsr__layout *out) {
  return tsr__layout_slabs_keep(nd, shape, 0, npieces, writers, out);
}

int tsr__layout_slabs_keep(int nd, const int64_t shape[], int keep, int npieces,
                           const int writers[], tsr__layout *out) {
  memset(out, 0, sizeof *out);
  if (npieces < 1 || keep < 0) return TSR_EINVAL;
  int64_t rows, unit;
  int k = split_depth(nd, shape, nd > keep ? nd - keep : 0, npieces, &rows, &unit);
  int maxb = 2 * (k > 0 ? k : 1);
  out->npieces = npieces;
  out->writers = malloc((size_t)npieces * sizeof(int));
  out->first = malloc((size_t)(npieces + 1) * sizeof(int));
  out->boxes = malloc((size_t)npieces * (size_t)maxb * sizeof(tsr__box));
  if (!out->writers || !out->first || !out->boxes) {
    tsr__layout_free(out);
    return TSR_ENOMEM;
  }
  int nb = 0;
  for (int p = 0; p < npieces; p++) {
    out->writers[p] = writers[p];
    out->first[p] = nb;
    int64_t lo = piece_lo(rows, npieces, p), hi = piece_lo(rows, npieces, p + 1);
    if (nd == 0) { /* a scalar variable belongs to the first piece */
      if (p == 0) nb++;
      continue;
    }
    int n = tsr__flat_range_boxes(k, shape, lo, hi, out->boxes + nb);
    for (int b = nb; b < nb + n; b++) /* extend with the whole inner dimensions */
      for (int i = k; i < nd; i++) {
        out->boxes[b].start[i] = 0;
        out->boxes[b].count[i] = shape[i];
      }
    nb += n;
    if ((hi - lo) * unit > out->max_piece_elems) out->max_piece_elems = (hi - lo) * unit;
  }
  out->first[npieces] = nb;
  if (nd == 0) out->max_piece_elems = 1;
  return 0;
}

int tsr__layout_chunks(int nd, const int64_t shape[], int64_t max_elems, int writer,
                       tsr__layout *out) {
  int64_t total = 1;
  for (int i = 0; i < nd; i++) total *= shape[i];
  if (max_elems < 1) max_elems = 1;
  int64_t n = (total + max_elems - 1) / max_elems;
  if (n < 1) n = 1;
  /* Rounding pieces to whole rows can push the largest over the limit: add
   * pieces until it fits (at one element per row it always does). */
  for (;; n++) {
    int64_t rows, unit;
    split_depth(nd, shape, nd, n, &rows, &unit);
    if (((rows + n - 1) / n) * unit <= max_elems || n >= total) break;
  }
  if (n > (1 << 30)) return TSR_ETOOBIG;
  int *w = malloc((size_t)n * sizeof(int));
  if (!w) return TSR_ENOMEM;
  for (int64_t p = 0; p < n; p++) w[p] = writer;
  int rc = tsr__layout_slabs(nd, shape, (int)n, w, out);
  free(w);
  return rc;
}

void tsr__layout_free(tsr__layout *l) {
  if (!l) return;
  free(l->writers);
  free(l->first);
  free(l->boxes);
  memset(l, 0, sizeof *l);
}
