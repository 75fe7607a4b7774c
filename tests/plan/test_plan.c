/* Unit tests of the plan engine (src/plan), with no MPI and no Tessera
 * context: tiles are described directly (plan/tiles.h), exchanges are built
 * for every rank in turn, and the data movement is simulated by copying each
 * received segment out of a global array into the writer's region, exactly
 * where the plan says it goes. Every scenario checks that both sides of every
 * message agree, that pieces partition the variable, and that every writer's
 * region ends up holding the right values. Checks from tsr_test.h (no MPI
 * started: the verdict is local). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "tsr_test.h"


/* A decomposition of an ny x nx (x nz inner) array over a px x py grid of
 * ranks, uneven where the sizes do not divide; rank `empty` owns nothing. */
typedef struct {
  int nd, nranks;
  int64_t shape[3];
  int64_t *all;
} decomp;

static void make_grid(decomp *d, int nd, const int64_t shape[], int py, int px, int empty) {
  d->nd = nd;
  d->nranks = py * px + (empty >= 0 ? 1 : 0);
  memcpy(d->shape, shape, (size_t)nd * sizeof *shape);
  d->all = calloc((size_t)d->nranks * 2 * (size_t)nd, sizeof(int64_t));
  int r = 0;
  for (int y = 0; y < py; y++)
    for (int x = 0; x < px; x++, r++) {
      if (r == empty) r++; /* this rank owns nothing: start 0, count 0 */
      int64_t *t = d->all + (size_t)r * 2 * (size_t)nd;
      t[0] = shape[0] * y / py;
      t[nd + 0] = shape[0] * (y + 1) / py - t[0];
      t[1] = shape[1] * x / px;
      t[nd + 1] = shape[1] * (x + 1) / px - t[1];
      for (int i = 2; i < nd; i++) t[nd + i] = shape[i];
    }
}

static void tiles_of(const decomp *d, int rank, tsr__tiles *t) {
  memset(t, 0, sizeof *t);
  t->ndims = d->nd;
  memcpy(t->gsize, d->shape, sizeof d->shape);
  t->nranks = d->nranks;
  t->rank = rank;
  t->all = d->all;
  tsr__tiles_tile_of(t, rank, &t->tile);
  t->mem = t->tile;
  t->my_elems = tsr__box_elems(d->nd, &t->tile);
}

static int64_t total(const decomp *d) {
  int64_t n = 1;
  for (int i = 0; i < d->nd; i++) n *= d->shape[i];
  return n;
}

/* Pieces partition the index space: their elements add up to the whole and
 * no two pieces share a point. */
static void check_layout(const decomp *d, const tsr__layout *L) {
  int64_t sum = 0;
  for (int b = 0; b < L->first[L->npieces]; b++) sum += tsr__box_elems(d->nd, &L->boxes[b]);
  TSR_CHECK_EQ_INT(sum, total(d));
  for (int a = 0; a < L->first[L->npieces]; a++)
    for (int b = a + 1; b < L->first[L->npieces]; b++) {
      tsr__box x;
      TSR_CHECK(!tsr__box_intersect(d->nd, &L->boxes[a], &L->boxes[b], &x));
    }
}

/* Build every rank's exchange, check both sides agree, and simulate it. */
static void check_exchange(const decomp *d, const tsr__layout *L) {
  int n = d->nranks;
  tsr__exchange *ex = calloc((size_t)n, sizeof *ex);
  for (int r = 0; r < n; r++) {
    tsr__tiles t;
    tiles_of(d, r, &t);
    TSR_CHECK_EQ_INT(tsr__exchange_build(&t, L, 0, L->npieces, sizeof(float), &ex[r]), 0);
  }
  /* The global array: value = flat index. */
  int64_t N = total(d);
  float *global = malloc((size_t)N * sizeof *global);
  for (int64_t i = 0; i < N; i++) global[i] = (float)i;
  int64_t zero[3] = {0, 0, 0}, region_total = 0;
  for (int w = 0; w < n; w++) {
    const tsr__exchange *e = &ex[w];
    region_total += e->region_elems;
    float *region = malloc((size_t)(e->region_elems + 1) * sizeof *region);
    for (int64_t i = 0; i < e->region_elems; i++) region[i] = -1;
    for (int p = 0; p < e->nrecv; p++) {
      const tsr__peer *rp = &e->recv[p];
      /* The sender's matching message has the same size. */
      const tsr__exchange *s = &ex[rp->peer];
      int64_t sent = -1;
      for (int q = 0; q < s->nsend; q++)
        if (s->send[q].peer == w) sent = s->send[q].bytes;
      TSR_CHECK_EQ_INT(sent, rp->bytes);
      for (int g = rp->seg0; g < rp->seg0 + rp->nseg; g++) {
        const tsr__seg *sg = &e->recv_segs[g];
        tsr__box tile, in;
        tsr__tiles_tile_of(&(tsr__tiles){.ndims = d->nd, .all = d->all}, rp->peer, &tile);
        TSR_CHECK(tsr__box_intersect(d->nd, &sg->box, &tile, &in) &&
              tsr__box_elems(d->nd, &in) == tsr__box_elems(d->nd, &sg->box));
        const tsr__box *mb = &e->mybox[sg->target];
        tsr__copy_box(d->nd, &sg->box, sizeof(float), global, zero, d->shape,
                      region + e->mybox_off[sg->target], mb->start, mb->count);
      }
    }
    /* Every point of the writer's boxes arrived, with its value. */
    for (int b = 0; b < e->nmybox; b++) {
      const tsr__box *mb = &e->mybox[b];
      float *expect = malloc((size_t)(tsr__box_elems(d->nd, mb) + 1) * sizeof *expect);
      tsr__copy_box(d->nd, mb, sizeof(float), global, zero, d->shape, expect, mb->start,
                    mb->count);
      TSR_CHECK(memcmp(expect, region + e->mybox_off[b],
                   (size_t)tsr__box_elems(d->nd, mb) * sizeof(float)) == 0);
      free(expect);
    }
    free(region);
  }
  TSR_CHECK_EQ_INT(region_total, N);
  for (int r = 0; r < n; r++) tsr__exchange_free(&ex[r]);
  free(ex);
  free(global);
}

static void scenario_slabs(const char *name, int nd, const int64_t shape[], int py, int px,
                           int empty, int nwriters) {
  tsr_test_case("%s", name);
  decomp d;
  make_grid(&d, nd, shape, py, px, empty);
  int *w = malloc((size_t)nwriters * sizeof *w);
  for (int i = 0; i < nwriters; i++) w[i] = (int)((int64_t)i * d.nranks / nwriters);
  tsr__layout L;
  TSR_CHECK_EQ_INT(tsr__layout_slabs(nd, shape, nwriters, w, &L), 0);
  check_layout(&d, &L);
  check_exchange(&d, &L);
  tsr__layout_free(&L);
  free(w);
  free(d.all);
}

static void scenario_chunks(const char *name, int nd, const int64_t shape[], int py, int px,
                            int64_t max_elems) {
  tsr_test_case("%s", name);
  decomp d;
  make_grid(&d, nd, shape, py, px, -1);
  tsr__layout L;
  TSR_CHECK_EQ_INT(tsr__layout_chunks(nd, shape, max_elems, 0, &L), 0);
  check_layout(&d, &L);
  for (int p = 0; p < L.npieces; p++) {
    int64_t e = 0;
    for (int b = L.first[p]; b < L.first[p + 1]; b++) e += tsr__box_elems(nd, &L.boxes[b]);
    TSR_CHECK(e <= max_elems && e > 0);
    TSR_CHECK_EQ_INT(L.writers[p], 0);
  }
  /* Phased, as serial runs it: one exchange per piece, each complete. */
  tsr__plan plan = {0};
  plan.layout = L;
  tsr__tiles t;
  tiles_of(&d, 0, &t);
  TSR_CHECK_EQ_INT(tsr__plan_build(&t, sizeof(float), 1, &plan), 0);
  TSR_CHECK_EQ_INT(plan.nphases, L.npieces);
  TSR_CHECK(plan.max_region_elems <= max_elems);
  for (int i = 0; i < plan.nphases; i++) tsr__exchange_free(&plan.phases[i]);
  free(plan.phases);
  check_exchange(&d, &L);
  tsr__layout_free(&L);
  free(d.all);
}

static void scenario_flat_range(void) {
  tsr_test_case("flat_range");
  int64_t shape[3] = {5, 7, 3};
  for (int64_t lo = 0; lo < 105; lo += 13)
    for (int64_t hi = lo; hi <= 105; hi += 17) {
      tsr__box b[6];
      int n = tsr__flat_range_boxes(3, shape, lo, hi, b);
      TSR_CHECK(n <= 5);
      int64_t sum = 0;
      for (int i = 0; i < n; i++) sum += tsr__box_elems(3, &b[i]);
      TSR_CHECK_EQ_INT(sum, hi - lo);
    }
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(name, call) \
  if (!only || strcmp(only, name) == 0) call
  RUN("flat_range", scenario_flat_range());
  RUN("slabs_2d", scenario_slabs("slabs_2d", 2, (int64_t[]){13, 11}, 2, 3, -1, 2));
  RUN("slabs_3d_uneven", scenario_slabs("slabs_3d_uneven", 3, (int64_t[]){7, 9, 4}, 3, 2, -1, 4));
  RUN("slabs_empty_rank", scenario_slabs("slabs_empty_rank", 2, (int64_t[]){10, 10}, 2, 2, 1, 3));
  RUN("slabs_more_writers_than_rows",
      scenario_slabs("slabs_more_writers_than_rows", 2, (int64_t[]){3, 8}, 1, 2, -1, 5));
  RUN("chunks_2d", scenario_chunks("chunks_2d", 2, (int64_t[]){17, 9}, 3, 2, 40));
  RUN("chunks_3d", scenario_chunks("chunks_3d", 3, (int64_t[]){4, 6, 5}, 2, 2, 7));
  char name[128];
  snprintf(name, sizeof name, "test_plan %s", only ? only : "all");
  return tsr_test_verdict(name);
}
