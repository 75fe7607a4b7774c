/* The slab walk both sides of a root-assembled file share (server_slabs.h). */
#include "server/server_slabs.h"

#include <stdlib.h>
#include <string.h>

#include "tessera.h"

int tsr__srv_slabs_init(tsr__srv_slabs *sl, int nvars, int tasks) {
  sl->nvars = nvars;
  sl->tasks = tasks;
  int per = tasks > 0 ? tasks : 1;
  sl->lay = calloc((size_t)(nvars ? nvars : 1) * (size_t)per, sizeof *sl->lay);
  return sl->lay ? 0 : TSR_ENOMEM;
}

void tsr__srv_slabs_free(tsr__srv_slabs *sl) {
  int per = sl->tasks > 0 ? sl->tasks : 1;
  for (int v = 0; sl->lay && v < sl->nvars * per; v++) tsr__layout_free(&sl->lay[v]);
  free(sl->lay);
  sl->lay = NULL;
  sl->nvars = 0;
}

/* Task @p t's slab boxes of a whole-levels file: its piece of the variable
 * cut between levels over the group's tasks (tsr__layout_slabs_keep, as
 * aggregate's writers hold theirs), each box of that piece cut again into
 * slabs of at most @p max_elems, so a task's memory stays bounded as the
 * root's does. One piece owned by @p t holds them all, in file order. */
static int task_boxes(int nd, const int64_t shape[], int tasks, int t, int64_t max_elems,
                      tsr__layout *out) {
  tsr__layout part, sub;
  int *who = malloc((size_t)tasks * sizeof(int));
  if (!who) return TSR_ENOMEM;
  for (int i = 0; i < tasks; i++) who[i] = i;
  int rc = tsr__layout_slabs_keep(nd, shape, 2, tasks, who, &part);
  free(who);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  out->npieces = 1;
  out->writers = malloc(sizeof(int));
  out->first = calloc(2, sizeof(int));
  rc = out->writers && out->first ? 0 : TSR_ENOMEM;
  if (!rc) out->writers[0] = t;
  for (int b = part.first[t]; b < part.first[t + 1] && !rc; b++) {
    const tsr__box *r = &part.boxes[b];
    if (tsr__box_elems(nd, r) == 0) continue;
    if ((rc = tsr__layout_chunks(nd, r->count, max_elems, t, &sub))) break;
    int n = tsr__srv_slab_count(&sub), nb = out->first[1];
    tsr__box *grown = realloc(out->boxes, (size_t)(nb + n) * sizeof *grown);
    if (!grown) rc = TSR_ENOMEM;
    for (int i = 0; i < n && !rc; i++) { /* the sub-slabs sit at the region's start */
      grown[nb + i] = sub.boxes[i];
      for (int k = 0; k < nd; k++) grown[nb + i].start[k] += r->start[k];
      if (sub.max_piece_elems > out->max_piece_elems) out->max_piece_elems = sub.max_piece_elems;
    }
    if (grown) out->boxes = grown;
    if (!rc) out->first[1] = nb + n;
    tsr__layout_free(&sub);
  }
  tsr__layout_free(&part);
  if (rc) tsr__layout_free(out);
  return rc;
}

int tsr__srv_slabs_of(tsr__srv_slabs *sl, int varid, int t, int nd, const int64_t shape[],
                      size_t esize, int64_t slab_bytes, const tsr__layout **out) {
  int per = sl->tasks > 0 ? sl->tasks : 1;
  tsr__layout *L = &sl->lay[varid * per + (sl->tasks > 0 ? t : 0)];
  if (!L->npieces) {
    int64_t max_elems = slab_bytes / (int64_t)esize;
    int rc = sl->tasks > 0 ? task_boxes(nd, shape, sl->tasks, t, max_elems, L)
                           : tsr__layout_chunks(nd, shape, max_elems, 0, L);
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
