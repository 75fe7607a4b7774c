/* Flat decompositions: spans, runs, and exchanges built through a directory
 * (plan/runs.h). */
#include "plan/runs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

/* ---- spans and runs ---- */

/* Stable LSD radix sort of records whose first member is a non-negative
 * int64 key below 2^bits: O(n) per 11-bit digit, several times faster than
 * qsort's comparator calls on the millions of indices a map can hold. */
#define RADIX_SORT(NAME, T)                                                               \
  static int NAME(T *a, int64_t n, int bits) {                                            \
    if (n < 2) return 0;                                                                  \
    T *tmp = malloc((size_t)n * sizeof *tmp);                                             \
    int64_t *cnt = malloc(2048 * sizeof *cnt);                                            \
    if (!tmp || !cnt) {                                                                   \
      free(tmp);                                                                          \
      free(cnt);                                                                          \
      return TSR_ENOMEM;                                                                  \
    }                                                                                     \
    T *src = a, *dst = tmp;                                                               \
    for (int shift = 0; shift < bits; shift += 11) {                                      \
      memset(cnt, 0, 2048 * sizeof *cnt);                                                 \
      for (int64_t i = 0; i < n; i++) cnt[(src[i].lo >> shift) & 2047]++;                 \
      int64_t sum = 0;                                                                    \
      for (int d = 0; d < 2048; d++) {                                                    \
        int64_t c = cnt[d];                                                               \
        cnt[d] = sum;                                                                     \
        sum += c;                                                                         \
      }                                                                                   \
      for (int64_t i = 0; i < n; i++) dst[cnt[(src[i].lo >> shift) & 2047]++] = src[i];   \
      T *t = src;                                                                         \
      src = dst;                                                                          \
      dst = t;                                                                            \
    }                                                                                     \
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);                                  \
    free(tmp);                                                                            \
    free(cnt);                                                                            \
    return 0;                                                                             \
  }

typedef struct {
  int64_t lo, hi;
} lohi;
RADIX_SORT(sort_spans, tsr__span)
RADIX_SORT(sort_lohi, lohi)

static int bits_of(int64_t maxkey) {
  int b = 1;
  while (b < 63 && (maxkey >> b) != 0) b++;
  return b;
}

/* Sort (unless already sorted: the common in-order map costs one pass),
 * refuse repeated indices, merge where index and buffer position continue. */
static int sort_merge(tsr__span *s, int64_t *n) {
  int sorted = 1;
  int64_t maxkey = 0;
  for (int64_t i = 0; i < *n; i++) {
    if (i > 0 && s[i].lo < s[i - 1].lo) sorted = 0;
    if (s[i].lo > maxkey) maxkey = s[i].lo;
  }
  if (!sorted) {
    int rc = sort_spans(s, *n, bits_of(maxkey));
    if (rc) return rc;
  }
  int64_t k = 0;
  for (int64_t i = 0; i < *n; i++) {
    if (k > 0 && s[i].lo < s[k - 1].lo + s[k - 1].len) return TSR_EDECOMP; /* overlap */
    if (k > 0 && s[i].lo == s[k - 1].lo + s[k - 1].len && s[i].src == s[k - 1].src + s[k - 1].len)
      s[k - 1].len += s[i].len;
    else
      s[k++] = s[i];
  }
  *n = k;
  return 0;
}

int tsr__spans_from_map(const int64_t *idx, int64_t n, int64_t total, tsr__span **out,
                        int64_t *nout, int64_t *nelems) {
  *out = NULL;
  *nout = *nelems = 0;
  tsr__span *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
  if (!s) return TSR_ENOMEM;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (idx[i] == -1) continue;
    if (idx[i] < 0 || idx[i] >= total) {
      free(s);
      return TSR_EDECOMP;
    }
    /* Merge while reading: in-order stretches become one span at once. */
    if (k > 0 && idx[i] == s[k - 1].lo + s[k - 1].len && i == s[k - 1].src + s[k - 1].len)
      s[k - 1].len++;
    else
      s[k++] = (tsr__span){idx[i], 1, i};
  }
  int rc = sort_merge(s, &k);
  if (rc) {
    free(s);
    return rc;
  }
  for (int64_t i = 0; i < k; i++) *nelems += s[i].len;
  *out = s;
  *nout = k;
  return 0;
}

int tsr__spans_from_boxes(int nd, const int64_t gsize[], int nboxes, const tsr__box *boxes,
                          tsr__span **out, int64_t *nout, int64_t *nelems) {
  *out = NULL;
  *nout = *nelems = 0;
  int64_t nrows = 0, stride[TSR_MAX_DIMS];
  stride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) stride[i] = stride[i + 1] * gsize[i + 1];
  for (int b = 0; b < nboxes; b++) {
    for (int i = 0; i < nd; i++)
      if (boxes[b].count[i] < 0 || boxes[b].start[i] < 0 ||
          boxes[b].start[i] + boxes[b].count[i] > gsize[i])
        return TSR_EDECOMP;
    int64_t e = tsr__box_elems(nd, &boxes[b]);
    if (e > 0) nrows += e / boxes[b].count[nd - 1];
  }
  tsr__span *s = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof *s);
  if (!s) return TSR_ENOMEM;
  int64_t k = 0, pos = 0;
  for (int b = 0; b < nboxes; b++) {
    const tsr__box *bx = &boxes[b];
    int64_t e = tsr__box_elems(nd, bx);
    if (e == 0) continue;
    int64_t idx[TSR_MAX_DIMS] = {0}, rows = e / bx->count[nd - 1];
    for (int64_t r = 0; r < rows; r++) { /* one span per innermost row */
      int64_t lo = 0;
      for (int i = 0; i < nd; i++) lo += (bx->start[i] + idx[i]) * stride[i];
      s[k++] = (tsr__span){lo, bx->count[nd - 1], pos};
      pos += bx->count[nd - 1];
      for (int i = nd - 2; i >= 0; i--) {
        if (++idx[i] < bx->count[i]) break;
        idx[i] = 0;
      }
    }
  }
  int rc = sort_merge(s, &k);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  *nout = k;
  *nelems = pos;
  return 0;
}

int tsr__spans_identity(const tsr__span *s, int64_t n) {
  int64_t pos = 0;
  for (int64_t i = 0; i < n; i++) {
    if (s[i].src != pos) return 0;
    pos += s[i].len;
  }
  return 1;
}

int tsr__runs_from_spans(const tsr__span *s, int64_t n, int64_t **runs, int64_t *nruns) {
  *nruns = 0;
  *runs = malloc((size_t)(2 * n + 2) * sizeof **runs);
  if (!*runs) return TSR_ENOMEM;
  int64_t *r = *runs, k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (k > 0 && r[2 * k - 1] == s[i].lo) {
      r[2 * k - 1] += s[i].len;
    } else {
      r[2 * k] = s[i].lo;
      r[2 * k + 1] = s[i].lo + s[i].len;
      k++;
    }
  }
  *nruns = k;
  return 0;
}

int tsr__runs_cover(int nd, const int64_t gsize[], const int64_t *runs, int64_t nruns,
                    tsr__box *out) {
  memset(out, 0, sizeof *out);
  if (nruns == 0) return 1;
  int64_t lo[TSR_MAX_DIMS], hi[TSR_MAX_DIMS], stride[TSR_MAX_DIMS], elems = 0;
  stride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) stride[i] = stride[i + 1] * gsize[i + 1];
  for (int i = 0; i < nd; i++) {
    lo[i] = INT64_MAX;
    hi[i] = -1;
  }
  /* A run from index a to b (inclusive) fixes the dimensions before the first
   * one where a and b differ, spans [a_k, b_k] there, and may cover all of
   * every faster dimension. That bound is exact for the runs of a box. */
  for (int64_t r = 0; r < nruns; r++) {
    int64_t a = runs[2 * r], b = runs[2 * r + 1] - 1;
    elems += b - a + 1;
    int differ = nd;
    for (int i = 0; i < nd; i++) {
      int64_t ai = (a / stride[i]) % gsize[i], bi = (b / stride[i]) % gsize[i];
      if (differ == nd && ai != bi) differ = i;
      int64_t l = ai, h = bi;
      if (i > differ) {
        l = 0;
        h = gsize[i] - 1;
      }
      if (i == nd - 1 && differ == nd) l = ai, h = bi;
      if (l < lo[i]) lo[i] = l;
      if (h > hi[i]) hi[i] = h;
    }
  }
  for (int i = 0; i < nd; i++) {
    out->start[i] = lo[i];
    out->count[i] = hi[i] - lo[i] + 1;
  }
  return tsr__box_elems(nd, out) == elems;
}

/* Copy loops for single elements: a shuffled map moves one element per span,
 * where a memcpy call per element would cost more than the element. */
#define SPAN_LOOP(T, DST, SRC)                                                             \
  for (int64_t i = 0; i < n; i++) {                                                        \
    if (s[i].len == 1) ((T *)DST##_b)[DST##_i] = ((const T *)SRC##_b)[SRC##_i];            \
    else memcpy((T *)DST##_b + DST##_i, (const T *)SRC##_b + SRC##_i, (size_t)s[i].len * sizeof(T)); \
    pos += s[i].len;                                                                       \
  }

void tsr__spans_pack(const tsr__span *s, int64_t n, size_t esize, const void *buf, void *packed) {
  int64_t pos = 0;
  const void *buf_b = buf;
  void *packed_b = packed;
#define packed_i pos
#define buf_i s[i].src
  switch (esize) {
  case 8: SPAN_LOOP(int64_t, packed, buf) break;
  case 4: SPAN_LOOP(int32_t, packed, buf) break;
  case 2: SPAN_LOOP(int16_t, packed, buf) break;
  default: SPAN_LOOP(char, packed, buf) break;
  }
#undef packed_i
#undef buf_i
}

void tsr__spans_unpack(const tsr__span *s, int64_t n, size_t esize, const void *packed, void *buf) {
  int64_t pos = 0;
  const void *packed_b = packed;
  void *buf_b = buf;
#define packed_i pos
#define buf_i s[i].src
  switch (esize) {
  case 8: SPAN_LOOP(int64_t, buf, packed) break;
  case 4: SPAN_LOOP(int32_t, buf, packed) break;
  case 2: SPAN_LOOP(int16_t, buf, packed) break;
  default: SPAN_LOOP(char, buf, packed) break;
  }
#undef packed_i
#undef buf_i
}
#undef SPAN_LOOP

/* ---- cutting runs by pieces ---- */

int tsr__layout_flat(int nd, const int64_t gsize[], const tsr__layout *L, int64_t *lo,
                     int64_t *hi) {
  int64_t stride[TSR_MAX_DIMS], at = 0;
  stride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) stride[i] = stride[i + 1] * gsize[i + 1];
  for (int p = 0; p < L->npieces; p++) {
    int64_t n = 0;
    for (int b = L->first[p]; b < L->first[p + 1]; b++) n += tsr__box_elems(nd, &L->boxes[b]);
    if (n > 0) {
      const tsr__box *b0 = &L->boxes[L->first[p]];
      at = 0;
      for (int i = 0; i < nd; i++) at += b0->start[i] * stride[i];
    }
    lo[p] = at;
    hi[p] = at + n;
    at += n;
  }
  return 0;
}

int tsr__runs_cut(const int64_t *runs, int64_t nruns, int npieces, const int64_t *plo,
                  const int64_t *phi, tsr__rseg **out, int64_t *n) {
  int64_t cap = nruns + npieces + 1, k = 0;
  tsr__rseg *v = malloc((size_t)cap * sizeof *v);
  *out = NULL;
  *n = 0;
  if (!v) return TSR_ENOMEM;
  int64_t i = 0, ioff = 0; /* first run that may still meet a piece; its buffer offset */
  for (int p = 0; p < npieces; p++) {
    if (phi[p] <= plo[p]) continue;
    while (i < nruns && runs[2 * i + 1] <= plo[p]) ioff += runs[2 * i + 1] - runs[2 * i], i++;
    int64_t joff = ioff;
    for (int64_t j = i; j < nruns && runs[2 * j] < phi[p]; j++) {
      int64_t a = runs[2 * j] > plo[p] ? runs[2 * j] : plo[p];
      int64_t b = runs[2 * j + 1] < phi[p] ? runs[2 * j + 1] : phi[p];
      if (k == cap) { /* a run can meet many pieces: grow */
        cap *= 2;
        tsr__rseg *nv = realloc(v, (size_t)cap * sizeof *nv);
        if (!nv) {
          free(v);
          return TSR_ENOMEM;
        }
        v = nv;
      }
      v[k++] = (tsr__rseg){a, b, joff + (a - runs[2 * j]), p};
      joff += runs[2 * j + 1] - runs[2 * j];
    }
  }
  *out = v;
  *n = k;
  return 0;
}

/* ---- assembling exchanges ---- */

typedef struct {
  int peer;
  int64_t seq; /* order within the peer: the cut order both sides share */
  int64_t lo, len, off;
  int target;
} fseg;

static int cmp_fseg(const void *a, const void *b) {
  const fseg *x = a, *y = b;
  if (x->peer != y->peer) return (x->peer > y->peer) - (x->peer < y->peer);
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Peer table and segments (offset, length pairs) of one side of a phase's
 * exchange. */
static int side(fseg *v, int64_t n, size_t esize, int me, tsr__peer **peers, int *npeers,
                int64_t **segs, int64_t *total) {
  *peers = NULL;
  *segs = NULL;
  *npeers = 0;
  *total = 0;
  if (n == 0) return 0;
  if (n > INT_MAX) return TSR_ETOOBIG;
  /* Usually already in (peer, cut order): writers of ascending pieces are
   * ascending ranks, and received ranges arrive source by source. */
  int sorted = 1;
  for (int64_t i = 1; i < n && sorted; i++) sorted = cmp_fseg(&v[i - 1], &v[i]) <= 0;
  if (!sorted) qsort(v, (size_t)n, sizeof *v, cmp_fseg);
  int np = 1;
  for (int64_t i = 1; i < n; i++) np += v[i].peer != v[i - 1].peer;
  tsr__peer *pt = malloc((size_t)np * sizeof *pt);
  int64_t *sg = malloc((size_t)(2 * n) * sizeof *sg);
  if (!pt || !sg) {
    free(pt);
    free(sg);
    return TSR_ENOMEM;
  }
  np = 0;
  int64_t off = 0;
  for (int64_t i = 0; i < n; i++) {
    if (np == 0 || pt[np - 1].peer != v[i].peer) {
      pt[np] = (tsr__peer){v[i].peer, 0, (int)i, 0, off};
      np++;
    }
    sg[2 * i] = v[i].off;
    sg[2 * i + 1] = v[i].len;
    pt[np - 1].nseg++;
    int64_t bytes = v[i].len * (int64_t)esize;
    pt[np - 1].bytes += bytes;
    if (v[i].peer != me) off += bytes;
  }
  for (int p = 0; p < np; p++)
    if (pt[p].bytes > INT_MAX) {
      free(pt);
      free(sg);
      return TSR_ETOOBIG;
    }
  *peers = pt;
  *npeers = np;
  *segs = sg;
  *total = off;
  return 0;
}

/* Piece of flat index x among ascending pieces: the last non-empty piece
 * whose lo <= x. */
static int piece_of(const int64_t *plo, const int64_t *phi, int np, int64_t x) {
  int lo = 0, hi = np - 1, ans = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (plo[mid] <= x) ans = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  while (ans >= 0 && phi[ans] <= x) ans--; /* skip empty pieces sharing lo */
  return ans;
}

int tsr__runs_assemble(int me, int nd, const tsr__layout *L, const int64_t *plo,
                       const int64_t *phi, const tsr__rseg *send, int64_t nsend, int nranks,
                       const int64_t *rcount, const int64_t *rlohi, size_t esize, int phased,
                       tsr__exchange *phases) {
  int np = L->npieces, nph = phased ? np : 1, rc = 0;
  int64_t nrecv = 0;
  for (int s = 0; s < nranks; s++) nrecv += rcount[s];
  /* Region base of each of my pieces inside its phase's region buffer. */
  int64_t *base = malloc((size_t)(np > 0 ? np : 1) * sizeof *base);
  int *boxat = malloc((size_t)(np > 0 ? np : 1) * sizeof *boxat);
  fseg *sv = malloc((size_t)(nsend > 0 ? nsend : 1) * sizeof *sv);
  fseg *rv = malloc((size_t)(nrecv > 0 ? nrecv : 1) * sizeof *rv);
  int *sph = malloc((size_t)(nsend > 0 ? nsend : 1) * sizeof *sph);
  int *rph = malloc((size_t)(nrecv > 0 ? nrecv : 1) * sizeof *rph);
  if (!base || !boxat || !sv || !rv || !sph || !rph) rc = TSR_ENOMEM;
  for (int ph = 0; ph < nph && !rc; ph++) {
    tsr__exchange *ex = &phases[ph];
    memset(ex, 0, sizeof *ex);
    ex->nd = nd;
    ex->esize = esize;
    ex->flat = 1;
    int p0 = phased ? ph : 0, p1 = phased ? ph + 1 : np, nmine = 0;
    for (int p = p0; p < p1; p++)
      if (L->writers[p] == me) nmine += L->first[p + 1] - L->first[p];
    if (nmine == 0) continue;
    ex->mybox = malloc((size_t)nmine * sizeof *ex->mybox);
    ex->mybox_off = malloc((size_t)nmine * sizeof *ex->mybox_off);
    if (!ex->mybox || !ex->mybox_off) {
      rc = TSR_ENOMEM;
      break;
    }
    for (int p = p0; p < p1; p++) {
      if (L->writers[p] != me) continue;
      base[p] = ex->region_elems;
      boxat[p] = ex->nmybox;
      for (int b = L->first[p]; b < L->first[p + 1]; b++) {
        ex->mybox[ex->nmybox] = L->boxes[b];
        ex->mybox_off[ex->nmybox++] = ex->region_elems;
        ex->region_elems += tsr__box_elems(nd, &L->boxes[b]);
      }
    }
  }
  /* Sorting each side by (phase, peer, cut order) groups every phase's
   * messages at once: O(n log n) for the whole plan, whatever the phases. */
  int64_t ns = 0, nr = 0;
  for (int64_t i = 0; i < nsend && !rc; i++) {
    int p = send[i].piece;
    sph[ns] = phased ? p : 0;
    sv[ns++] = (fseg){L->writers[p], i, send[i].lo, send[i].hi - send[i].lo, send[i].off, -1};
  }
  int64_t at = 0;
  for (int s = 0; s < nranks && !rc; s++)
    for (int64_t k = 0; k < rcount[s]; k++, at++) {
      int64_t lo = rlohi[2 * at], hi = rlohi[2 * at + 1];
      int p = piece_of(plo, phi, np, lo);
      if (p < 0 || L->writers[p] != me || hi > phi[p]) {
        rc = TSR_EINVAL; /* a source cut differently: cannot happen with one layout */
        break;
      }
      rph[nr] = phased ? p : 0;
      rv[nr++] = (fseg){s, at, lo, hi - lo, base[p] + (lo - plo[p]), boxat[p]};
    }
  /* Bucket by phase (counting sort: phases are few next to segments). */
  for (int side_i = 0; side_i < 2 && !rc; side_i++) {
    fseg *v = side_i ? rv : sv;
    int *ph = side_i ? rph : sph;
    int64_t n = side_i ? nr : ns;
    int64_t *cnt = calloc((size_t)nph + 1, sizeof *cnt);
    fseg *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!cnt || !tmp) rc = TSR_ENOMEM;
    for (int64_t i = 0; i < n && !rc; i++) cnt[ph[i] + 1]++;
    for (int q = 0; q < nph && !rc; q++) cnt[q + 1] += cnt[q];
    int64_t *fill = rc ? NULL : malloc((size_t)(nph > 0 ? nph : 1) * sizeof *fill);
    if (!rc && !fill) rc = TSR_ENOMEM;
    if (!rc) {
      memcpy(fill, cnt, (size_t)nph * sizeof *fill);
      for (int64_t i = 0; i < n; i++) tmp[fill[ph[i]]++] = v[i];
    }
    for (int q = 0; q < nph && !rc; q++) {
      tsr__exchange *ex = &phases[q];
      fseg *part = tmp + cnt[q];
      int64_t m = cnt[q + 1] - cnt[q];
      if (side_i == 0)
        rc = side(part, m, esize, me, &ex->send, &ex->nsend, &ex->send_fl, &ex->send_bytes);
      else
        rc = side(part, m, esize, me, &ex->recv, &ex->nrecv, &ex->recv_fl, &ex->stage_bytes);
    }
    free(fill);
    free(cnt);
    free(tmp);
  }
  free(base);
  free(boxat);
  free(sv);
  free(rv);
  free(sph);
  free(rph);
  return rc;
}

/* Tell every rank how many ranges it gets from me and which: counts in one
 * Alltoall, ranges in one Alltoallv. */
static int announce(MPI_Comm comm, int nranks, const tsr__rseg *v, int64_t n, const int *dest,
                    int64_t **rcount_out, int64_t **rlohi_out) {
  int rc = 0;
  int *sc = calloc((size_t)nranks * 4, sizeof *sc);
  int64_t *rcount = calloc((size_t)nranks, sizeof *rcount);
  int64_t *slohi = malloc((size_t)(2 * n + 2) * sizeof *slohi);
  int64_t *fill = calloc((size_t)nranks, sizeof *fill);
  int64_t *rlohi = NULL;
  if (!sc || !rcount || !slohi || !fill) rc = TSR_ENOMEM;
  int *sd = sc + nranks, *rcn = sc + 2 * nranks, *rd = sc + 3 * nranks;
  for (int64_t i = 0; i < n && !rc; i++) sc[dest[i]] += 2;
  int64_t off = 0;
  for (int r = 0; r < nranks && !rc; r++) {
    if (off > INT_MAX) rc = TSR_ETOOBIG;
    sd[r] = (int)off;
    fill[r] = off;
    off += sc[r];
  }
  for (int64_t i = 0; i < n && !rc; i++) { /* stable: each destination keeps the cut order */
    int64_t at = fill[dest[i]];
    slohi[at] = v[i].lo;
    slohi[at + 1] = v[i].hi;
    fill[dest[i]] += 2;
  }
  /* A rank that failed still takes part with nothing to send, so nobody
   * waits; the caller agrees on the status afterwards. */
  if (rc)
    for (int r = 0; sc && r < nranks; r++) sc[r] = sd[r] = 0;
  if (sc && MPI_Alltoall(sc, 1, MPI_INT, rcn, 1, MPI_INT, comm) != MPI_SUCCESS) rc = TSR_EMPI;
  int64_t roff = 0;
  for (int r = 0; sc && r < nranks; r++) {
    rd[r] = (int)roff;
    roff += rcn[r];
    if (roff > INT_MAX) rc = TSR_ETOOBIG;
  }
  if (sc) {
    rlohi = malloc((size_t)(roff + 2) * sizeof *rlohi);
    if (!rlohi) rc = TSR_ENOMEM;
    /* A rank that cannot hold what others announce to it cannot join the
     * Alltoallv either; the others then fail in MPI or in the caller's
     * agreement. Only an allocation failure of a few bytes per range
     * leads here. */
    if (rlohi && MPI_Alltoallv(slohi ? slohi : rlohi, sc, sd, MPI_INT64_T, rlohi, rcn, rd,
                               MPI_INT64_T, comm) != MPI_SUCCESS)
      rc = TSR_EMPI;
    for (int r = 0; r < nranks; r++) rcount[r] = rcn[r] / 2;
  }
  free(sc);
  free(slohi);
  free(fill);
  *rcount_out = rcount;
  *rlohi_out = rlohi;
  return rc;
}

int tsr__runs_build_phases(const tsr__tiles *t, const tsr__layout *L, size_t esize, int phased,
                           tsr__exchange *phases) {
  int np = L->npieces, rc = 0;
  int64_t *plo = malloc((size_t)(np + 1) * sizeof *plo), *phi = malloc((size_t)(np + 1) * sizeof *phi);
  tsr__rseg *v = NULL;
  int64_t n = 0, *rcount = NULL, *rlohi = NULL;
  int *dest = NULL;
  if (!plo || !phi) rc = TSR_ENOMEM;
  if (!rc) rc = tsr__layout_flat(t->ndims, t->gsize, L, plo, phi);
  if (!rc) rc = tsr__runs_cut(t->runs, t->nruns, np, plo, phi, &v, &n);
  if (!rc) {
    dest = calloc((size_t)(n + 1), sizeof *dest);
    if (!dest) rc = TSR_ENOMEM;
    for (int64_t i = 0; i < n && !rc; i++) dest[i] = L->writers[v[i].piece];
  }
  if (rc) n = 0; /* take part in the announcement with nothing */
  int arc = announce(t->comm, t->nranks, v, n, dest, &rcount, &rlohi);
  if (!rc) rc = arc;
  if (!rc)
    rc = tsr__runs_assemble(t->rank, t->ndims, L, plo, phi, v, n, t->nranks, rcount, rlohi,
                            esize, phased, phases);
  free(plo);
  free(phi);
  free(v);
  free(dest);
  free(rcount);
  free(rlohi);
  return rc;
}

int tsr__runs_check(const tsr__tiles *t, int *overlap, int64_t **holes, int64_t *nholes) {
  int P = t->nranks, rc = 0;
  int64_t total = 1;
  for (int i = 0; i < t->ndims; i++) total *= t->gsize[i];
  *overlap = 0;
  *holes = NULL;
  *nholes = 0;
  int64_t *plo = malloc((size_t)P * sizeof *plo), *phi = malloc((size_t)P * sizeof *phi);
  tsr__rseg *v = NULL;
  int64_t n = 0, *rcount = NULL, *rlohi = NULL;
  int *dest = NULL;
  if (!plo || !phi) rc = TSR_ENOMEM;
  for (int r = 0; r < P && !rc; r++) { /* the directory: P equal slabs of the index space */
    plo[r] = total * r / P;
    phi[r] = total * (r + 1) / P;
  }
  if (!rc) rc = tsr__runs_cut(t->runs, t->nruns, P, plo, phi, &v, &n);
  if (!rc) {
    dest = calloc((size_t)(n + 1), sizeof *dest);
    if (!dest) rc = TSR_ENOMEM;
    for (int64_t i = 0; i < n && !rc; i++) dest[i] = v[i].piece;
  }
  if (rc) n = 0;
  int arc = announce(t->comm, P, v, n, dest, &rcount, &rlohi);
  if (!rc) rc = arc;
  if (!rc) {
    int64_t m = 0;
    for (int r = 0; r < P; r++) m += rcount[r];
    rc = sort_lohi((lohi *)rlohi, m, bits_of(total));
    int64_t *h = malloc((size_t)(2 * m + 2) * sizeof *h), k = 0, at = plo[t->rank];
    if (!h) rc = TSR_ENOMEM;
    for (int64_t i = 0; i < m && !rc; i++) {
      if (rlohi[2 * i] < at) *overlap = 1; /* two ranks own rlohi[2i] */
      if (rlohi[2 * i] > at) h[2 * k] = at, h[2 * k + 1] = rlohi[2 * i], k++;
      if (rlohi[2 * i + 1] > at) at = rlohi[2 * i + 1];
    }
    if (!rc && at < phi[t->rank]) h[2 * k] = at, h[2 * k + 1] = phi[t->rank], k++;
    *holes = h;
    *nholes = k;
  }
  free(plo);
  free(phi);
  free(v);
  free(dest);
  free(rcount);
  free(rlohi);
  return rc;
}
