/* strategy=servers, model side: every op hands messages to the servers and
 * returns; only tsr_flush and tsr_finalize wait for them. Errors the servers
 * meet come back to model rank 0 in notes and acknowledgements; the API
 * layer's agreement then gives every model rank the same code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_proto.h"
#include "server/servers.h"
#include "strategy/strategy.h"

typedef struct {
  int id, group, parallel;
  int server; /* wcomm rank this rank sends the file's data to */
  int first;  /* 1: this rank sends the file's control messages to it */
  tsr__layout *lay; /* serial backends: the root's slab layout, per variable */
} srv_state;

/* The model rank's task in every group, and whether it is its first client. */
static void my_server(const struct tsr__server_client *cl, int g, int parallel, int *server,
                      int *first) {
  int t = parallel ? tsr__srv_task_of(&cl->L, cl->m) : 0;
  *server = tsr__srv_server_rank(&cl->L, g, t);
  *first = parallel ? cl->m == tsr__srv_block_lo(&cl->L, t) : cl->m == 0;
}

static void free_state(tsr_file *f) {
  srv_state *s = f->sdata;
  if (!s) return;
  if (s->lay)
    for (int v = 0; v < f->schema.nvars; v++) tsr__layout_free(&s->lay[v]);
  free(s->lay);
  free(s);
  f->sdata = NULL;
}

/* A control message (header only) to this rank's server, from first clients. */
static int send_control(struct tsr__server_client *cl, int op, int file, int dest) {
  int64_t off = tsr__srv_ring_reserve(cl, sizeof(tsr__srv_hdr));
  if (off < 0) return TSR_ENOMEM;
  tsr__srv_hdr *h = (tsr__srv_hdr *)(cl->ring + off);
  memset(h, 0, sizeof *h);
  h->op = op;
  h->file = file;
  return tsr__srv_ring_send(cl, off, sizeof *h, dest, TSR__SRV_TAG_HDR);
}

static int pick_group(tsr_file *f, struct tsr__server_client *cl) {
  int g = cl->rr % cl->L.G;
  if (f->hints.server_pick_idle) {
    /* Only model rank 0 hears from the servers: it decides for everyone. */
    if (cl->m == 0) {
      tsr__srv_poll_notes(cl, 0);
      g = tsr__srv_pick_idle(cl);
    }
    if (MPI_Bcast(&g, 1, MPI_INT, 0, f->ctx->comm) != MPI_SUCCESS) return -1;
  }
  cl->rr = g + 1;
  return g;
}

static int v_enddef(tsr_file *f) {
  struct tsr__server_client *cl = f->ctx->servers;
  srv_state *s = calloc(1, sizeof *s);
  int rc = s ? 0 : TSR_ENOMEM;
  f->sdata = s;
  rc = tsr__agree(f->ctx->comm, rc);
  if (rc) return rc;
  s->id = cl->next_file++;
  s->group = pick_group(f, cl);
  if (s->group < 0) return TSR_EMPI;
  s->parallel = f->backend->parallel;
  my_server(cl, s->group, s->parallel, &s->server, &s->first);
  if (!s->parallel) {
    s->lay = calloc((size_t)(f->schema.nvars ? f->schema.nvars : 1), sizeof *s->lay);
    if (!s->lay) rc = TSR_ENOMEM;
  }
  if (!rc && cl->m == 0) rc = tsr__srv_track_open(cl, s->id, s->group, s->parallel ? cl->L.T : 1);

  /* The first client of each server ships the file: hints, path, schema.
   * Packed and agreed before anything is sent, so that a failure here never
   * leaves a server with half a file. */
  int64_t off = -1, len = 0;
  void *packed = NULL;
  size_t plen = 0;
  if (!rc && s->first) {
    rc = tsr__schema_pack(&f->schema, &packed, &plen);
    int64_t lpath = (int64_t)strlen(f->path) + 1;
    len = (int64_t)sizeof(tsr__srv_hdr) + (int64_t)sizeof(tsr__hints) + lpath + (int64_t)plen;
    if (!rc) off = tsr__srv_ring_reserve(cl, len);
    if (!rc && off < 0) rc = TSR_ENOMEM;
    if (!rc) {
      char *p = cl->ring + off;
      tsr__srv_hdr h = {.op = TSR__SRV_OPEN, .file = s->id, .parallel = s->parallel,
                        .len_path = lpath, .len_schema = (int64_t)plen};
      snprintf(h.backend, sizeof h.backend, "%s", f->backend->name);
      memcpy(p, &h, sizeof h);
      memcpy(p + sizeof h, &f->hints, sizeof f->hints);
      memcpy(p + sizeof h + sizeof f->hints, f->path, (size_t)lpath);
      memcpy(p + sizeof h + sizeof f->hints + lpath, packed, plen);
    }
  }
  free(packed);
  rc = tsr__agree(f->ctx->comm, rc);
  if (rc && cl->m == 0) tsr__srv_track_open(cl, s->id, s->group, 0); /* expects nothing */
  if (off >= 0) {
    if (rc) tsr__srv_ring_cancel(cl);
    else rc = tsr__srv_ring_send(cl, off, len, s->server, TSR__SRV_TAG_HDR);
  }
  if (!rc) tsr__fstats_buffer(&f->st, tsr__srv_ring_used(cl));
  return rc;
}

/* A client that cannot hand its tile over still completes the round, with
 * the error in a header the servers turn into a failed file. */
static int send_failed(struct tsr__server_client *cl, tsr__srv_hdr *h, int err, int dest) {
  h->err = err;
  h->nholes = h->npieces = 0;
  MPI_Send(h, (int)sizeof *h, MPI_BYTE, dest, TSR__SRV_TAG_HDR, cl->L.wcomm);
  return err;
}

static int put_parallel(tsr_file *f, srv_state *s, tsr__srv_hdr *h, const tsr_decomp *d,
                        const void *buf, size_t es) {
  struct tsr__server_client *cl = f->ctx->servers;
  /* Model rank 0 tells the root the holes: it writes them with the fill value,
   * as rank 0 does in strategy=direct. */
  h->nholes = cl->m == 0 ? d->nholes : 0;
  int64_t hbytes = (int64_t)h->nholes * (int64_t)sizeof(tsr__box);
  int64_t data = d->my_elems * (int64_t)es;
  int64_t len = (int64_t)sizeof *h + hbytes + data;
  if (len > INT32_MAX) return send_failed(cl, h, TSR_ETOOBIG, s->server);
  int64_t off = tsr__srv_ring_reserve(cl, len);
  if (off < 0) return send_failed(cl, h, TSR_ENOMEM, s->server);
  char *p = cl->ring + off;
  memcpy(p, h, sizeof *h);
  if (hbytes) memcpy(p + sizeof *h, d->holes, (size_t)hbytes);
  if (data)
    tsr__copy_box(d->ndims, &d->tile, es, buf, d->mem.start, d->mem.count, p + sizeof *h + hbytes,
                  d->tile.start, d->tile.count);
  return tsr__srv_ring_send(cl, off, len, s->server, TSR__SRV_TAG_HDR);
}

/* Serial backends: the root assembles the variable slab by slab, so the tile
 * goes out as one piece per slab box it intersects, in the layout's order. */
static int put_pieces(tsr_file *f, srv_state *s, tsr__srv_hdr *h, const tsr_decomp *d,
                      const void *buf, size_t es) {
  struct tsr__server_client *cl = f->ctx->servers;
  tsr__layout *L = &s->lay[h->varid];
  if (!L->npieces) {
    int rc = tsr__layout_chunks(d->ndims, d->gsize, f->hints.slab_bytes / (int64_t)es, 0, L);
    if (rc) return send_failed(cl, h, rc, s->server);
  }
  int nb = L->first[L->npieces];
  int64_t len = tsr__srv_align(sizeof *h), maxpiece = 0;
  tsr__box x;
  for (int b = 0; b < nb; b++)
    if (d->my_elems && tsr__box_intersect(d->ndims, &L->boxes[b], &d->tile, &x)) {
      int64_t n = tsr__box_elems(d->ndims, &x) * (int64_t)es;
      len += tsr__srv_align(n);
      if (n > maxpiece) maxpiece = n;
      h->npieces++;
    }
  if (maxpiece > INT32_MAX) return send_failed(cl, h, TSR_ETOOBIG, s->server);
  int64_t off = tsr__srv_ring_reserve(cl, len);
  if (off < 0) return send_failed(cl, h, TSR_ENOMEM, s->server);
  memcpy(cl->ring + off, h, sizeof *h);
  int rc = tsr__srv_ring_send(cl, off, sizeof *h, s->server, TSR__SRV_TAG_HDR);
  int64_t at = off + tsr__srv_align(sizeof *h);
  for (int b = 0; b < nb && !rc && h->npieces; b++) {
    if (!tsr__box_intersect(d->ndims, &L->boxes[b], &d->tile, &x)) continue;
    int64_t n = tsr__box_elems(d->ndims, &x) * (int64_t)es;
    tsr__copy_box(d->ndims, &x, es, buf, d->mem.start, d->mem.count, cl->ring + at, x.start,
                  x.count);
    rc = tsr__srv_ring_send(cl, at, n, s->server, TSR__SRV_TAG_DATA);
    at += tsr__srv_align(n);
  }
  return rc;
}

static int v_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  struct tsr__server_client *cl = f->ctx->servers;
  srv_state *s = f->sdata;
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  tsr__srv_ring_progress(cl, 0); /* reclaim what the servers took meanwhile */
  tsr__srv_hdr h;
  memset(&h, 0, sizeof h);
  h.op = TSR__SRV_PUT;
  h.file = s->id;
  h.varid = varid;
  h.nd = d->ndims;
  h.frame = frame;
  for (int i = 0; i < d->ndims; i++) {
    h.start[i] = d->tile.start[i];
    h.count[i] = d->tile.count[i];
  }
  int rc = s->parallel ? put_parallel(f, s, &h, d, buf, es) : put_pieces(f, s, &h, d, buf, es);
  tsr__fstats_buffer(&f->st, tsr__srv_ring_used(cl));
  return rc;
}

static int v_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  struct tsr__server_client *cl = f->ctx->servers;
  srv_state *s = f->sdata;
  if (cl->m != 0) return 0;
  int64_t data = tsr__var_frame_elems(&f->schema, varid) *
                 (int64_t)tsr__type_size(f->schema.vars[varid].type);
  int64_t len = (int64_t)sizeof(tsr__srv_hdr) + data;
  int root = tsr__srv_server_rank(&cl->L, s->group, 0);
  tsr__srv_hdr h;
  memset(&h, 0, sizeof h);
  h.op = TSR__SRV_PUTG;
  h.file = s->id;
  h.varid = varid;
  h.frame = frame;
  if (len > INT32_MAX) return send_failed(cl, &h, TSR_ETOOBIG, root);
  int64_t off = tsr__srv_ring_reserve(cl, len);
  if (off < 0) return send_failed(cl, &h, TSR_ENOMEM, root);
  memcpy(cl->ring + off, &h, sizeof h);
  memcpy(cl->ring + off + sizeof h, buf, (size_t)data);
  return tsr__srv_ring_send(cl, off, len, root, TSR__SRV_TAG_HDR);
}

/* Wait for an acknowledgement from @p src; keeps the largest writer time. */
static int wait_ack(struct tsr__server_client *cl, int src, tsr__srv_reply *r) {
  if (MPI_Recv(r, (int)sizeof *r, MPI_BYTE, src, TSR__SRV_TAG_ACK, cl->L.wcomm,
               MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return TSR_EMPI;
  if (r->writer_s > cl->server_writer_s) cl->server_writer_s = r->writer_s;
  return 0;
}

/* Every model rank learns the largest server writer time heard of. */
static void share_writer_time(tsr_ctx *ctx) {
  double mine = ctx->servers->server_writer_s, all = mine;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
  ctx->servers->server_writer_s = all;
  ctx->stats.server_writer_s = all;
}

/* An error of an earlier file that model rank 0 has not reported yet. */
static int earlier_error(tsr_file *f, int upto) {
  struct tsr__server_client *cl = f->ctx->servers;
  if (cl->m != 0) return 0;
  int rc = tsr__srv_poll_notes(cl, upto);
  tsr__berr berr;
  int err = rc ? rc : tsr__srv_take_error(cl, &berr);
  if (err && !rc) f->berr = berr;
  return err;
}

/* Flush: this file's data reaches its file, and every file closed before is
 * finished (written and closed, or failed and deleted). */
static int v_flush(tsr_file *f) {
  struct tsr__server_client *cl = f->ctx->servers;
  srv_state *s = f->sdata;
  int rc = 0;
  if (s->first) {
    tsr__srv_reply r;
    rc = send_control(cl, TSR__SRV_FLUSH, s->id, s->server);
    if (!rc) rc = wait_ack(cl, s->server, &r);
    if (!rc && r.status) {
      rc = r.status;
      f->berr = r.berr;
    }
  }
  rc = tsr__file_agree(f, rc);
  if (rc && cl->m == 0) tsr__srv_track_reported(cl, s->id); /* reported now, not again */
  int earlier = earlier_error(f, 1);
  share_writer_time(f->ctx);
  return rc ? rc : earlier;
}

/* Close hands the file over and returns: errors of earlier files whose notes
 * arrived meanwhile are reported now, the others at a later call. */
static int v_close(tsr_file *f) {
  struct tsr__server_client *cl = f->ctx->servers;
  srv_state *s = f->sdata;
  int rc = s->first ? send_control(cl, TSR__SRV_CLOSE, s->id, s->server) : 0;
  if (cl->m == 0) tsr__srv_track_close(cl, s->id);
  tsr__srv_ring_progress(cl, 0);
  tsr__fstats_buffer(&f->st, cl->peak);
  int earlier = earlier_error(f, 0);
  if (cl->server_writer_s > f->ctx->stats.server_writer_s)
    f->ctx->stats.server_writer_s = cl->server_writer_s;
  free_state(f);
  return rc ? rc : earlier;
}

static void v_abort(tsr_file *f) { free_state(f); } /* nothing was sent (agreed first) */

static int v_want(const tsr__hints *h) {
  return h->io_tasks > 1 ? TSR__BACKEND_PREFER_PARALLEL : TSR__BACKEND_WANT_SERIAL;
}

const tsr__strategy_ops tsr__strategy_servers = {
    .name = "servers",
    .backend_want = v_want,
    .needs_server_ranks = 1,
    .ranks_init = tsr__servers_init,
    .ranks_finalize = tsr__servers_finalize,
    .enddef = v_enddef,
    .put = v_put,
    .put_global = v_put_global,
    .flush = v_flush,
    .close = v_close,
    .abort = v_abort,
};

int tsr__servers_finalize(tsr_ctx *ctx) {
  struct tsr__server_client *cl = ctx->servers;
  int rc = 0;
  /* A first client stops its server in every group. */
  int t = tsr__srv_task_of(&cl->L, cl->m);
  int first = cl->m == tsr__srv_block_lo(&cl->L, t);
  for (int g = 0; first && g < cl->L.G && !rc; g++)
    rc = send_control(cl, TSR__SRV_FINAL, -1, tsr__srv_server_rank(&cl->L, g, t));
  int r2 = tsr__srv_ring_progress(cl, 1);
  if (!rc) rc = r2;
  for (int g = 0; first && g < cl->L.G && !rc; g++) {
    tsr__srv_reply r;
    rc = wait_ack(cl, tsr__srv_server_rank(&cl->L, g, t), &r);
  }
  if (cl->m == 0 && !rc) {
    rc = tsr__srv_poll_notes(cl, 2);
    if (!rc) rc = tsr__srv_take_error(cl, NULL);
  }
  rc = tsr__agree(ctx->comm, rc);
  share_writer_time(ctx);
  tsr__srv_client_free(cl);
  ctx->servers = NULL;
  return rc;
}
