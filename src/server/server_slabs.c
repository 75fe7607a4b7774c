/* The slab walk both sides of a serial-backend file share (server_slabs.h). */
#include "server/server_slabs.h"

#include <stdlib.h>

#include "tessera.h"

int tsr__srv_slabs_init(tsr__srv_slabs *sl, int nvars) {
  sl->nvars = nvars;
  sl->lay = calloc((size_t)(nvars ? nvars : 1), sizeof *sl->lay);
  return sl->lay ? 0 : TSR_ENOMEM;
}

void tsr__srv_slabs_free(tsr__srv_slabs *sl) {
  for (int v = 0; sl->lay && v < sl->nvars; v++) tsr__layout_free(&sl->lay[v]);
  free(sl->lay);
  sl->lay = NULL;
  sl->nvars = 0;
}

int tsr__srv_slabs_of(tsr__srv_slabs *sl, int varid, int nd, const int64_t shape[], size_t esize,
                      int64_t slab_bytes, const tsr__layout **out) {
  tsr__layout *L = &sl->lay[varid];
  if (!L->npieces) {
    int rc = tsr__layout_chunks(nd, shape, slab_bytes / (int64_t)esize, 0, L);
    if (rc) return rc;
  }
  *out = L;
  return 0;
}

int tsr__srv_slab_piece(const tsr__layout *L, int b, int nd, const tsr__box *tile,
                        tsr__box *piece) {
  return tsr__box_elems(nd, tile) > 0 && tsr__box_intersect(nd, &L->boxes[b], tile, piece);
}

int tsr__srv_slab_range(const tsr__layout *L, int b, int nd, const int64_t shape[], int64_t *lo,
                        int64_t *hi) {
  const tsr__box *x = &L->boxes[b];
  int64_t n = tsr__box_elems(nd, x), off = 0;
  /* Contiguous when every dimension after the first one longer than 1 is
   * whole (the layout cuts rows, planes, ... in C order). */
  int first = -1;
  for (int i = 0; i < nd; i++) {
    if (first >= 0 && x->count[i] != shape[i]) return n == 0 ? (*lo = *hi = 0, 1) : 0;
    if (first < 0 && x->count[i] != 1) first = i;
  }
  for (int i = 0; i < nd; i++) off = off * shape[i] + x->start[i];
  *lo = off;
  *hi = off + n;
  return 1;
}
