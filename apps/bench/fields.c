/* Process grid, tiles, one Tessera decomposition per distinct variable
 * shape, and the model's halo'd arrays (WRF's ims..ime around its..ite). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Non-record dimensions of a variable. */
static int var_dims(const bench_schema *s, const bench_var *v, int dimids[]) {
  int first = bench_var_is_record(s, v) ? 1 : 0, n = 0;
  for (int i = first; i < v->ndims; i++) dimids[n++] = v->dimids[i];
  return n;
}

static void build_shape(const bench_run *run, bench_shape *sh, int ndims, const int dimids[]) {
  const bench_schema *s = &run->schema;
  const bench_grid *g = &run->grid;
  memset(sh, 0, sizeof *sh);
  sh->ndims = ndims;
  sh->xdim = sh->ydim = -1;
  int64_t mem = 1, tile = 1, glob = 1;
  for (int d = 0; d < ndims; d++) {
    const bench_dim *dim = &s->dims[dimids[d]];
    sh->dimids[d] = dimids[d];
    sh->gsize[d] = dim->len;
    int horiz = 0;
    if (dim->kind == BD_X || dim->kind == BD_X_STAG) {
      bench_tile(g->nx, g->px, g->cx, dim->kind == BD_X_STAG, &sh->start[d], &sh->count[d]);
      sh->xdim = d;
      horiz = 1;
    } else if (dim->kind == BD_Y || dim->kind == BD_Y_STAG) {
      bench_tile(g->ny, g->py, g->cy, dim->kind == BD_Y_STAG, &sh->start[d], &sh->count[d]);
      sh->ydim = d;
      horiz = 1;
    } else {
      sh->start[d] = 0;
      sh->count[d] = dim->len;
    }
    sh->mstart[d] = sh->start[d] - (horiz ? run->cfg.halo : 0);
    sh->mcount[d] = sh->count[d] + (horiz ? 2 * run->cfg.halo : 0);
  }
  /* A variable along one horizontal axis only is owned by the first row
   * (or column) of the process grid, so that tiles never overlap. */
  if ((sh->ydim < 0 && g->cy != 0) || (sh->xdim < 0 && g->cx != 0))
    for (int d = 0; d < ndims; d++) sh->count[d] = 0;
  for (int d = 0; d < ndims; d++) {
    mem *= sh->mcount[d];
    tile *= sh->count[d];
    glob *= sh->gsize[d];
  }
  sh->mem_elems = mem;
  sh->tile_elems = tile;
  sh->global_elems = glob;
  sh->ncells = -1;
  sh->std = ndims >= 2 && sh->ydim == ndims - 2 && sh->xdim == ndims - 1;
  /* WRF's XZY applies to its 3-D (bottom_top, south_north, west_east)
   * arrays; 2-D fields and other shapes are the same in either order. */
  sh->xzy = run->cfg.xzy && sh->std && ndims == 3;
  int order[TSR_MAX_DIMS];
  for (int d = 0; d < ndims; d++) order[d] = d;
  if (sh->xzy) order[0] = 1, order[1] = 0;
  int64_t stride = 1;
  for (int m = ndims - 1; m >= 0; m--) {
    sh->mstride[order[m]] = stride;
    stride *= sh->mcount[order[m]];
  }
  if (run->cfg.cells) bench_cells_shape(run, sh);
  for (int e = 0; e < 2; e++)
    for (int t = 0; t < 8; t++) sh->halo[e][t] = MPI_DATATYPE_NULL;
}

static int find_shape(const bench_run *run, int ndims, const int dimids[]) {
  for (int i = 0; i < run->nshapes; i++) {
    const bench_shape *sh = &run->shapes[i];
    if (sh->ndims == ndims && memcmp(sh->dimids, dimids, sizeof(int) * (size_t)ndims) == 0)
      return i;
  }
  return -1;
}

/* Bytes of memory the check assumes a node has: TESSERA_BENCH_MEMORY when
 * set (a batch job's share of a node, or a test), else the physical memory. */
static double node_memory(void) {
  const char *env = getenv("TESSERA_BENCH_MEMORY");
  if (env && *env) {
    char *end = NULL;
    double v = strtod(env, &end);
    if (end != env && *end == '\0' && v > 0) return v;
  }
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  return pages > 0 && psize > 0 ? (double)pages * (double)psize : 0.0;
}

/* Every array the model will allocate, checked before any is: element
 * counts must fit the 32-bit counts of MPI datatypes and NetCDF reads, and
 * the arrays of all ranks on a node must fit its memory. A CDL dimension of
 * 2,000,000,000 or an --nx of a million then stops the run with a message
 * instead of the kernel killing a rank. Collective over the model. */
static int check_sizes(bench_run *run, size_t scratch) {
  const bench_schema *s = &run->schema;
  double mine = (double)scratch, biggest = 0.0;
  int big = -1, over = -1;
  for (int v = 0; v < run->nfields; v++) {
    const bench_field *f = &run->fields[v];
    double bytes = (double)f->nelems * (double)f->esize;
    mine += bytes;
    if (bytes > biggest) biggest = bytes, big = v;
    int64_t row = f->shape >= 0 ? run->shapes[f->shape].mcount[run->shapes[f->shape].ndims - 1] : 0;
    if (over < 0 && (f->nelems > INT_MAX || row * (int64_t)f->esize > INT_MAX)) over = v;
  }
  int local = over >= 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, run->grid.comm);
  if (any) {
    int me = over >= 0 ? run->grid.rank : INT_MAX, who;
    MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, run->grid.comm);
    if (run->grid.rank == who)
      snprintf(run->err, sizeof run->err,
               "variable %s holds %lld elements on rank %d, more than %d (MPI and NetCDF counts "
               "are 32-bit): reduce --nx/--ny/--nz or the schema's dimensions, or use more "
               "processes",
               s->vars[over].name, (long long)run->fields[over].nelems, who, INT_MAX);
    MPI_Bcast(run->err, sizeof run->err, MPI_CHAR, who, run->grid.comm);
    return -1;
  }
  MPI_Comm node;
  MPI_Comm_split_type(run->grid.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  double need = 0.0;
  int nranks = 1;
  MPI_Allreduce(&mine, &need, 1, MPI_DOUBLE, MPI_SUM, node);
  MPI_Comm_size(node, &nranks);
  MPI_Comm_free(&node);
  double have = node_memory();
  int fail = have > 0.0 && need > have ? 1 : 0, anyfail = 0;
  MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, run->grid.comm);
  if (!anyfail) return 0;
  int me = fail ? run->grid.rank : INT_MAX, who;
  MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, run->grid.comm);
  if (run->grid.rank == who)
    snprintf(run->err, sizeof run->err,
             "the model's arrays need %.0f bytes on a node of %d ranks, more than its memory "
             "(%.0f bytes); the largest, variable %s, needs %.0f bytes on every rank: reduce "
             "--nx/--ny/--nz or the schema's dimensions, or use more nodes",
             need, nranks, have, big >= 0 ? s->vars[big].name : "?", biggest);
  MPI_Bcast(run->err, sizeof run->err, MPI_CHAR, who, run->grid.comm);
  return -1;
}

int bench_fields_plan(bench_run *run) {
  const bench_schema *s = &run->schema;
  run->nfields = s->nvars;
  run->fields = calloc((size_t)s->nvars + 1, sizeof *run->fields);
  run->shapes = calloc((size_t)s->nvars + 1, sizeof *run->shapes);
  int local_fail = !run->fields || !run->shapes, any_fail = 0;
  MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, run->grid.comm);
  if (any_fail) {
    snprintf(run->err, sizeof run->err, "out of memory for the field table");
    return -1;
  }
  size_t scratch = 0;
  for (int v = 0; v < s->nvars; v++) {
    const bench_var *var = &s->vars[v];
    bench_field *f = &run->fields[v];
    int dimids[TSR_MAX_DIMS];
    int nd = var_dims(s, var, dimids);
    f->var = v;
    f->record = bench_var_is_record(s, var);
    f->esize = tsr_type_size(var->type);
    f->shape = -1;
    f->check_id = -1;
    if (bench_var_is_decomposed(s, var)) {
      int sh = find_shape(run, nd, dimids);
      if (sh < 0) {
        sh = run->nshapes++;
        build_shape(run, &run->shapes[sh], nd, dimids);
      }
      f->shape = sh;
      f->check_id = run->ndecomposed++;
      f->nelems = run->shapes[sh].mem_elems;
      f->stepped = run->shapes[sh].std && (var->type == TSR_FLOAT || var->type == TSR_DOUBLE);
      if (f->stepped && (size_t)f->nelems * f->esize > scratch) scratch = (size_t)f->nelems * f->esize;
    } else {
      int64_t n = 1;
      for (int d = 0; d < nd; d++) n *= s->dims[dimids[d]].len;
      f->nelems = n;
    }
  }
  run->scratch_bytes = scratch;
  return check_sizes(run, scratch);
}

int bench_fields_setup(bench_run *run) {
  int local_fail = 0;
  for (int v = 0; v < run->nfields; v++) {
    bench_field *f = &run->fields[v];
    /* Zeroed up to a multiple of 8 bytes: NetCDF classic pads a record of a
     * 19-character Times to 20 bytes, and the PnetCDF path writes that pad
     * from the byte after the buffer; it must be the same in every run. */
    size_t bytes = (size_t)(f->nelems > 0 ? f->nelems : 1) * f->esize;
    f->buf = calloc(1, (bytes + 7) / 8 * 8);
    if (!f->buf) local_fail = 1;
  }
  run->scratch = malloc(run->scratch_bytes ? run->scratch_bytes : 1);
  if (!run->scratch) local_fail = 1;
  int any_fail = 0;
  MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, run->grid.comm);
  if (any_fail) return TSR_ENOMEM;
  /* Decompositions: one per distinct shape, created in the same order on every rank. */
  for (int i = 0; i < run->nshapes; i++) {
    bench_shape *sh = &run->shapes[i];
    const char *call = "tsr_decomp_box";
    int rc;
    if (sh->ncells >= 0) {
      call = "tsr_decomp_map";
      rc = bench_cells_decomp(run, sh); /* timed inside: the map's construction is not */
    } else {
      static const int xzy[3] = {1, 0, 2}; /* [y][z][x] */
      double t0 = MPI_Wtime();
      if (sh->xzy) {
        call = "tsr_decomp_box_ordered";
        rc = tsr_decomp_box_ordered(run->ctx, sh->ndims, sh->gsize, sh->start, sh->count,
                                    sh->mstart, sh->mcount, xzy, &sh->d);
      } else {
        rc = tsr_decomp_box(run->ctx, sh->ndims, sh->gsize, sh->start, sh->count, sh->mstart,
                            sh->mcount, &sh->d);
      }
      run->tm.blocked_s += MPI_Wtime() - t0;
    }
    if (rc != 0) {
      if (!run->err[0])
        snprintf(run->err, sizeof run->err, "%s (shape %d of %d, %d dims): %s", call, i + 1,
                 run->nshapes, sh->ndims, tsr_strerror(rc));
      return rc;
    }
  }
  return 0;
}

void bench_fields_free(bench_run *run) {
  for (int i = 0; i < run->nshapes; i++) {
    bench_shape *sh = &run->shapes[i];
    tsr_decomp_free(&sh->d);
    free(sh->cells);
    for (int e = 0; e < 2; e++)
      for (int t = 0; t < 8; t++)
        if (sh->halo[e][t] != MPI_DATATYPE_NULL) MPI_Type_free(&sh->halo[e][t]);
  }
  for (int v = 0; v < run->nfields; v++) free(run->fields[v].buf);
  free(run->fields);
  free(run->shapes);
  free(run->scratch);
  run->fields = NULL;
  run->shapes = NULL;
  run->scratch = NULL;
  run->nfields = run->nshapes = 0;
}

void bench_fields_init(bench_run *run) {
  /* The physical state in both modes: --check overwrites the tiles at every
   * output, but the halos at the domain edges keep these values. */
  bench_atmos_fill_fields(run);
  bench_globals_fill(run, 0);
}
