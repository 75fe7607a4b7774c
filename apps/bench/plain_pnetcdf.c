/* tessera-bench --plain pnetcdf, pnetcdf-bput, pnetcdf-vara: the PnetCDF
 * counterparts of strategy=direct (and aggregate), written as a PnetCDF user
 * writes them: every rank its own tile straight from the model's halo'd
 * array, described by a subarray datatype (PnetCDF's flexible API), so the
 * program itself copies nothing. Replicated variables come from rank 0. */
#include "plain.h"

#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pnc_dim(int ncid, const char *name, int64_t len, int *id) {
  return ncmpi_def_dim(ncid, name, (MPI_Offset)len, id);
}
static int pnc_var(int ncid, const char *name, int type, int nd, const int dimids[], int *id) {
  return ncmpi_def_var(ncid, name, (nc_type)type, nd, dimids, id);
}
static int pnc_att(int ncid, int varid, const char *name, int type, size_t n, const void *v) {
  /* PnetCDF wants text through its text call (the type checks differ). */
  if (type == NC_CHAR) return ncmpi_put_att_text(ncid, varid, name, (MPI_Offset)n, v);
  return ncmpi_put_att(ncid, varid, name, (nc_type)type, (MPI_Offset)n, v);
}
static const plain_api pnetcdf_api = {"PnetCDF", pnc_dim, pnc_var, pnc_att, ncmpi_strerror};

/* This rank's tile inside variable v's halo'd array, made once per run. */
static int make_types(bench_run *run) {
  struct bench_plain *p = run->plain;
  if (!(p->mtype = malloc(sizeof(MPI_Datatype) * ((size_t)run->nfields + 1)))) return -1;
  for (int v = 0; v < run->nfields; v++) {
    const bench_field *f = &run->fields[v];
    p->mtype[v] = MPI_DATATYPE_NULL;
    if (f->shape < 0 || run->shapes[f->shape].tile_elems == 0) continue;
    if (plain_tile_contiguous(&run->shapes[f->shape])) continue; /* the element type will do */
    const bench_shape *sh = &run->shapes[f->shape];
    int sizes[TSR_MAX_DIMS], sub[TSR_MAX_DIMS], starts[TSR_MAX_DIMS];
    for (int d = 0; d < sh->ndims; d++) {
      sizes[d] = (int)sh->mcount[d];
      sub[d] = (int)sh->count[d];
      starts[d] = (int)(sh->start[d] - sh->mstart[d]);
    }
    if (MPI_Type_create_subarray(sh->ndims, sizes, sub, starts, MPI_ORDER_C,
                                 plain_mpi_type(run->schema.vars[v].type), &p->mtype[v]) ||
        MPI_Type_commit(&p->mtype[v]))
      return -1;
  }
  return 0;
}

/* Bytes this rank posts per frame: the attached buffer bput needs. */
static MPI_Offset frame_bytes(const bench_run *run) {
  MPI_Offset n = 0;
  for (int v = 0; v < run->nfields; v++) {
    const bench_field *f = &run->fields[v];
    if (f->shape >= 0) n += (MPI_Offset)(run->shapes[f->shape].tile_elems * (int64_t)f->esize);
    else if (run->grid.rank == 0) n += (MPI_Offset)(f->nelems * (int64_t)f->esize);
  }
  return n + 64;
}

int plain_pnc_create(bench_run *run, const char *path) {
  struct bench_plain *p = run->plain;
  if (!p->mtype && make_types(run) != 0)
    plain_fail(run, "PnetCDF", "MPI_Type_create_subarray", "tile", "failed");
  if (!p->reqs && !(p->reqs = malloc(sizeof(int) * ((size_t)run->nfields + 1))))
    plain_fail(run, "PnetCDF", "malloc", "requests", "out of memory");
  p->reqcap = run->nfields + 1;
  int rc = plain_agree(run);
  if (rc) return rc;
  int st = ncmpi_create(run->grid.comm, path, NC_CLOBBER | NC_64BIT_OFFSET, MPI_INFO_NULL, &p->ncid);
  if (st) {
    plain_fail(run, "PnetCDF", "ncmpi_create", path, ncmpi_strerror(st));
    return plain_agree(run);
  }
  p->open = 1;
  if (plain_define(run, &pnetcdf_api, p->ncid, 0) == 0) {
    if ((st = ncmpi_enddef(p->ncid)))
      plain_fail(run, "PnetCDF", "ncmpi_enddef", path, ncmpi_strerror(st));
    else if (p->method == PLAIN_PNC_BPUT && (st = ncmpi_buffer_attach(p->ncid, frame_bytes(run))))
      plain_fail(run, "PnetCDF", "ncmpi_buffer_attach", path, ncmpi_strerror(st));
  }
  return plain_agree(run);
}

int plain_pnc_put(bench_run *run, int v, int frame) {
  struct bench_plain *p = run->plain;
  const bench_field *f = &run->fields[v];
  const bench_var *var = &run->schema.vars[v];
  /* After a failure the rest of the frame is skipped, but put_vara_all is
   * collective: every rank still makes it. */
  if (p->failed && p->method != PLAIN_PNC_VARA) return 0;
  MPI_Offset st[TSR_MAX_DIMS + 1] = {0}, ct[TSR_MAX_DIMS + 1];
  int rec = f->record, nd = var->ndims;
  if (rec) {
    st[0] = frame;
    ct[0] = 1;
  }
  const void *buf = f->buf;
  MPI_Offset bufcount = 1;
  MPI_Datatype type = p->mtype[v];
  if (f->shape >= 0) {
    const bench_shape *sh = &run->shapes[f->shape];
    for (int i = rec; i < nd; i++) {
      st[i] = (MPI_Offset)sh->start[i - rec];
      ct[i] = (MPI_Offset)sh->count[i - rec];
    }
    if (sh->tile_elems == 0) bufcount = 0, type = plain_mpi_type(var->type);
    /* --halo 0: a contiguous tile needs no datatype, and PnetCDF no packing. */
    else if (plain_tile_contiguous(sh)) bufcount = sh->tile_elems, type = plain_mpi_type(var->type);
  } else {
    /* A fixed scalar has no count to make empty: every rank writes the value. */
    int root = run->grid.rank == 0 || nd == 0;
    for (int i = rec; i < nd; i++) ct[i] = run->schema.dims[var->dimids[i]].len;
    if (!root) memset(ct, 0, sizeof ct); /* the record index too: nothing at all */
    bufcount = root ? (MPI_Offset)f->nelems : 0;
    type = plain_mpi_type(var->type);
  }
  int s = 0, req;
  const char *call = "ncmpi_put_vara_all";
  if (p->method == PLAIN_PNC_VARA) {
    s = ncmpi_put_vara_all(p->ncid, p->varid[v], st, ct, buf, bufcount, type);
  } else if (bufcount > 0) { /* nothing to post for an empty tile */
    call = p->method == PLAIN_PNC_BPUT ? "ncmpi_bput_vara" : "ncmpi_iput_vara";
    s = p->method == PLAIN_PNC_BPUT
            ? ncmpi_bput_vara(p->ncid, p->varid[v], st, ct, buf, bufcount, type, &req)
            : ncmpi_iput_vara(p->ncid, p->varid[v], st, ct, buf, bufcount, type, &req);
    if (!s) p->reqs[p->nreq++] = req; /* at most one request per variable and frame */
  }
  if (s) plain_fail(run, "PnetCDF", call, var->name, ncmpi_strerror(s));
  return 0;
}

/* The frame's requests leave together: the model may change its arrays
 * after this (iput) or the attached buffer is free again (bput). */
int plain_pnc_frame_done(bench_run *run) {
  struct bench_plain *p = run->plain;
  if (p->method != PLAIN_PNC_VARA) {
    int s = ncmpi_wait_all(p->ncid, p->nreq, p->nreq ? p->reqs : NULL, NULL);
    if (s) plain_fail(run, "PnetCDF", "ncmpi_wait_all", "frame", ncmpi_strerror(s));
    p->nreq = 0;
  }
  return plain_agree(run);
}

int plain_pnc_close(bench_run *run) {
  struct bench_plain *p = run->plain;
  if (p->open) {
    int s;
    if (p->method == PLAIN_PNC_BPUT) ncmpi_buffer_detach(p->ncid);
    if ((s = ncmpi_close(p->ncid))) plain_fail(run, "PnetCDF", "ncmpi_close", "file", ncmpi_strerror(s));
    p->open = 0;
  }
  return plain_agree(run);
}
