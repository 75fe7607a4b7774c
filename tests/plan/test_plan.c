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
#include "plan/runs.h"


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

/* Slabs that keep the last two dimensions whole (GRIB2's levels): every
 * box spans whole levels, pieces still partition the array, and with fewer
 * levels than writers the extra pieces are empty (a 2-D array: all on the
 * last piece). */
static void scenario_slabs_keep(const char *name, int nd, const int64_t shape[], int py, int px,
                                int nwriters) {
  tsr_test_case("%s", name);
  decomp d;
  make_grid(&d, nd, shape, py, px, -1);
  int *w = malloc((size_t)nwriters * sizeof *w);
  for (int i = 0; i < nwriters; i++) w[i] = (int)((int64_t)i * d.nranks / nwriters);
  tsr__layout L;
  TSR_CHECK_EQ_INT(tsr__layout_slabs_keep(nd, shape, 2, nwriters, w, &L), 0);
  check_layout(&d, &L);
  check_exchange(&d, &L);
  int64_t levels = 1;
  for (int i = 0; i < nd - 2; i++) levels *= shape[i];
  int nonempty = 0;
  for (int p = 0; p < L.npieces; p++) {
    nonempty += L.first[p + 1] > L.first[p];
    for (int b = L.first[p]; b < L.first[p + 1]; b++)
      for (int i = nd - 2; i < nd; i++)
        TSR_CHECK(L.boxes[b].start[i] == 0 && L.boxes[b].count[i] == shape[i]);
  }
  TSR_CHECK_EQ_INT(nonempty, levels < nwriters ? levels : nwriters);
  if (nd == 2) TSR_CHECK(L.first[nwriters] - L.first[nwriters - 1] == 1);
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

/* tsr__copy_box against an element-by-element copy, for regions whose
 * trailing dimensions are whole in the source, the destination, both
 * (folded into one memcpy) or neither, in 1 to 3 dimensions. */
static int64_t offset_in(int nd, const int64_t at[], const int64_t origin[],
                         const int64_t shape[]) {
  int64_t o = 0;
  for (int i = 0; i < nd; i++) o = o * shape[i] + (at[i] - origin[i]);
  return o;
}

static void copy_case(int nd, const int64_t so[], const int64_t ss[], const int64_t dorg[],
                      const int64_t ds[], const tsr__box *x) {
  int64_t sn = 1, dn = 1;
  for (int i = 0; i < nd; i++) sn *= ss[i], dn *= ds[i];
  float *src = malloc((size_t)sn * sizeof *src), *dst = malloc((size_t)dn * sizeof *dst),
        *ref = malloc((size_t)dn * sizeof *ref);
  for (int64_t i = 0; i < sn; i++) src[i] = (float)i;
  for (int64_t i = 0; i < dn; i++) dst[i] = ref[i] = -1;
  int64_t at[3], n = tsr__box_elems(nd, x);
  for (int64_t k = 0; k < n; k++) { /* the region's k-th point, C order */
    for (int i = nd - 1, r = (int)k; i >= 0; i--) {
      at[i] = x->start[i] + r % x->count[i];
      r /= (int)x->count[i];
    }
    ref[offset_in(nd, at, dorg, ds)] = src[offset_in(nd, at, so, ss)];
  }
  tsr__copy_box(nd, x, sizeof(float), src, so, ss, dst, dorg, ds);
  TSR_CHECK(memcmp(dst, ref, (size_t)dn * sizeof *dst) == 0);
  free(src);
  free(dst);
  free(ref);
}

static void scenario_copy_box(void) {
  tsr_test_case("copy_box");
  /* 3-D: whole in both (one row), whole rows only, halo'd source, wider
   * destination, a region inside both. */
  int64_t o0[3] = {0, 0, 0}, s3[3] = {4, 5, 6}, h3[3] = {6, 7, 8}, ho[3] = {-1, -1, -1};
  copy_case(3, o0, s3, o0, s3, &(tsr__box){{0, 0, 0}, {4, 5, 6}});
  copy_case(3, o0, s3, o0, s3, &(tsr__box){{1, 0, 0}, {2, 5, 6}});
  copy_case(3, o0, s3, o0, s3, &(tsr__box){{1, 2, 0}, {2, 3, 6}});
  copy_case(3, ho, h3, o0, s3, &(tsr__box){{0, 0, 0}, {4, 5, 6}});
  copy_case(3, o0, s3, ho, h3, &(tsr__box){{0, 0, 0}, {4, 5, 6}});
  copy_case(3, o0, s3, o0, s3, &(tsr__box){{1, 1, 2}, {2, 3, 3}});
  copy_case(3, o0, s3, o0, s3, &(tsr__box){{0, 0, 0}, {0, 5, 6}}); /* empty */
  /* 2-D and 1-D. */
  int64_t s2[2] = {3, 4}, h2[2] = {3, 6}, o2[2] = {0, -1};
  copy_case(2, o0, s2, o0, s2, &(tsr__box){{0, 0}, {3, 4}});
  copy_case(2, o2, h2, o0, s2, &(tsr__box){{0, 0}, {3, 4}});
  copy_case(1, o0, (int64_t[]){9}, o0, (int64_t[]){9}, &(tsr__box){{2}, {5}});
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

/* ---- flat decompositions (plan/runs.h) ---- */

static uint64_t hash64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Maps: in order (one run per row of a box, cover exact), shuffled (same
 * runs, spans remember the buffer), holes (-1 skipped), and the errors. */
static void scenario_runs_map(void) {
  tsr_test_case("%s", "runs_map");
  int64_t g[3] = {4, 6, 5}, total = 120, idx[64], n = 0;
  for (int z = 0; z < 4; z++) /* the box z all, y 2..3, x 1..3 */
    for (int y = 2; y < 4; y++)
      for (int x = 1; x < 4; x++) idx[n++] = (z * 6 + y) * 5 + x;
  tsr__span *s;
  int64_t ns, ne, *runs, nr;
  tsr__box cover;
  TSR_CHECK_EQ_INT(tsr__spans_from_map(idx, n, total, &s, &ns, &ne), 0);
  TSR_CHECK_EQ_INT(ne, 24);
  TSR_CHECK(tsr__spans_identity(s, ns));
  TSR_CHECK_EQ_INT(tsr__runs_from_spans(s, ns, &runs, &nr), 0);
  TSR_CHECK_EQ_INT(nr, 8); /* one per (z, y) row */
  TSR_CHECK_EQ_INT(tsr__runs_cover(3, g, runs, nr, &cover), 1);
  TSR_CHECK_EQ_INT(cover.start[1], 2);
  TSR_CHECK_EQ_INT(cover.count[1], 2);
  TSR_CHECK_EQ_INT(cover.start[2], 1);
  TSR_CHECK_EQ_INT(cover.count[2], 3);
  free(s);
  free(runs);
  for (int64_t i = n - 1; i > 0; i--) { /* shuffle: the same runs, a reordering */
    int64_t j = (int64_t)(hash64((uint64_t)i) % (uint64_t)(i + 1)), t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  TSR_CHECK_EQ_INT(tsr__spans_from_map(idx, n, total, &s, &ns, &ne), 0);
  TSR_CHECK(!tsr__spans_identity(s, ns));
  TSR_CHECK_EQ_INT(tsr__runs_from_spans(s, ns, &runs, &nr), 0);
  TSR_CHECK_EQ_INT(nr, 8);
  TSR_CHECK_EQ_INT(tsr__runs_cover(3, g, runs, nr, &cover), 1);
  float buf[64], packed[64], back[64];
  for (int64_t i = 0; i < n; i++) buf[i] = (float)idx[i];
  tsr__spans_pack(s, ns, sizeof(float), buf, packed);
  int sorted = 1;
  for (int64_t i = 1; i < n; i++) sorted &= packed[i] > packed[i - 1];
  TSR_CHECK(sorted);
  tsr__spans_unpack(s, ns, sizeof(float), packed, back);
  TSR_CHECK(memcmp(back, buf, (size_t)n * sizeof(float)) == 0);
  free(s);
  free(runs);
  /* Holes and skipped positions: runs no longer form a box. */
  int64_t h[6] = {3, -1, 4, 10, -1, 40};
  TSR_CHECK_EQ_INT(tsr__spans_from_map(h, 6, total, &s, &ns, &ne), 0);
  TSR_CHECK_EQ_INT(ne, 4);
  TSR_CHECK_EQ_INT(tsr__runs_from_spans(s, ns, &runs, &nr), 0);
  TSR_CHECK_EQ_INT(nr, 3); /* [3,5) [10,11) [40,41) */
  TSR_CHECK_EQ_INT(tsr__runs_cover(3, g, runs, nr, &cover), 0);
  free(s);
  free(runs);
  int64_t dup[3] = {5, 7, 5}, out1[2] = {0, 120}, out2[2] = {0, -2};
  TSR_CHECK_EQ_INT(tsr__spans_from_map(dup, 3, total, &s, &ns, &ne), TSR_EDECOMP);
  TSR_CHECK_EQ_INT(tsr__spans_from_map(out1, 2, total, &s, &ns, &ne), TSR_EDECOMP);
  TSR_CHECK_EQ_INT(tsr__spans_from_map(out2, 2, total, &s, &ns, &ne), TSR_EDECOMP);
  TSR_CHECK_EQ_INT(tsr__spans_from_map(NULL, 0, total, &s, &ns, &ne), 0); /* nothing */
  TSR_CHECK_EQ_INT(ns, 0);
  free(s);
}

static void scenario_runs_boxes(void) {
  tsr_test_case("%s", "runs_boxes");
  int64_t g[2] = {6, 8};
  tsr__box b[3] = {{{4, 0}, {1, 8}}, {{0, 2}, {2, 3}}, {{2, 0}, {1, 8}}}; /* rows merge */
  tsr__span *s;
  int64_t ns, ne, *runs, nr;
  TSR_CHECK_EQ_INT(tsr__spans_from_boxes(2, g, 3, b, &s, &ns, &ne), 0);
  TSR_CHECK_EQ_INT(ne, 22);
  TSR_CHECK_EQ_INT(tsr__runs_from_spans(s, ns, &runs, &nr), 0);
  TSR_CHECK_EQ_INT(nr, 4); /* [2,5) [10,13) [16,24) [32,40) */
  TSR_CHECK_EQ_INT(runs[0], 2);
  TSR_CHECK_EQ_INT(runs[7], 40);
  free(s);
  free(runs);
  tsr__box o[2] = {{{0, 0}, {2, 2}}, {{1, 1}, {2, 2}}}, r[1] = {{{5, 7}, {1, 2}}};
  TSR_CHECK_EQ_INT(tsr__spans_from_boxes(2, g, 2, o, &s, &ns, &ne), TSR_EDECOMP);
  TSR_CHECK_EQ_INT(tsr__spans_from_boxes(2, g, 1, r, &s, &ns, &ne), TSR_EDECOMP);
}

/* P simulated ranks own scattered columns of a 3-D array (levels fastest,
 * as MPAS), one rank owns nothing, some columns nobody. Every rank's cut is
 * announced to the writers, every rank assembles its exchanges, and the data
 * movement is simulated from each sender's packed buffer into each writer's
 * region: both sides must agree and every owned point must land in place. */
static void scenario_runs_exchange(const char *name, int phased, int64_t chunk) {
  tsr_test_case("%s", name);
  enum { P = 5 };
  int64_t g[3] = {6, 7, 4}, total = 6 * 7 * 4; /* (y, x, z): columns are runs of 4 */
  int64_t *runs[P], nruns[P], *own = malloc((size_t)total * sizeof *own);
  for (int64_t c = 0; c < 42; c++) {
    int o = (int)(hash64((uint64_t)c) % (P + 1)); /* P: nobody */
    if (o == 3) o = 4;                           /* rank 3 owns nothing */
    for (int z = 0; z < 4; z++) own[c * 4 + z] = o == P ? -1 : o;
  }
  for (int r = 0; r < P; r++) {
    runs[r] = malloc(sizeof(int64_t) * (size_t)(2 * total));
    nruns[r] = 0;
    for (int64_t i = 0; i < total; i++) {
      if (own[i] != r) continue;
      if (nruns[r] && runs[r][2 * nruns[r] - 1] == i) runs[r][2 * nruns[r] - 1]++;
      else runs[r][2 * nruns[r]] = i, runs[r][2 * nruns[r] + 1] = i + 1, nruns[r]++;
    }
  }
  tsr__layout L;
  int writers[3] = {4, 0, 2};
  if (phased) TSR_CHECK_EQ_INT(tsr__layout_chunks(3, g, chunk, 1, &L), 0);
  else TSR_CHECK_EQ_INT(tsr__layout_slabs(3, g, 3, writers, &L), 0);
  int np = L.npieces, nph = phased ? np : 1;
  int64_t *plo = malloc(sizeof(int64_t) * (size_t)np), *phi = malloc(sizeof(int64_t) * (size_t)np);
  tsr__layout_flat(3, g, &L, plo, phi);
  for (int p = 1; p < np; p++) TSR_CHECK_EQ_INT(plo[p], phi[p - 1]);
  TSR_CHECK_EQ_INT(phi[np - 1], total);
  tsr__rseg *cut[P];
  int64_t ncut[P];
  for (int r = 0; r < P; r++) TSR_CHECK_EQ_INT(tsr__runs_cut(runs[r], nruns[r], np, plo, phi, &cut[r], &ncut[r]), 0);
  tsr__exchange *ex[P];
  for (int w = 0; w < P; w++) { /* what each source announces to w, in source order */
    int64_t rcount[P], *rlohi = malloc(sizeof(int64_t) * (size_t)(2 * total + 2)), at = 0;
    for (int s = 0; s < P; s++) {
      rcount[s] = 0;
      for (int64_t i = 0; i < ncut[s]; i++)
        if (L.writers[cut[s][i].piece] == w) {
          rlohi[2 * at] = cut[s][i].lo;
          rlohi[2 * at + 1] = cut[s][i].hi;
          at++;
          rcount[s]++;
        }
    }
    ex[w] = calloc((size_t)nph, sizeof **ex);
    TSR_CHECK_EQ_INT(tsr__runs_assemble(w, 3, &L, plo, phi, cut[w], ncut[w], P, rcount, rlohi, 4, phased, ex[w]), 0);
    free(rlohi);
  }
  int64_t placed = 0, bad = 0;
  for (int ph = 0; ph < nph; ph++)
    for (int w = 0; w < P; w++) {
      const tsr__exchange *we = &ex[w][ph];
      int32_t *region = malloc(sizeof(int32_t) * (size_t)(we->region_elems + 1));
      for (int64_t i = 0; i < we->region_elems; i++) region[i] = -1;
      for (int q = 0; q < we->nrecv; q++) {
        const tsr__peer *rp = &we->recv[q];
        const tsr__exchange *se = &ex[rp->peer][ph];
        const tsr__peer *sp = NULL;
        for (int k = 0; k < se->nsend; k++)
          if (se->send[k].peer == w) sp = &se->send[k];
        TSR_CHECK(sp != NULL);
        if (!sp) continue;
        TSR_CHECK_EQ_INT(sp->nseg, rp->nseg);
        TSR_CHECK_EQ_INT(sp->bytes, rp->bytes);
        for (int k = 0; k < rp->nseg && k < sp->nseg; k++) {
          const int64_t *a = &se->send_fl[2 * (sp->seg0 + k)], *b = &we->recv_fl[2 * (rp->seg0 + k)];
          TSR_CHECK_EQ_INT(a[1], b[1]);
          /* The sender's packed buffer holds value = flat index. */
          for (int64_t e = 0; e < a[1]; e++) {
            int64_t srcpos = a[0] + e, gidx = -1, acc = 0;
            for (int64_t r = 0; r < nruns[rp->peer]; r++) {
              int64_t len = runs[rp->peer][2 * r + 1] - runs[rp->peer][2 * r];
              if (srcpos < acc + len) {
                gidx = runs[rp->peer][2 * r] + srcpos - acc;
                break;
              }
              acc += len;
            }
            region[b[0] + e] = (int32_t)gidx;
          }
        }
      }
      /* Region position -> flat index through my boxes, one after the other. */
      for (int t = 0; t < we->nmybox; t++) {
        tsr__box bx = we->mybox[t];
        int64_t e = tsr__box_elems(3, &bx);
        int64_t lo = (bx.start[0] * g[1] + bx.start[1]) * g[2] + bx.start[2];
        for (int64_t i = 0; i < e; i++) {
          int64_t gi = lo + i, got = region[we->mybox_off[t] + i];
          if (own[gi] >= 0) bad += got != gi, placed++;
          else bad += got != -1;
        }
      }
      free(region);
    }
  int64_t owned = 0;
  for (int64_t i = 0; i < total; i++) owned += own[i] >= 0;
  TSR_CHECK_EQ_INT(bad, 0);
  TSR_CHECK_EQ_INT(placed, owned);
  for (int r = 0; r < P; r++) {
    for (int ph = 0; ph < nph; ph++) tsr__exchange_free(&ex[r][ph]);
    free(ex[r]);
    free(cut[r]);
    free(runs[r]);
  }
  free(plo);
  free(phi);
  free(own);
  tsr__layout_free(&L);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(name, call) \
  if (!only || strcmp(only, name) == 0) call
  RUN("flat_range", scenario_flat_range());
  RUN("copy_box", scenario_copy_box());
  RUN("slabs_2d", scenario_slabs("slabs_2d", 2, (int64_t[]){13, 11}, 2, 3, -1, 2));
  RUN("slabs_3d_uneven", scenario_slabs("slabs_3d_uneven", 3, (int64_t[]){7, 9, 4}, 3, 2, -1, 4));
  RUN("slabs_empty_rank", scenario_slabs("slabs_empty_rank", 2, (int64_t[]){10, 10}, 2, 2, 1, 3));
  RUN("slabs_more_writers_than_rows",
      scenario_slabs("slabs_more_writers_than_rows", 2, (int64_t[]){3, 8}, 1, 2, -1, 5));
  RUN("slabs_keep_levels",
      scenario_slabs_keep("slabs_keep_levels", 3, (int64_t[]){5, 6, 4}, 2, 2, 2));
  RUN("slabs_keep_more_writers",
      scenario_slabs_keep("slabs_keep_more_writers", 3, (int64_t[]){3, 6, 4}, 2, 2, 4));
  RUN("slabs_keep_2d", scenario_slabs_keep("slabs_keep_2d", 2, (int64_t[]){6, 4}, 2, 1, 3));
  RUN("chunks_2d", scenario_chunks("chunks_2d", 2, (int64_t[]){17, 9}, 3, 2, 40));
  RUN("chunks_3d", scenario_chunks("chunks_3d", 3, (int64_t[]){4, 6, 5}, 2, 2, 7));
  RUN("runs_map", scenario_runs_map());
  RUN("runs_boxes", scenario_runs_boxes());
  RUN("runs_exchange_slabs", scenario_runs_exchange("runs_exchange_slabs", 0, 0));
  RUN("runs_exchange_chunks", scenario_runs_exchange("runs_exchange_chunks", 1, 13));
  char name[128];
  snprintf(name, sizeof name, "test_plan %s", only ? only : "all");
  return tsr_test_verdict(name);
}
