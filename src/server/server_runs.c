/* Server side of flat tiles (index maps, box lists; the model side is
 * server_handoff_runs.c): a client's runs arrive with its data packed in run
 * order, and the server places each run where it belongs, in the file
 * (parallel backends) or in the slab being assembled (serial backends). */
#include <string.h>

#include "server/server_state.h"

int tsr__srv_write_runs(tsr__sink *sink, const tsr__wire_hdr *h, char *p, int64_t avail) {
  int64_t nruns = h->nruns, n = 0;
  if (nruns < 0 || avail < nruns * 2 * (int64_t)sizeof(int64_t)) return TSR_EINVAL;
  char *data = p + nruns * 2 * (int64_t)sizeof(int64_t);
  for (int64_t r = 0; r < nruns; r++) {
    int64_t pair[2];
    memcpy(pair, p + r * (int64_t)sizeof pair, sizeof pair);
    n += pair[1] - pair[0];
  }
  size_t es = tsr__type_size(sink->schema->vars[h->varid].type);
  int64_t have = avail - (data - p);
  if (have != n * (int64_t)(h->wire_f64 ? sizeof(double) : es)) return TSR_EINVAL;
  if (h->wire_f64) tsr__doubles_to_floats(data, n); /* doubles of a float variable */
  int rc = 0;
  for (int64_t r = 0; r < nruns && !rc; r++) {
    int64_t pair[2];
    memcpy(pair, p + r * (int64_t)sizeof pair, sizeof pair);
    /* A run is at most 2*nd-1 boxes of the variable (whole rows, planes, ...). */
    tsr__box bx[2 * TSR_MAX_DIMS];
    int nb = tsr__flat_range_boxes(h->nd, h->count, pair[0], pair[1], bx);
    for (int b = 0; b < nb && !rc; b++) {
      rc = tsr__sink_write(sink, h->varid, h->frame, bx[b].start, bx[b].count, data,
                           (tsr__memview){0});
      data += tsr__box_elems(h->nd, &bx[b]) * (int64_t)es;
    }
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
