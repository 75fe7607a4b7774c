/* Server side of flat tiles (index maps, box lists; the model side is
 * server_handoff_runs.c): a client's runs arrive once per decomposition and
 * are kept; its data arrive packed in run order with every put, and the
 * server places each run where it belongs, in the file (parallel backends)
 * or in the slab being assembled (serial backends). */
#include <stdlib.h>
#include <string.h>

#include "server/server_reduce.h"
#include "server/server_state.h"

static const int64_t RUN_BYTES = 2 * (int64_t)sizeof(int64_t);

static tsr__srv_runs *find(tsr__srv_server *s, int src, int64_t id) {
  for (tsr__srv_runs *k = s->kept; k; k = k->next)
    if (k->src == src && k->id == id) return k;
  return NULL;
}

/* Append @p n runs (lo, hi pairs at @p p) to @p k, with their positions. */
static int append(tsr__srv_runs *k, const char *p, int64_t n) {
  if (k->nruns + n > k->cap) {
    int64_t cap = k->cap * 2 > k->nruns + n ? k->cap * 2 : k->nruns + n;
    int64_t *r = realloc(k->runs, (size_t)cap * 2 * sizeof *r);
    if (r) k->runs = r;
    int64_t *q = r ? realloc(k->pos, (size_t)cap * sizeof *q) : NULL;
    if (q) k->pos = q;
    if (!r || !q) return TSR_ENOMEM;
    k->cap = cap;
  }
  if (n) memcpy(k->runs + 2 * k->nruns, p, (size_t)(n * RUN_BYTES));
  for (int64_t r = k->nruns; r < k->nruns + n; r++) {
    if (k->runs[2 * r + 1] < k->runs[2 * r]) return TSR_EINVAL;
    k->pos[r] = r ? k->pos[r - 1] + k->runs[2 * r - 1] - k->runs[2 * r - 2] : 0;
  }
  k->nruns += n;
  return 0;
}

tsr__srv_runs *tsr__srv_runs_keep(tsr__srv_server *s, int src, const tsr__wire_hdr *h,
                                  const char *p, int *rc) {
  tsr__srv_runs *k = find(s, src, h->decomp);
  *rc = 0;
  if (h->flat == 1) {
    if (!k && (k = calloc(1, sizeof *k))) {
      k->src = src;
      k->id = h->decomp;
      k->next = s->kept;
      s->kept = k;
    }
    if (!k) {
      *rc = TSR_ENOMEM;
      return NULL;
    }
    if (h->at == 0) k->nruns = 0; /* afresh: the first (or only) part */
    *rc = h->nruns < 0 ? TSR_EINVAL : append(k, p, h->nruns);
    if (*rc) k->nruns = 0;
  }
  if (!*rc && !k) *rc = TSR_EINVAL; /* flat 2 for runs this server never got */
  return *rc ? NULL : k;
}

void tsr__srv_runs_free(tsr__srv_server *s) {
  while (s->kept) {
    tsr__srv_runs *k = s->kept;
    s->kept = k->next;
    free(k->runs);
    free(k->pos);
    free(k);
  }
}

int tsr__srv_write_runs(tsr__srv_server *s, tsr__sink *sink, const tsr__wire_hdr *h, const tsr__srv_runs *k,
                        char *data, int64_t avail) {
  size_t es = tsr__type_size(sink->schema->vars[h->varid].type);
  size_t ws = h->wire_f64 ? sizeof(double) : es;
  if (avail % (int64_t)ws) return TSR_EINVAL;
  int64_t n = avail / (int64_t)ws;
  if (n > 0 && k->nruns == 0) return TSR_EINVAL;
  if (h->wire_f64) tsr__doubles_to_floats(data, n); /* doubles of a float variable */
  /* The run that holds packed position at: the last one starting at or before it. */
  int64_t a = 0, b = k->nruns;
  while (b - a > 1) {
    int64_t m = a + (b - a) / 2;
    if (k->pos[m] <= h->at) a = m;
    else b = m;
  }
  int rc = 0;
  for (int64_t r = a, off = n ? h->at - k->pos[a] : 0; n > 0 && !rc; r++, off = 0) {
    if (r >= k->nruns) return TSR_EINVAL; /* more data than the runs hold */
    int64_t lo = k->runs[2 * r] + off, hi = k->runs[2 * r + 1];
    if (hi - lo > n) hi = lo + n;
    tsr__srv_reduce_run(s, h, lo, hi - lo, data, es);
    /* A run is at most 2*nd-1 boxes of the variable (whole rows, planes, ...). */
    tsr__box bx[2 * TSR_MAX_DIMS];
    int nb = tsr__flat_range_boxes(h->nd, h->count, lo, hi, bx);
    for (int i = 0; i < nb && !rc; i++) {
      rc = tsr__sink_write(sink, h->varid, h->frame, bx[i].start, bx[i].count, data,
                           (tsr__memview){0});
      data += tsr__box_elems(h->nd, &bx[i]) * (int64_t)es;
    }
    n -= hi - lo;
  }
  return rc;
}

int64_t tsr__srv_runs_in(const int64_t *runs, int64_t nruns, int64_t lo, int64_t hi,
                         int64_t *first) {
  /* Binary search: the first run that ends after lo. */
  int64_t a = 0, b = nruns, n = 0;
  while (a < b) {
    int64_t m = a + (b - a) / 2;
    if (runs[2 * m + 1] <= lo) a = m + 1;
    else b = m;
  }
  *first = a;
  for (int64_t r = a; r < nruns && runs[2 * r] < hi; r++)
    n += (runs[2 * r + 1] < hi ? runs[2 * r + 1] : hi) - (runs[2 * r] > lo ? runs[2 * r] : lo);
  return n;
}

void tsr__srv_runs_place(const int64_t *runs, int64_t nruns, int64_t first, int64_t lo, int64_t hi,
                         const char *src, size_t es, char *slab) {
  for (int64_t r = first; r < nruns && runs[2 * r] < hi; r++) {
    int64_t a = runs[2 * r] > lo ? runs[2 * r] : lo, b = runs[2 * r + 1] < hi ? runs[2 * r + 1] : hi;
    memcpy(slab + (a - lo) * (int64_t)es, src, (size_t)(b - a) * es);
    src += (b - a) * (int64_t)es;
  }
}
