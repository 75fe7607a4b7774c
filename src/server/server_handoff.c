/* Model side: hand a tile (or replicated data, or a control message) over to
 * the servers. The message is packed into the ring and its sends started;
 * the call returns at once, so the model computes while the servers write.
 * A client that cannot hand its tile over (no memory, a message over 2 GiB)
 * still completes the round with an error header: the file fails on the
 * server and every stream stays in step. */
#include <limits.h>
#include <string.h>

#include "handle/handles.h"
#include "server/server_client.h"

/* Copy box @p x of the tile from the memory box into @p dst (laid out over
 * x): as is (elements of @p es bytes), converted to float, or as doubles. */
static void copy_part(const tsr_decomp *d, const tsr__box *x, const void *buf, size_t es, int how,
                      void *dst) {
  int nd = d->ndims;
  if (how != TSR__HOW_TO_FLOAT) {
    tsr__copy_box(nd, x, how == TSR__HOW_DOUBLES ? sizeof(double) : es, buf, d->mem.start, d->mem.count,
                  dst, x->start, x->count);
    return;
  }
  /* Row by row along the fastest dimension: float(x) of each double. */
  int64_t row = x->count[nd - 1], nrows = row ? tsr__box_elems(nd, x) / row : 0;
  int64_t idx[TSR_MAX_DIMS] = {0};
  const double *src = buf;
  float *out = dst;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t off = 0;
    for (int i = 0; i < nd; i++) off = off * d->mem.count[i] + (x->start[i] + idx[i] - d->mem.start[i]);
    for (int64_t j = 0; j < row; j++) out[r * row + j] = (float)src[off + j];
    for (int i = nd - 2; i >= 0; i--) {
      if (++idx[i] < x->count[i]) break;
      idx[i] = 0;
    }
  }
}

/* One message of a parallel round: header + [holes] + box @p x of the tile. */
static int put_box(tsr__srv_client *cl, const tsr__srv_cfile *cf, const tsr__wire_hdr *h,
                   const tsr_decomp *d, const tsr__box *x, const void *buf, size_t es, int how) {
  int64_t hbytes = (int64_t)h->nholes * (int64_t)sizeof(tsr__box);
  int64_t data = tsr__box_elems(d->ndims, x) * (int64_t)tsr__srv_wire_size(es, how);
  int64_t len = (int64_t)sizeof *h + hbytes + data;
  if (len > INT_MAX) return tsr__srv_send_failed(cl, h, TSR_ETOOBIG, cf->server);
  int64_t off = tsr__ring_reserve(&cl->ring, len);
  if (off < 0) return tsr__srv_send_failed(cl, h, TSR_ENOMEM, cf->server);
  char *p = cl->ring.buf + off;
  tsr__wire_hdr hx = *h;
  for (int i = 0; i < d->ndims; i++) {
    hx.start[i] = x->start[i];
    hx.count[i] = x->count[i];
  }
  memcpy(p, &hx, sizeof hx);
  if (hbytes) memcpy(p + sizeof hx, d->holes, (size_t)hbytes);
  if (data) copy_part(d, x, buf, es, how, p + sizeof hx + hbytes);
  return tsr__ring_send(&cl->ring, off, len, cf->server, TSR__WIRE_TAG_HDR);
}

/* Parallel backends: header + [holes] + the tile, to this rank's server.
 * Model rank 0 adds the holes: the root writes them with the fill value, as
 * rank 0 does in strategy=direct. When the servers' memory is bounded
 * (server_buffer_bytes) and the message would be larger than a server
 * accepts, the tile goes as nparts messages of sub-boxes (the plan engine's
 * chunks of the tile), the holes with the first. */
static int put_whole(tsr__srv_client *cl, const tsr__srv_cfile *cf, tsr__wire_hdr *h,
                     const tsr_decomp *d, const void *buf, size_t es, int how) {
  h->nholes = cl->m == 0 ? d->nholes : 0;
  h->nparts = 1;
  size_t ws = tsr__srv_wire_size(es, how);
  int64_t hbytes = (int64_t)h->nholes * (int64_t)sizeof(tsr__box);
  int64_t len = (int64_t)sizeof *h + hbytes + d->my_elems * (int64_t)ws;
  if (!cl->chunk || len <= cl->chunk || d->my_elems == 0)
    return put_box(cl, cf, h, d, &d->tile, buf, es, how);
  int64_t room = cl->chunk - (int64_t)sizeof *h - hbytes;
  tsr__layout L;
  memset(&L, 0, sizeof L);
  int rc = tsr__layout_chunks(d->ndims, d->tile.count, room > (int64_t)ws ? room / (int64_t)ws : 1,
                              0, &L);
  if (rc) return tsr__srv_send_failed(cl, h, rc, cf->server);
  h->nparts = tsr__srv_slab_count(&L);
  for (int b = 0; b < h->nparts; b++) {
    tsr__box x = L.boxes[b];
    for (int i = 0; i < d->ndims; i++) x.start[i] += d->tile.start[i];
    /* The server peeks at every client's first part, then takes the parts
     * client by client: concentrators forward in that order. */
    cl->tp.order = b > 0;
    int r = put_box(cl, cf, h, d, &x, buf, es, how);
    if (r && !rc) rc = r; /* the later parts still go (failed ones as error headers) */
    h->nholes = 0;
  }
  cl->tp.order = 0;
  tsr__layout_free(&L);
  return rc;
}

/* Serial backends: the root assembles the variable slab by slab, so the tile
 * goes out as a header plus one piece per slab box it meets, in the order of
 * the shared slab walk. Whole levels: the same to every task @p t of the
 * group (wcomm rank @p dest), for the boxes of its levels; a header also
 * where the tile meets none, since every task takes one from every client. */
static int put_pieces(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                      const tsr__wire_hdr *h0, const tsr_decomp *d, const void *buf, size_t es,
                      int how, int t, int dest) {
  size_t ws = tsr__srv_wire_size(es, how); /* the slabs are the file's: element size es */
  tsr__wire_hdr hh = *h0, *h = &hh;
  const tsr__layout *L;
  int rc = tsr__srv_slabs_of(&cf->slabs, h->varid, t, d->ndims, d->gsize, es,
                             tsr__srv_slab_bytes(hints->slab_bytes, cl->chunk), &L);
  if (rc) return tsr__srv_send_failed(cl, h, rc, dest);
  int nb = tsr__srv_slab_count(L);
  int64_t len = tsr__wire_align(sizeof *h), maxpiece = 0;
  tsr__box x;
  for (int b = 0; b < nb; b++)
    if (tsr__srv_slab_piece(L, b, d->ndims, &d->tile, &x)) {
      int64_t n = tsr__box_elems(d->ndims, &x) * (int64_t)ws;
      len += tsr__wire_align(n);
      if (n > maxpiece) maxpiece = n;
      h->npieces++;
    }
  if (maxpiece > INT_MAX) return tsr__srv_send_failed(cl, h, TSR_ETOOBIG, dest);
  int64_t off = tsr__ring_reserve(&cl->ring, len);
  if (off < 0) return tsr__srv_send_failed(cl, h, TSR_ENOMEM, dest);
  memcpy(cl->ring.buf + off, h, sizeof *h);
  rc = tsr__ring_send(&cl->ring, off, sizeof *h, dest, TSR__WIRE_TAG_HDR);
  int64_t at = off + tsr__wire_align(sizeof *h);
  for (int b = 0; b < nb && !rc && h->npieces; b++) {
    if (!tsr__srv_slab_piece(L, b, d->ndims, &d->tile, &x)) continue;
    int64_t n = tsr__box_elems(d->ndims, &x) * (int64_t)ws;
    copy_part(d, &x, buf, es, how, cl->ring.buf + at);
    /* The root takes every header, then the pieces box by box: with
     * concentrators, piece of box b goes after every header (order 0). */
    cl->tp.order = b + 1;
    rc = tsr__ring_send(&cl->ring, at, n, dest, TSR__WIRE_TAG_DATA);
    at += tsr__wire_align(n);
  }
  cl->tp.order = 0;
  return rc;
}

/* Whole levels: the tile's pieces to every task of the group, in task order
 * (each task's stream from this client stays in op order). */
static int put_levels(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                      const tsr__wire_hdr *h, const tsr_decomp *d, const void *buf, size_t es,
                      int how) {
  int rc = 0;
  for (int t = 0; t < cl->L.T; t++) {
    int dest = tsr__srv_server_rank(&cl->L, cf->group, t);
    int r = d->tiles.flat /* index maps, box lists: server_handoff_runs.c */
                ? tsr__srv_handoff_run_pieces(cl, cf, hints, h, d, buf, es, how, t, dest)
                : put_pieces(cl, cf, hints, h, d, buf, es, how, t, dest);
    if (r && !rc) rc = r; /* the other tasks still get their round */
  }
  return rc;
}

int tsr__srv_handoff_put(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                         const tsr__wire_hdr *h0, const tsr_decomp *d, const void *buf,
                         size_t esize, int f64) {
  tsr__wire_hdr h = *h0;
  /* Doubles of a float variable: converted here with precision=float (half
   * the bytes move), else sent as they are and converted by the server. */
  int how = !f64 ? TSR__HOW_AS_IS : hints->precision_float ? TSR__HOW_TO_FLOAT : TSR__HOW_DOUBLES;
  h.wire_f64 = how == TSR__HOW_DOUBLES;
  tsr__ring_progress(&cl->ring, 0); /* reclaim what the servers took meanwhile */
  if (d->tiles.flat) { /* index maps, box lists: their runs travel (server_handoff_runs.c) */
    h.flat = 1;
    for (int i = 0; i < d->ndims; i++) {
      h.start[i] = 0;
      h.count[i] = d->gsize[i];
    }
  }
  if (cf->levels) return put_levels(cl, cf, hints, &h, d, buf, esize, how);
  if (d->tiles.flat)
    return cf->parallel ? tsr__srv_handoff_runs(cl, cf, &h, d, buf, esize, how)
                        : tsr__srv_handoff_run_pieces(cl, cf, hints, &h, d, buf, esize, how, 0,
                                                      cf->server);
  return cf->parallel ? put_whole(cl, cf, &h, d, buf, esize, how)
                      : put_pieces(cl, cf, hints, &h, d, buf, esize, how, 0, cf->server);
}

int tsr__srv_handoff_global(tsr__srv_client *cl, const tsr__srv_cfile *cf, const tsr__wire_hdr *h,
                            const void *buf, int64_t bytes) {
  int64_t len = (int64_t)sizeof *h + bytes;
  int root = tsr__srv_server_rank(&cl->L, cf->group, 0);
  if (len > INT_MAX) return tsr__srv_send_failed(cl, h, TSR_ETOOBIG, root);
  int64_t off = tsr__ring_reserve(&cl->ring, len);
  if (off < 0) return tsr__srv_send_failed(cl, h, TSR_ENOMEM, root);
  memcpy(cl->ring.buf + off, h, sizeof *h);
  memcpy(cl->ring.buf + off + sizeof *h, buf, (size_t)bytes);
  return tsr__ring_send(&cl->ring, off, len, root, TSR__WIRE_TAG_HDR);
}
