/* tessera-bench --plain METHOD: the history files written with the
 * libraries' own calls and no Tessera, as a model without Tessera writes
 * them, so that each strategy has a counterpart to be timed against:
 *
 *   gather        MPI_Gatherv of each field to rank 0, which assembles the
 *                 whole field and writes it with one nc_put_vara (WRF
 *                 io_form=2; Tessera's serial, and servers' group root)
 *   split         every rank its own NetCDF file <path>.NNNN (io_form=102),
 *                 laid out as strategy=split lays out its pieces
 *   pnetcdf       ncmpi_iput_vara from the halo'd array (a subarray type,
 *                 no copy) and ncmpi_wait_all once per frame (direct, aggregate)
 *   pnetcdf-bput  the same with ncmpi_bput_vara into an attached buffer
 *   pnetcdf-vara  ncmpi_put_vara_all per variable (WRF io_form=11)
 *
 * The files hold the same dimensions, variables, attributes and values as
 * Tessera's (format CDF-2, Tessera's default); --check verifies them. Errors
 * are kept on the rank that met them and agreed on at the end of each frame
 * and at close, so a failure on one rank never leaves the others waiting. */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plain.h"

static const struct {
  const char *name;
  int method;
} methods[] = {{"gather", PLAIN_GATHER},          {"split", PLAIN_SPLIT},
               {"pnetcdf", PLAIN_PNC_IPUT},       {"pnetcdf-bput", PLAIN_PNC_BPUT},
               {"pnetcdf-vara", PLAIN_PNC_VARA}};

int bench_plain_method(const char *name) {
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (strcmp(methods[i].name, name) == 0) return methods[i].method;
  return 0;
}

static int pnc_method(int m) { return m == PLAIN_PNC_IPUT || m == PLAIN_PNC_BPUT || m == PLAIN_PNC_VARA; }

int plain_fit(void **buf, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  void *p = realloc(*buf, n);
  if (!p) return -1;
  *buf = p;
  *cap = n;
  return 0;
}

int plain_tile_contiguous(const bench_shape *sh) {
  for (int d = 0; d < sh->ndims; d++)
    if (sh->mcount[d] != sh->count[d]) return 0;
  return 1;
}

MPI_Datatype plain_mpi_type(tsr_type t) {
  switch (t) {
  case TSR_BYTE: return MPI_SIGNED_CHAR;
  case TSR_CHAR: return MPI_CHAR;
  case TSR_SHORT: return MPI_SHORT;
  case TSR_INT: return MPI_INT;
  case TSR_FLOAT: return MPI_FLOAT;
  case TSR_DOUBLE: return MPI_DOUBLE;
  case TSR_UBYTE: return MPI_UNSIGNED_CHAR;
  case TSR_USHORT: return MPI_UNSIGNED_SHORT;
  case TSR_UINT: return MPI_UNSIGNED;
  case TSR_INT64: return MPI_INT64_T;
  case TSR_UINT64: return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}

int plain_fail(bench_run *run, const char *lib, const char *call, const char *what,
               const char *msg) {
  if (!run->plain->failed)
    snprintf(run->err, sizeof run->err, "plain %.16s: %.40s(%.600s): %.300s", lib, call, what, msg);
  run->plain->failed = 1;
  return -1;
}

void plain_copy_box(char *dst, const int64_t dshape[], const int64_t doff[], const char *src,
                    const int64_t sshape[], const int64_t soff[], const int64_t count[], int nd,
                    size_t es) {
  int64_t idx[TSR_MAX_DIMS] = {0};
  for (int d = 0; d < nd; d++)
    if (count[d] <= 0) return;
  size_t row = (size_t)count[nd - 1] * es;
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int d = 0; d < nd; d++) {
      so = so * sshape[d] + soff[d] + (d < nd - 1 ? idx[d] : 0);
      dof = dof * dshape[d] + doff[d] + (d < nd - 1 ? idx[d] : 0);
    }
    memcpy(dst + (size_t)dof * es, src + (size_t)so * es, row);
    int d = nd - 2;
    for (; d >= 0; d--) {
      if (++idx[d] < count[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* ------------------------------------------------------------------ define */

typedef struct {
  char name[TSR_MAX_NAME + 16];
  int64_t len;
  int id;
} piece_dim_t;

/* strategy=split's rule (src/strategy/split.c): the first extent a file
 * dimension takes keeps its name, another one gets `<name>_t<k>`. */
static int piece_dim(bench_run *run, const plain_api *api, int ncid, piece_dim_t *pd, int *npd,
                     int fd, int64_t len, int *out) {
  const bench_dim *d = &run->schema.dims[fd];
  if (d->len == TSR_UNLIMITED) len = TSR_UNLIMITED;
  for (int k = 0;; k++) {
    char name[TSR_MAX_NAME + 16];
    if (k == 0) snprintf(name, sizeof name, "%s", d->name);
    else snprintf(name, sizeof name, "%s_t%d", d->name, k);
    int found = -1;
    for (int i = 0; i < *npd; i++)
      if (strcmp(pd[i].name, name) == 0) found = i;
    if (found >= 0 && pd[found].len == len) {
      *out = pd[found].id;
      return 0;
    }
    if (found >= 0) continue;
    piece_dim_t *n = &pd[(*npd)++];
    snprintf(n->name, sizeof n->name, "%s", name);
    n->len = len;
    int st = api->def_dim(ncid, name, len, &n->id);
    if (st) return plain_fail(run, api->lib, "def_dim", name, api->strerror(st));
    *out = n->id;
    return 0;
  }
}

static int put_atts(bench_run *run, const plain_api *api, int ncid, int varid,
                    const bench_att_list *l) {
  for (int a = 0; a < l->n; a++) {
    int st = api->put_att(ncid, varid, l->v[a].name, l->v[a].type, l->v[a].len, l->v[a].values);
    if (st) return plain_fail(run, api->lib, "put_att", l->v[a].name, api->strerror(st));
  }
  return 0;
}

/* Extent of dimension i of variable v in this rank's file. */
static int64_t extent(const bench_run *run, int v, int i, int piece) {
  const bench_var *var = &run->schema.vars[v];
  const bench_field *f = &run->fields[v];
  int rec = f->record;
  if (piece && f->shape >= 0 && i >= rec) return run->shapes[f->shape].count[i - rec];
  return run->schema.dims[var->dimids[i]].len;
}

int plain_define(bench_run *run, const plain_api *api, int ncid, int piece) {
  const bench_schema *s = &run->schema;
  piece_dim_t *pd = calloc((size_t)(s->ndims + s->nvars * TSR_MAX_DIMS) + 1, sizeof *pd);
  if (!pd) return plain_fail(run, api->lib, "define", "schema", "out of memory");
  int npd = 0, rc = 0;
  /* Every dimension first, in the schema's order (as Tessera defines them);
   * in a piece with the extent its first decomposed user gives it. */
  for (int fd = 0; fd < s->ndims && !rc; fd++) {
    int64_t len = s->dims[fd].len;
    for (int v = 0, found = 0; piece && v < s->nvars && !found; v++) {
      const bench_field *f = &run->fields[v];
      if (f->shape < 0 || run->shapes[f->shape].tile_elems == 0) continue;
      for (int i = f->record; i < s->vars[v].ndims && !found; i++)
        if (s->vars[v].dimids[i] == fd) {
          len = extent(run, v, i, piece);
          found = 1;
        }
    }
    int id;
    rc = piece_dim(run, api, ncid, pd, &npd, fd, len, &id);
  }
  for (int v = 0; v < s->nvars && !rc; v++) {
    const bench_var *var = &s->vars[v];
    const bench_field *f = &run->fields[v];
    run->plain->varid[v] = -1;
    /* A piece leaves out the variables whose tile is empty here. */
    if (piece && f->shape >= 0 && run->shapes[f->shape].tile_elems == 0) continue;
    int dimids[TSR_MAX_DIMS];
    for (int i = 0; i < var->ndims && !rc; i++)
      rc = piece_dim(run, api, ncid, pd, &npd, var->dimids[i], extent(run, v, i, piece), &dimids[i]);
    if (rc) break;
    int st = api->def_var(ncid, var->name, var->type, var->ndims, dimids, &run->plain->varid[v]);
    if (st) {
      rc = plain_fail(run, api->lib, "def_var", var->name, api->strerror(st));
      break;
    }
    int vid = run->plain->varid[v];
    if ((rc = put_atts(run, api, ncid, vid, &var->atts)) != 0) break;
    if (f->shape < 0) continue;
    /* The attributes tessera-bench and strategy=split add, in their order. */
    if (run->cfg.check && (st = api->put_att(ncid, vid, "check_id", TSR_INT, 1, &f->check_id)))
      rc = plain_fail(run, api->lib, "put_att", "check_id", api->strerror(st));
    if (!rc && piece) {
      const bench_shape *sh = &run->shapes[f->shape];
      int gshape[TSR_MAX_DIMS], tstart[TSR_MAX_DIMS];
      for (int i = 0; i < sh->ndims; i++) {
        gshape[i] = (int)sh->gsize[i];
        tstart[i] = (int)sh->start[i];
      }
      if ((st = api->put_att(ncid, vid, "tessera_global_shape", TSR_INT, (size_t)sh->ndims, gshape)) ||
          (st = api->put_att(ncid, vid, "tessera_tile_start", TSR_INT, (size_t)sh->ndims, tstart)))
        rc = plain_fail(run, api->lib, "put_att", var->name, api->strerror(st));
    }
  }
  if (!rc) rc = put_atts(run, api, ncid, NC_GLOBAL, &s->gatts);
  if (!rc && piece) {
    int r = run->grid.rank, n = run->grid.size, st;
    if ((st = api->put_att(ncid, NC_GLOBAL, "tessera_split_rank", TSR_INT, 1, &r)) ||
        (st = api->put_att(ncid, NC_GLOBAL, "tessera_split_nranks", TSR_INT, 1, &n)))
      rc = plain_fail(run, api->lib, "put_att", "tessera_split_rank", api->strerror(st));
  }
  free(pd);
  return rc;
}

/* ------------------------------------------------------------------ NetCDF */

static int nc_dim(int ncid, const char *name, int64_t len, int *id) {
  return nc_def_dim(ncid, name, (size_t)len, id);
}
static int nc_var(int ncid, const char *name, int type, int nd, const int dimids[], int *id) {
  return nc_def_var(ncid, name, (nc_type)type, nd, dimids, id);
}
static int nc_att(int ncid, int varid, const char *name, int type, size_t n, const void *v) {
  return nc_put_att(ncid, varid, name, (nc_type)type, n, v);
}
static const plain_api netcdf_api = {"NetCDF", nc_dim, nc_var, nc_att, nc_strerror};

int plain_agree(bench_run *run) {
  /* The lowest failing rank's message goes to everyone: rank 0 prints it. */
  int mine = run->plain->failed ? run->grid.rank : run->grid.size, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, run->grid.comm);
  if (first == run->grid.size) return 0;
  MPI_Bcast(run->err, (int)sizeof run->err, MPI_CHAR, first, run->grid.comm);
  run->plain->failed = 1;
  return TSR_EIO;
}

/* gather: rank 0 learns every rank's tile of every shape, once per run
 * (after the allocations were agreed on: nothing collective can be skipped). */
static int gather_alloc(bench_run *run) {
  struct bench_plain *p = run->plain;
  size_t size = (size_t)run->grid.size;
  p->tiles = calloc((size_t)run->nshapes + 1, sizeof *p->tiles);
  p->counts = calloc(size, sizeof(int));
  p->displs = calloc(size, sizeof(int));
  int fail = !p->tiles || !p->counts || !p->displs;
  for (int i = 0; i < run->nshapes && !fail; i++)
    if (!(p->tiles[i] = malloc(sizeof(int64_t) * 2 * TSR_MAX_DIMS * size))) fail = 1;
  return fail ? -1 : 0;
}

static void gather_tiles(bench_run *run) {
  for (int i = 0; i < run->nshapes; i++) {
    const bench_shape *sh = &run->shapes[i];
    int64_t mine[2 * TSR_MAX_DIMS];
    for (int d = 0; d < sh->ndims; d++) {
      mine[d] = sh->start[d];
      mine[sh->ndims + d] = sh->count[d];
    }
    MPI_Gather(mine, 2 * sh->ndims, MPI_INT64_T, run->plain->tiles[i], 2 * sh->ndims, MPI_INT64_T,
               0, run->grid.comm);
  }
}

/* The buffers every put needs, sized once for the largest field, so that
 * no put can fail half-way through a collective. 0 or -1. */
static int buffers_fit(bench_run *run) {
  struct bench_plain *p = run->plain;
  size_t tile = 1, whole = 1;
  for (int v = 0; v < run->nfields; v++) {
    const bench_field *f = &run->fields[v];
    if (f->shape < 0) continue;
    size_t t = (size_t)run->shapes[f->shape].tile_elems * f->esize;
    size_t w = (size_t)run->shapes[f->shape].global_elems * f->esize;
    if (t > tile) tile = t;
    if (w > whole) whole = w;
  }
  if (plain_fit(&p->pack, &p->pack_cap, tile)) return -1;
  if (p->method != PLAIN_GATHER || run->grid.rank != 0) return 0;
  return plain_fit(&p->gathered, &p->gathered_cap, whole) ||
         plain_fit(&p->whole, &p->whole_cap, whole) ? -1 : 0;
}

int bench_plain_create(bench_run *run, const char *path) {
  int method = bench_plain_method(run->cfg.plain);
  if (!run->plain) {
    run->plain = calloc(1, sizeof *run->plain);
    int fail = !run->plain, any;
    if (!fail) {
      run->plain->method = method;
      run->plain->varid = calloc((size_t)run->schema.nvars + 1, sizeof(int));
      fail = !run->plain->varid;
    }
    if (!fail && method == PLAIN_GATHER) fail = gather_alloc(run) != 0;
    if (!fail && !pnc_method(method)) fail = buffers_fit(run) != 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, run->grid.comm);
    if (any) {
      snprintf(run->err, sizeof run->err, "plain: out of memory");
      return TSR_ENOMEM;
    }
    if (method == PLAIN_GATHER) gather_tiles(run);
  }
  struct bench_plain *p = run->plain;
  if (pnc_method(method)) return plain_pnc_create(run, path);
  char piece[BENCH_PATH + 16];
  const char *where = path;
  if (method == PLAIN_SPLIT) {
    snprintf(piece, sizeof piece, "%s.%04d", path, run->grid.rank);
    where = piece;
  }
  if (method == PLAIN_SPLIT || run->grid.rank == 0) {
    int st = nc_create(where, NC_CLOBBER | NC_64BIT_OFFSET, &p->ncid), old;
    /* NOFILL, as WRF's io_form 2 and every careful writer: each byte is
     * written once, with data (the files are the same bytes either way). */
    if (!st && (st = nc_set_fill(p->ncid, NC_NOFILL, &old)) != 0) nc_close(p->ncid);
    if (st) {
      plain_fail(run, "NetCDF", "nc_create", where, nc_strerror(st));
    } else {
      p->open = 1;
      if (plain_define(run, &netcdf_api, p->ncid, method == PLAIN_SPLIT) == 0 &&
          (st = nc_enddef(p->ncid)) != 0)
        plain_fail(run, "NetCDF", "nc_enddef", where, nc_strerror(st));
    }
  }
  return plain_agree(run);
}

/* One variable at one frame from this rank's file of a split run, or the
 * whole variable on rank 0 of a gather. */
static void nc_write(bench_run *run, int v, int frame, const int64_t count[], const void *buf) {
  struct bench_plain *p = run->plain;
  const bench_field *f = &run->fields[v];
  size_t st[TSR_MAX_DIMS + 1] = {0}, ct[TSR_MAX_DIMS + 1];
  int nd = run->schema.vars[v].ndims, rec = f->record;
  if (rec) {
    st[0] = (size_t)frame;
    ct[0] = 1;
  }
  for (int i = rec; i < nd; i++) ct[i] = (size_t)count[i - rec];
  int s = nc_put_vara(p->ncid, p->varid[v], st, ct, buf);
  if (s) plain_fail(run, "NetCDF", "nc_put_vara", run->schema.vars[v].name, nc_strerror(s));
}

static void gather_put(bench_run *run, int v, int frame) {
  struct bench_plain *p = run->plain;
  const bench_field *f = &run->fields[v];
  const bench_shape *sh = &run->shapes[f->shape];
  int size = run->grid.size, root = run->grid.rank == 0, nd = sh->ndims;
  size_t es = f->esize;
  int64_t zero[TSR_MAX_DIMS] = {0}, soff[TSR_MAX_DIMS];
  for (int d = 0; d < nd; d++) soff[d] = sh->start[d] - sh->mstart[d];
  /* Pack the tile out of the halo'd array, as WRF's collect_on_comm does
   * (a contiguous tile, --halo 0, is sent as it is). */
  const void *tile = f->buf;
  if (!plain_tile_contiguous(sh)) {
    plain_copy_box(p->pack, sh->count, zero, f->buf, sh->mcount, soff, sh->count, nd, es);
    tile = p->pack;
  }
  size_t total = 0; /* at most the whole field: the buffers have room (buffers_fit) */
  if (root) {
    for (int r = 0; r < size; r++) {
      const int64_t *t = p->tiles[f->shape] + (size_t)r * 2 * nd;
      int64_t n = 1;
      for (int d = 0; d < nd; d++) n *= t[nd + d];
      p->counts[r] = (int)(n * (int64_t)es);
      p->displs[r] = (int)total;
      total += (size_t)n * es;
    }
  }
  MPI_Gatherv(tile, (int)(sh->tile_elems * (int64_t)es), MPI_BYTE, p->gathered, p->counts,
              p->displs, MPI_BYTE, 0, run->grid.comm);
  if (!root || p->failed) return;
  for (int r = 0; r < size; r++) {
    const int64_t *t = p->tiles[f->shape] + (size_t)r * 2 * nd;
    plain_copy_box(p->whole, sh->gsize, t, (char *)p->gathered + p->displs[r], t + nd, zero,
                   t + nd, nd, es);
  }
  nc_write(run, v, frame, sh->gsize, p->whole);
}

static void split_put(bench_run *run, int v, int frame) {
  struct bench_plain *p = run->plain;
  const bench_field *f = &run->fields[v];
  const bench_shape *sh = &run->shapes[f->shape];
  if (p->varid[v] < 0) return;
  if (plain_tile_contiguous(sh)) { /* --halo 0: the array is the tile */
    nc_write(run, v, frame, sh->count, f->buf);
    return;
  }
  int64_t zero[TSR_MAX_DIMS] = {0}, soff[TSR_MAX_DIMS];
  for (int d = 0; d < sh->ndims; d++) soff[d] = sh->start[d] - sh->mstart[d];
  plain_copy_box(p->pack, sh->count, zero, f->buf, sh->mcount, soff, sh->count, sh->ndims,
                 f->esize);
  nc_write(run, v, frame, sh->count, p->pack);
}

int bench_plain_put(bench_run *run, int v, int frame) {
  struct bench_plain *p = run->plain;
  const bench_field *f = &run->fields[v];
  if (pnc_method(p->method)) return plain_pnc_put(run, v, frame);
  if (f->shape >= 0) {
    if (p->method == PLAIN_GATHER) gather_put(run, v, frame);
    else if (!p->failed) split_put(run, v, frame);
    return 0;
  }
  /* Replicated variables: every piece has them whole; a gather's rank 0 writes them. */
  if (p->open && !p->failed) {
    int64_t count[TSR_MAX_DIMS];
    const bench_var *var = &run->schema.vars[v];
    for (int i = f->record; i < var->ndims; i++)
      count[i - f->record] = run->schema.dims[var->dimids[i]].len;
    nc_write(run, v, frame, count, f->buf);
  }
  return 0;
}

int bench_plain_frame_done(bench_run *run) {
  if (pnc_method(run->plain->method)) return plain_pnc_frame_done(run);
  return plain_agree(run);
}

int bench_plain_close(bench_run *run) {
  struct bench_plain *p = run->plain;
  if (!p) return 0;
  if (pnc_method(p->method)) return plain_pnc_close(run);
  if (p->open) {
    int st = nc_close(p->ncid);
    if (st) plain_fail(run, "NetCDF", "nc_close", "file", nc_strerror(st));
    p->open = 0;
  }
  return plain_agree(run);
}

void bench_plain_free(bench_run *run) {
  struct bench_plain *p = run->plain;
  if (!p) return;
  if (p->tiles)
    for (int i = 0; i < run->nshapes; i++) free(p->tiles[i]);
  if (p->mtype)
    for (int v = 0; v < run->schema.nvars; v++)
      if (p->mtype[v] != MPI_DATATYPE_NULL) MPI_Type_free(&p->mtype[v]);
  free(p->tiles);
  free(p->counts);
  free(p->displs);
  free(p->pack);
  free(p->gathered);
  free(p->whole);
  free(p->mtype);
  free(p->reqs);
  free(p->varid);
  free(p);
  run->plain = NULL;
}
