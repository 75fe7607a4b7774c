/* Model side: hand a flat tile over to the servers. Index maps and box lists
 * reach the strategy as their canon (handle/decomp_map.c): sorted, disjoint
 * runs of row-major indices with the buffer packed in run order. As in PIO's
 * and CDI-PIO's servers, the runs travel to a server once per decomposition
 * (with its first put there; the server keeps them, server_runs.c) and every
 * put sends only the data, which the server places run by run; the model
 * rank copies its buffer once into the ring and moves on, whatever the map's
 * order. The wire is server_wire.h's PUT with flat 1 (runs follow) or 2
 * (the server has them); count holds the global shape. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"
#include "server/server_client.h"

static const int64_t RUN_BYTES = 2 * (int64_t)sizeof(int64_t);

/* @p n packed elements from @p src (as the caller holds them: doubles when
 * @p how is not TSR__HOW_AS_IS) to @p dst as they go on the wire. */
static void copy_elems(const void *src, int64_t n, size_t es, int how, void *dst) {
  if (how != TSR__HOW_TO_FLOAT) {
    memcpy(dst, src, (size_t)n * tsr__srv_wire_size(es, how));
    return;
  }
  const double *s = src;
  float *o = dst;
  for (int64_t i = 0; i < n; i++) o[i] = (float)s[i];
}

/* Has this rank sent decomposition @p id's runs to wcomm rank @p server? */
static int was_sent(const tsr__srv_client *cl, uint64_t id, int server) {
  for (int64_t i = 0; i < cl->nsent; i++)
    if (cl->sent[2 * i] == (int64_t)id && cl->sent[2 * i + 1] == server) return 1;
  return 0;
}

/* Record that it has (when the record cannot grow, the runs simply go again
 * next time: the server takes flat 1 as a fresh copy). */
static void note_sent(tsr__srv_client *cl, uint64_t id, int server) {
  if (cl->nsent == cl->capsent) {
    int64_t cap = cl->capsent ? 2 * cl->capsent : 8;
    int64_t *p = realloc(cl->sent, (size_t)cap * 2 * sizeof *p);
    if (!p) return;
    cl->sent = p;
    cl->capsent = cap;
  }
  cl->sent[2 * cl->nsent] = (int64_t)id;
  cl->sent[2 * cl->nsent + 1] = server;
  cl->nsent++;
}

/* Bytes of one element in the caller's packed buffer. */
static size_t src_size(size_t es, int how) { return how == TSR__HOW_AS_IS ? es : sizeof(double); }

/* Where the next part starts: run r, its index lo, packed position pos. */
typedef struct {
  int64_t r, lo, pos;
} cursor;

static cursor first_cursor(const tsr_decomp *d) {
  cursor c = {0, d->tiles.nruns ? d->tiles.runs[0] : 0, 0};
  return c;
}

/* The part that starts at *c and fits @p room bytes of runs and data (at
 * least one element, so every part moves on): nr runs (the last one maybe
 * cut), ne elements; *c moves past them. */
static void next_part(const int64_t *runs, int64_t nruns, cursor *c, int64_t room, size_t ws,
                      int64_t *nr, int64_t *ne) {
  *nr = *ne = 0;
  while (c->r < nruns) {
    int64_t left = room - (*nr + 1) * RUN_BYTES - *ne * (int64_t)ws;
    if (*nr > 0 && left < (int64_t)ws) break;
    int64_t hi = runs[2 * c->r + 1], take = hi - c->lo, fit = left / (int64_t)ws;
    if (fit < 1) fit = 1;
    if (take > fit) take = fit;
    (*nr)++;
    *ne += take;
    c->lo += take;
    c->pos += take;
    if (c->lo < hi) break;
    if (++c->r < nruns) c->lo = runs[2 * c->r];
  }
}

/* Write the nr runs of the part starting at @p c (ne elements) as lo, hi
 * pairs at @p out. */
static void part_runs(const int64_t *runs, cursor c, int64_t nr, int64_t ne, char *out) {
  for (int64_t j = 0; j < nr; j++, c.r++) {
    int64_t lo = j ? runs[2 * c.r] : c.lo, hi = runs[2 * c.r + 1];
    if (hi - lo > ne) hi = lo + ne;
    ne -= hi - lo;
    int64_t pair[2] = {lo, hi};
    memcpy(out + j * RUN_BYTES, pair, sizeof pair);
  }
}

/* One message of a parallel round: header + [holes] + [runs] + data. */
static int send_part(tsr__srv_client *cl, const tsr__srv_cfile *cf, const tsr__wire_hdr *h,
                     const tsr_decomp *d, cursor c, int64_t nr, int64_t ne, int holes,
                     const void *buf, size_t es, int how) {
  tsr__wire_hdr hx = *h;
  if (h->flat == 2) nr = 0; /* the server has them */
  hx.nruns = nr;
  hx.at = c.pos;
  hx.nholes = holes ? h->nholes : 0;
  int64_t hbytes = (int64_t)hx.nholes * (int64_t)sizeof(tsr__box);
  int64_t len = (int64_t)sizeof hx + hbytes + nr * RUN_BYTES +
                ne * (int64_t)tsr__srv_wire_size(es, how);
  if (len > INT_MAX) return tsr__srv_send_failed(cl, &hx, TSR_ETOOBIG, cf->server);
  int64_t off = tsr__ring_reserve(&cl->ring, len);
  if (off < 0) return tsr__srv_send_failed(cl, &hx, TSR_ENOMEM, cf->server);
  char *p = cl->ring.buf + off;
  memcpy(p, &hx, sizeof hx);
  p += sizeof hx;
  if (hbytes) memcpy(p, d->holes, (size_t)hbytes);
  p += hbytes;
  part_runs(d->tiles.runs, c, nr, ne, p);
  copy_elems((const char *)buf + c.pos * (int64_t)src_size(es, how), ne, es, how,
             p + nr * RUN_BYTES);
  return tsr__ring_send(&cl->ring, off, len, cf->server, TSR__WIRE_TAG_HDR);
}

int tsr__srv_handoff_runs(tsr__srv_client *cl, const tsr__srv_cfile *cf, tsr__wire_hdr *h,
                          const tsr_decomp *d, const void *buf, size_t es, int how) {
  size_t ws = tsr__srv_wire_size(es, how);
  const int64_t *runs = d->tiles.runs;
  int64_t nruns = d->tiles.nruns;
  /* A flat canon's holes are every rank's own share of them (decomp_map.c). */
  h->nholes = d->holes_here || cl->m == 0 ? d->nholes : 0;
  int64_t hbytes = (int64_t)h->nholes * (int64_t)sizeof(tsr__box);
  int64_t room = cl->chunk ? cl->chunk - (int64_t)sizeof *h - hbytes : INT64_MAX;
  if (room < RUN_BYTES + (int64_t)ws) room = RUN_BYTES + (int64_t)ws;
  /* Parts are counted first: the server learns nparts from the first one. */
  cursor c = first_cursor(d);
  int64_t nr, ne, nparts = 0;
  do {
    next_part(runs, nruns, &c, room, ws, &nr, &ne);
    nparts++;
  } while (c.r < nruns);
  if (nparts > INT_MAX) return tsr__srv_send_failed(cl, h, TSR_ETOOBIG, cf->server);
  h->nparts = (int32_t)nparts;
  h->decomp = (int64_t)d->id;
  h->flat = was_sent(cl, d->id, cf->server) ? 2 : 1;
  c = first_cursor(d);
  int rc = 0;
  for (int64_t k = 0; k < nparts; k++) {
    cursor c0 = c;
    next_part(runs, nruns, &c, room, ws, &nr, &ne);
    int r = send_part(cl, cf, h, d, c0, nr, ne, k == 0, buf, es, how);
    if (r && !rc) rc = r; /* the later parts still go (failed ones as error headers) */
  }
  if (!rc && h->flat == 1) note_sent(cl, d->id, cf->server);
  return rc;
}

/* Serial backends: the part of the runs in each slab box is one stretch of
 * the packed buffer (runs ascend). pieces[2k], pieces[2k+1]: packed position
 * and length of the k-th non-empty one. Boxes must be ascending contiguous
 * ranges (the layout's are); TSR_EINVAL otherwise. */
static int cut_pieces(const tsr_decomp *d, const tsr__layout *L, int64_t *pieces, int32_t *np) {
  const int64_t *runs = d->tiles.runs;
  int64_t nruns = d->tiles.nruns, r = 0, pos = 0, prev = 0;
  *np = 0;
  for (int b = 0; b < tsr__srv_slab_count(L); b++) {
    int64_t lo, hi;
    if (!tsr__srv_slab_range(L, b, d->ndims, d->gsize, &lo, &hi) || lo < prev) return TSR_EINVAL;
    if (hi > lo) prev = hi;
    while (r < nruns && runs[2 * r + 1] <= lo) pos += runs[2 * r + 1] - runs[2 * r], r++;
    int64_t first = r < nruns && runs[2 * r] < lo ? pos + lo - runs[2 * r] : pos, n = 0;
    for (int64_t q = r; q < nruns && runs[2 * q] < hi; q++)
      n += (runs[2 * q + 1] < hi ? runs[2 * q + 1] : hi) - (runs[2 * q] > lo ? runs[2 * q] : lo);
    if (n == 0) continue;
    pieces[2 * *np] = first;
    pieces[2 * *np + 1] = n;
    (*np)++;
  }
  return 0;
}

int tsr__srv_handoff_run_pieces(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                                const tsr__wire_hdr *h0, const tsr_decomp *d, const void *buf,
                                size_t es, int how, int t, int dest) {
  size_t ws = tsr__srv_wire_size(es, how), ss = src_size(es, how);
  tsr__wire_hdr hh = *h0, *h = &hh;
  const tsr__layout *L;
  int rc = tsr__srv_slabs_of(&cf->slabs, h->varid, t, d->ndims, d->gsize, es,
                             tsr__srv_slab_bytes(hints->slab_bytes, cl->chunk), &L);
  int64_t *pieces = rc ? NULL : malloc(2 * sizeof(int64_t) * (size_t)(tsr__srv_slab_count(L) + 1));
  if (!rc && !pieces) rc = TSR_ENOMEM;
  if (!rc) rc = cut_pieces(d, L, pieces, &h->npieces);
  h->nruns = d->tiles.nruns;
  h->decomp = (int64_t)d->id;
  h->flat = was_sent(cl, d->id, dest) ? 2 : 1;
  /* The runs (flat 1) go as DATA messages of at most `per` runs. */
  int64_t per = tsr__wire_runs_per_msg(cl->chunk), nr = h->flat == 1 ? h->nruns : 0;
  int64_t len = tsr__wire_align(sizeof *h);
  for (int64_t r = 0; r < nr; r += per) len += tsr__wire_align((nr - r < per ? nr - r : per) * RUN_BYTES);
  for (int k = 0; !rc && k < h->npieces; k++) {
    if (pieces[2 * k + 1] * (int64_t)ws > INT_MAX) rc = TSR_ETOOBIG;
    len += tsr__wire_align(pieces[2 * k + 1] * (int64_t)ws);
  }
  int64_t off = rc ? -1 : tsr__ring_reserve(&cl->ring, len);
  if (!rc && off < 0) rc = TSR_ENOMEM;
  if (rc) {
    free(pieces);
    return tsr__srv_send_failed(cl, h, rc, dest);
  }
  memcpy(cl->ring.buf + off, h, sizeof *h);
  rc = tsr__ring_send(&cl->ring, off, sizeof *h, dest, TSR__WIRE_TAG_HDR);
  int64_t at = off + tsr__wire_align(sizeof *h);
  for (int64_t r = 0; r < nr && !rc; r += per) {
    int64_t bytes = (nr - r < per ? nr - r : per) * RUN_BYTES;
    memcpy(cl->ring.buf + at, d->tiles.runs + 2 * r, (size_t)bytes);
    rc = tsr__ring_send(&cl->ring, at, bytes, dest, TSR__WIRE_TAG_DATA);
    at += tsr__wire_align(bytes);
  }
  if (!rc && h->flat == 1) note_sent(cl, d->id, dest);
  for (int k = 0; k < h->npieces && !rc; k++) {
    int64_t n = pieces[2 * k + 1];
    copy_elems((const char *)buf + pieces[2 * k] * (int64_t)ss, n, es, how, cl->ring.buf + at);
    rc = tsr__ring_send(&cl->ring, at, n * (int64_t)ws, dest, TSR__WIRE_TAG_DATA);
    at += tsr__wire_align(n * (int64_t)ws);
  }
  free(pieces);
  return rc;
}
