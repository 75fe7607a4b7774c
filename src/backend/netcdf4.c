/* NetCDF-4 backend: netCDF-4 (HDF5) files through Debian's parallel NetCDF-C
 * over parallel HDF5, with chunking and compression from the hints (deflate,
 * shuffle, quantize, zstd, chunks; docs/hints.md "Compression").
 *
 * One backend serves both roles. With one rank in the communicator (serial,
 * split, a servers group of one) the file is opened with nc_create and every
 * block goes to nc_put_vara at once. With more ranks (direct, aggregate's
 * writers, a servers group) the file is opened with nc_create_par and every
 * variable but a scalar is accessed collectively (define_var says why not a
 * scalar, reproducible_info which MPI-IO hints every file gets): HDF5 can
 * compress in parallel only in collective writes (each rank compresses the
 * chunks it ends up owning), and a collective write needs every rank in every
 * call. Ranks write different numbers of blocks, so write_block keeps a copy
 * of each block and flush replays them: the ranks agree on the list of
 * (variable, frame) keys and the most blocks any rank holds for each, then
 * call nc_put_vara that many times per key, with an empty block where a rank
 * has no more. The sink's drain rule (buffer_bytes) bounds the copies, as it
 * bounds PnetCDF's bput buffer.
 *
 * Reading: nc_open_par and one collective nc_get_vara per call (ranks with
 * nothing to read take part with an empty request), or nc_open on every rank
 * when the communicator has one rank. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netcdf.h>
#include <netcdf_filter.h>
#include <netcdf_meta.h>
#include <netcdf_par.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/backend_fresh.h"
#include "backend/netcdf_common.h"

#define LIB "NetCDF" /* as netcdf_common.c says it: one prefix for both NetCDF backends */
/* HDF5's registered id of the Zstandard filter (HDF5 filter plugin 32015). */
#define ZSTD_FILTER_ID 32015u

typedef struct {
  int varid, seq;
  int64_t frame; /* 0 for fixed variables, so they form one key */
  int64_t start[TSR_MAX_DIMS], count[TSR_MAX_DIMS];
  void *data; /* contiguous copy of the block */
  size_t bytes;
} held_block;

struct tsr__bfile {
  int ncid;
  MPI_Comm comm; /* our duplicate when parallel; MPI_COMM_NULL when serial */
  char *path;
  int nvars;
  tsr__bvar *vars;
  void *scratch; /* serial: packs blocks that sit inside a larger memory array */
  size_t scratch_cap;
  int64_t nrecs; /* records when opened for reading */
  held_block *held; /* parallel: blocks waiting for the collective flush */
  int nheld, heldcap;
  int64_t pending; /* bytes held */
  int writing;     /* created (not opened for reading) */
};

static int parallel(const tsr__bfile *bf) { return bf->comm != MPI_COMM_NULL; }

static int fail(tsr__berr *err, int status, int sys_errno, const char *call, const char *path,
                const char *var) {
  return tsr__nc_fail(err, status, sys_errno, call, path, var);
}

static void drop_held(tsr__bfile *bf) {
  for (int i = 0; i < bf->nheld; i++) free(bf->held[i].data);
  bf->nheld = 0;
  bf->pending = 0;
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  drop_held(bf);
  free(bf->held);
  free(bf->path);
  free(bf->vars);
  free(bf->scratch);
  if (bf->comm != MPI_COMM_NULL) MPI_Comm_free(&bf->comm);
  free(bf);
}

/* Every rank must take the same branch after a step that may fail locally. */
static int agree(const tsr__bfile *bf, int rc) {
  if (!parallel(bf)) return rc;
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, bf->comm);
  return all;
}

static int make_info(const tsr__hints *h, MPI_Info *info) {
  *info = MPI_INFO_NULL;
  if (!h || h->npass <= 0) return 0;
  if (MPI_Info_create(info) != MPI_SUCCESS) return TSR_EMPI;
  for (int i = 0; i < h->npass && i < TSR__MAX_PASSTHROUGH; i++) {
    if (MPI_Info_set(*info, h->pass[i].key, h->pass[i].value) != MPI_SUCCESS) {
      MPI_Info_free(info);
      return TSR_EMPI;
    }
  }
  return 0;
}

/* MPI-IO hints that keep the bytes HDF5 never writes zero, so that identical
 * runs give identical files (docs/architecture.md, "Identical runs, identical
 * bytes"). HDF5 leaves small gaps between the objects it writes (metadata
 * entries, chunks), often beyond the current end of the file. An MPI-IO layer
 * that writes pieces with small gaps as one range reads the range first,
 * copies the pieces in and writes it all back; the read stops at the end of
 * the file, and the gaps get whatever its buffer held: heap memory, different
 * every run. OMPIO does so in collective writes (fbtl posix "data sieving",
 * Open MPI 4.1 and later), ROMIO in two-phase collective writes with holes and
 * in data-sieved independent writes. These keys turn that off; a key the
 * hints give keeps the hints' value. */
static int reproducible_info(const tsr__hints *h, MPI_Info *info) {
  static const char *const keys[][2] = {
      /* OMPIO's one switch in MPI_Info: collective buffering off selects its
       * "individual" component, where each rank writes its own pieces. Open
       * MPI 4.1 and 5.0 take any value but exactly "false" as "off" (an
       * inverted strncmp), later releases "false" in any case: "FALSE" means
       * off to both. ROMIO ignores the key. */
      {"collective_buffering", "FALSE"},
      {"romio_cb_write", "disable"},
      {"romio_ds_write", "disable"},
  };
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    int given = 0;
    for (int i = 0; h && i < h->npass && i < TSR__MAX_PASSTHROUGH; i++)
      if (strcmp(h->pass[i].key, keys[k][0]) == 0) given = 1;
    if (given) continue;
    if (*info == MPI_INFO_NULL && MPI_Info_create(info) != MPI_SUCCESS) {
      *info = MPI_INFO_NULL;
      return TSR_EMPI;
    }
    if (MPI_Info_set(*info, keys[k][0], keys[k][1]) != MPI_SUCCESS) {
      MPI_Info_free(info);
      return TSR_EMPI;
    }
  }
  return 0;
}

/* The handle, a private communicator when more than one rank takes part,
 * and (writing, @p s non-NULL) the per-variable tables; agreed. */
static int prepare(MPI_Comm comm, const char *path, const tsr__schema *s, tsr__bfile **out,
                   tsr__berr *err) {
  *out = NULL;
  int size = 1, rc = 0;
  MPI_Comm_size(comm, &size);
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf) rc = TSR_ENOMEM;
  if (bf) {
    bf->comm = MPI_COMM_NULL;
    if (size > 1 && MPI_Comm_dup(comm, &bf->comm) != MPI_SUCCESS) {
      bf->comm = MPI_COMM_NULL;
      rc = TSR_EMPI;
    }
    if (!rc && !(bf->path = strdup(path))) rc = TSR_ENOMEM;
    if (!rc && s) {
      bf->nvars = s->nvars;
      if (tsr__bvars_from_schema(s, &bf->vars)) rc = TSR_ENOMEM;
    }
  }
  int all = rc;
  if (size > 1) MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all) {
    free_file(bf);
    return tsr__berr_plain(err, all, LIB, "%s preparing %s",
                           rc ? tsr_strerror(rc) : "failure on another rank", path);
  }
  *out = bf;
  return 0;
}

/* ---- define: chunks and filters per variable ---- */

typedef struct {
  const tsr__hints *h;
  int par;
  const char *path;
} define_arg;

/* The byte shuffle: as asked, or, when shuffle= is not given, on whenever a
 * compressor is: WRF's NetCDF-4 history (nf_def_var_deflate(..., 1, 1, 2))
 * and netCDF4-python do so, and on model fields it makes deflate both
 * faster and smaller (apps/bench/README.md, "Formats"). */
static int shuffle_of(const tsr__hints *h) {
  return (h->set & TSR__H_SHUFFLE) ? h->shuffle : (h->deflate > 0 || h->zstd > 0);
}

static int filtered(const tsr__hints *h) { return h->deflate > 0 || shuffle_of(h) || h->zstd > 0; }

/* Chunk lengths of variable @p v (all its dimensions, record first): the
 * record dimension 1; `auto` one horizontal level (the last two dimensions
 * whole, the others 1, as WRF's io_form 13), an explicit list for the last
 * dimensions, clipped to their lengths. */
static int chunk_shape(const tsr__schema *s, int v, const tsr__chunks *c, size_t chunk[],
                       tsr__berr *err) {
  const tsr__var *var = &s->vars[v];
  int first = var->is_record ? 1 : 0, nd = var->ndims - first;
  if (var->is_record) chunk[0] = 1;
  double bytes = (double)tsr__type_size(var->type);
  for (int i = 0; i < nd; i++) {
    int64_t len = s->dims[var->dimids[first + i]].len, want;
    int from_end = nd - 1 - i;
    if (c->n > 0)
      want = from_end < c->n ? c->len[c->n - 1 - from_end] : 1;
    else
      want = from_end < 2 ? len : 1;
    if (want > len) want = len;
    if (want < 1) want = 1; /* a dimension of length 0 still needs a chunk of 1 */
    chunk[first + i] = (size_t)want;
    bytes *= (double)want;
  }
  if (bytes >= 4294967296.0) /* HDF5 keeps chunk sizes in 32 bits */
    return tsr__berr_plain(err, TSR_EHINT, LIB,
                           "a chunk of %s would hold %.0f bytes, more than HDF5's 4 GiB limit; "
                           "give smaller chunks=",
                           var->name, bytes);
  return 0;
}

static int quantize_mode(int m) {
  switch (m) {
  case TSR__QUANTIZE_BITGROOM: return NC_QUANTIZE_BITGROOM;
  case TSR__QUANTIZE_GRANULARBR: return NC_QUANTIZE_GRANULARBR;
  case TSR__QUANTIZE_BITROUND: return NC_QUANTIZE_BITROUND;
  }
  return NC_NOQUANTIZE;
}

/* Quantization applies to floating-point variables only; NetCDF bounds the
 * precision by the type (float: 7 digits or 23 bits). */
static int define_quantize(int ncid, int id, const tsr__var *var, const tsr__quantize *q,
                           const char *path, tsr__berr *err) {
  if (q->mode == TSR__QUANTIZE_NONE || (var->type != TSR_FLOAT && var->type != TSR_DOUBLE))
    return 0;
  int max = var->type == TSR_FLOAT
                ? (q->mode == TSR__QUANTIZE_BITROUND ? NC_QUANTIZE_MAX_FLOAT_NSB
                                                     : NC_QUANTIZE_MAX_FLOAT_NSD)
                : (q->mode == TSR__QUANTIZE_BITROUND ? NC_QUANTIZE_MAX_DOUBLE_NSB
                                                     : NC_QUANTIZE_MAX_DOUBLE_NSD);
  if (q->nsd > max)
    return tsr__berr_plain(err, TSR_EHINT, LIB,
                           "quantize keeps %d significant %s, but float variable %s has at "
                           "most %d",
                           q->nsd, q->mode == TSR__QUANTIZE_BITROUND ? "bits" : "digits",
                           var->name, max);
  int st = nc_def_var_quantize(ncid, id, quantize_mode(q->mode), q->nsd);
  return st ? fail(err, st, 0, "nc_def_var_quantize", path, var->name) : 0;
}

static int define_var(int ncid, int id, const tsr__schema *s, int v, void *argp, tsr__berr *err) {
  const define_arg *arg = argp;
  const tsr__hints *h = arg->h;
  const tsr__var *var = &s->vars[v];
  const char *path = arg->path;
  int st, rc;
  /* A scalar is written independently, by the ranks that hold it: NetCDF
   * cannot select nothing of a scalar, so in a collective write every rank
   * would write its element, the others a zero (flush_held). */
  if (arg->par &&
      (st = nc_var_par_access(ncid, id, var->ndims == 0 ? NC_INDEPENDENT : NC_COLLECTIVE)))
    return fail(err, st, 0, "nc_var_par_access", path, var->name);
  if (var->ndims == 0) return 0; /* a scalar is one value: no chunks, nothing to compress */
  if (h->chunks.n == TSR__CHUNKS_CONTIGUOUS && !var->is_record) {
    if (filtered(h))
      return tsr__berr_plain(err, TSR_EHINT, LIB,
                             "chunks=contiguous cannot be compressed: HDF5 filters work on "
                             "chunks (drop deflate/shuffle/zstd or give chunk lengths)");
    st = nc_def_var_chunking(ncid, id, NC_CONTIGUOUS, NULL);
    return st ? fail(err, st, 0, "nc_def_var_chunking", path, var->name) : 0;
  }
  size_t chunk[TSR_MAX_DIMS];
  if ((rc = chunk_shape(s, v, &h->chunks, chunk, err))) return rc;
  if ((st = nc_def_var_chunking(ncid, id, NC_CHUNKED, chunk)))
    return fail(err, st, 0, "nc_def_var_chunking", path, var->name);
  /* tsr_def_var_quantize wins over the file-wide hint (checked there). */
  tsr__quantize own = {var->quantize_mode, var->quantize_nsd};
  if ((rc = define_quantize(ncid, id, var, var->quantize_set ? &own : &h->quantize, path, err)))
    return rc;
  /* Shuffle first, then the compressor: HDF5 runs filters in the order they
   * were defined, and shuffled bytes compress better. */
  int shuffle = shuffle_of(h);
  if ((h->deflate > 0 || shuffle) &&
      (st = nc_def_var_deflate(ncid, id, shuffle, h->deflate > 0, h->deflate)))
    return fail(err, st, 0, "nc_def_var_deflate", path, var->name);
  if (h->zstd > 0) {
    unsigned level = (unsigned)h->zstd;
    if ((st = nc_def_var_filter(ncid, id, ZSTD_FILTER_ID, 1, &level)))
      return fail(err, st, 0, "nc_def_var_filter (zstd)", path, var->name);
  }
  return 0;
}

/* What the hints ask for that this NetCDF build may lack, asked at run time. */
static int check_filters(const tsr__bfile *bf, const tsr__hints *h, tsr__berr *err) {
  if (h->zstd > 0 && nc_inq_filter_avail(bf->ncid, ZSTD_FILTER_ID) != NC_NOERR) {
    int rc = tsr__berr_plain(err, TSR_ENOTBUILT, LIB,
                             "zstd: the Zstandard HDF5 filter (id %u) is not available to this "
                             "NetCDF/HDF5 build (set HDF5_PLUGIN_PATH, or use deflate=)",
                             ZSTD_FILTER_ID);
    if (err) err->code = NC_ENOFILTER;
    return rc;
  }
#if !NC_HAS_PAR_FILTERS
  /* Parallel HDF5 before 1.10.2 cannot write filtered data at all. */
  if (parallel(bf) && filtered(h))
    return tsr__berr_plain(err, TSR_ENOTBUILT, LIB,
                           "compression with more than one writer needs HDF5 >= 1.10.2 "
                           "with parallel filters; this NetCDF build has none");
#endif
  return 0;
}

static void remove_file(tsr__bfile *bf, const char *path) {
  int rank = 0;
  if (parallel(bf)) {
    MPI_Barrier(bf->comm);
    MPI_Comm_rank(bf->comm, &rank);
  }
  if (rank == 0) unlink(path);
  if (parallel(bf)) MPI_Barrier(bf->comm);
}

static int tsr__nc4_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                           const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  if (s->format != 3)
    return tsr__berr_plain(err, TSR_EINVAL, LIB, "format %d is not netCDF-4 (path %s)", s->format,
                           path);
  tsr__hints defaults;
  if (!h) {
    tsr__hints_defaults(&defaults);
    h = &defaults;
  }
  tsr__bfile *bf;
  int rc = prepare(comm, path, s, &bf, err);
  if (rc) return rc;
  if ((rc = tsr__backend_fresh_name(parallel(bf) ? bf->comm : MPI_COMM_SELF, path, LIB, err))) {
    free_file(bf);
    return rc;
  }
  int st;
  errno = 0;
  if (parallel(bf)) {
    MPI_Info info;
    rc = make_info(h, &info);
    if (!rc) rc = reproducible_info(h, &info);
    rc = agree(bf, rc);
    if (rc) {
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      free_file(bf);
      return tsr__berr_plain(err, rc, LIB, "cannot pass MPI-IO hints (path %s)", path);
    }
    /* Collective: HDF5 opens the file with MPI-IO on every rank. */
    st = nc_create_par(path, NC_NOCLOBBER | NC_NETCDF4, bf->comm, info, &bf->ncid);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  } else {
    st = nc_create(path, NC_NOCLOBBER | NC_NETCDF4, &bf->ncid); /* fresh: backend_fresh.h */
  }
  if (st) {
    rc = fail(err, st, errno, parallel(bf) ? "nc_create_par" : "nc_create", path, NULL);
    free_file(bf);
    return rc;
  }
  bf->writing = 1;
  define_arg arg = {h, parallel(bf), path};
  rc = check_filters(bf, h, err);
  if (!rc) rc = tsr__nc_define(bf->ncid, path, s, define_var, &arg, err);
  /* Define mode is collective in parallel netCDF-4: every rank defined the
   * same schema, and a failure on one must stop all before nc_enddef. */
  int all = agree(bf, rc);
  if (!all) {
    errno = 0;
    if ((st = nc_enddef(bf->ncid))) rc = fail(err, st, errno, "nc_enddef", path, NULL);
    all = agree(bf, rc);
  }
  if (all) {
    if (!rc) tsr__berr_plain(err, all, LIB, "creating %s failed on another rank", path);
    nc_abort(bf->ncid); /* collective in parallel, like the create */
    remove_file(bf, path);
    free_file(bf);
    return all;
  }
  *out = bf;
  return 0;
}

/* ---- writing ---- */

static int scratch_fit(tsr__bfile *bf, size_t bytes, const tsr__bvar *v, tsr__berr *err) {
  return tsr__nc_scratch_fit(&bf->scratch, &bf->scratch_cap, bytes, v->name, err);
}

/* Parallel: keep a contiguous copy until the collective flush. */
static int hold(tsr__bfile *bf, const tsr__bvar *v, int varid, int64_t frame,
                const int64_t start[], const int64_t count[], const void *buf, tsr__memview mem,
                int64_t n, tsr__berr *err) {
  if (bf->nheld == bf->heldcap) {
    int cap = bf->heldcap ? 2 * bf->heldcap : 64;
    held_block *p = realloc(bf->held, (size_t)cap * sizeof *p);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to hold a block of %s", v->name);
    bf->held = p;
    bf->heldcap = cap;
  }
  held_block *b = &bf->held[bf->nheld];
  memset(b, 0, sizeof *b);
  b->bytes = (size_t)n * v->esize;
  if (!(b->data = malloc(b->bytes)))
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to hold %zu bytes of %s", b->bytes,
                           v->name);
  if (mem.mshape)
    tsr__block_pack(b->data, buf, v->esize, v->nd, count, mem);
  else
    memcpy(b->data, buf, b->bytes);
  b->varid = varid;
  b->frame = v->is_record ? frame : 0;
  b->seq = bf->nheld;
  for (int i = 0; i < v->nd; i++) {
    b->start[i] = start[i];
    b->count[i] = count[i];
  }
  bf->nheld++;
  bf->pending += (int64_t)b->bytes;
  return 0;
}

static int tsr__nc4_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                                const int64_t count[], const void *buf, tsr__memview mem,
                                tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0;
  if (parallel(bf)) return hold(bf, v, varid, frame, start, count, buf, mem, n, err);
  size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  tsr__nc_corners(v, frame, start, count, st, ct);
  const void *src = buf;
  if (mem.mshape) {
    if ((rc = scratch_fit(bf, (size_t)n * v->esize, v, err))) return rc;
    tsr__block_pack(bf->scratch, buf, v->esize, v->nd, count, mem);
    src = bf->scratch;
  }
  errno = 0;
  int status = nc_put_vara(bf->ncid, v->fid, st, ct, src);
  return status ? fail(err, status, errno, "nc_put_vara", bf->path, v->name) : 0;
}

static int64_t tsr__nc4_pending_bytes(const tsr__bfile *bf) { return bf->pending; }

static int by_key(const void *a, const void *b) {
  const held_block *x = a, *y = b;
  if (x->varid != y->varid) return x->varid < y->varid ? -1 : 1;
  if (x->frame != y->frame) return x->frame < y->frame ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Keys are (varid, frame, blocks) triples. */
static int by_triple(const void *a, const void *b) {
  const long long *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Every rank's keys, merged into one list (the same on every rank): for each
 * (varid, frame) the most blocks any rank holds. *out is malloc'd. */
static int merged_keys(tsr__bfile *bf, long long **out, int *nout) {
  *out = NULL;
  *nout = 0;
  int nk = 0, size, rc = 0;
  MPI_Comm_size(bf->comm, &size);
  long long *mine = malloc((size_t)(bf->nheld + 1) * 3 * sizeof *mine);
  int *counts = malloc((size_t)size * 2 * sizeof *counts);
  if (!mine || !counts) rc = TSR_ENOMEM;
  for (int i = 0; !rc && i < bf->nheld; i++) {
    const held_block *b = &bf->held[i];
    if (nk > 0 && mine[3 * (nk - 1)] == b->varid && mine[3 * (nk - 1) + 1] == b->frame) {
      mine[3 * (nk - 1) + 2]++;
      continue;
    }
    mine[3 * nk] = b->varid;
    mine[3 * nk + 1] = b->frame;
    mine[3 * nk + 2] = 1;
    nk++;
  }
  /* A rank that cannot take part says so with -1 keys; all give up. */
  int mylen = rc ? -1 : 3 * nk;
  int bad = 0;
  MPI_Allreduce(&mylen, &bad, 1, MPI_INT, MPI_MIN, bf->comm);
  if (bad < 0) {
    free(mine);
    free(counts);
    return TSR_ENOMEM;
  }
  MPI_Allgather(&mylen, 1, MPI_INT, counts, 1, MPI_INT, bf->comm);
  int *displs = counts + size, total = 0;
  for (int r = 0; r < size; r++) displs[r] = total, total += counts[r];
  long long *all = malloc((size_t)(total + 3) * sizeof *all);
  int ok = all != NULL, allok = 0;
  MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, bf->comm);
  if (!allok) {
    free(all);
    free(mine);
    free(counts);
    return TSR_ENOMEM;
  }
  MPI_Allgatherv(mine, mylen, MPI_LONG_LONG, all, counts, displs, MPI_LONG_LONG, bf->comm);
  free(mine);
  free(counts);
  int n = total / 3, m = 0;
  qsort(all, (size_t)n, 3 * sizeof *all, by_triple);
  for (int i = 0; i < n; i++) {
    if (m > 0 && all[3 * (m - 1)] == all[3 * i] && all[3 * (m - 1) + 1] == all[3 * i + 1]) {
      if (all[3 * i + 2] > all[3 * (m - 1) + 2]) all[3 * (m - 1) + 2] = all[3 * i + 2];
      continue;
    }
    memmove(&all[3 * m], &all[3 * i], 3 * sizeof *all);
    m++;
  }
  *out = all;
  *nout = m;
  return 0;
}

/* One collective nc_put_vara: this rank's block @p b, or an empty one. */
static int put_collective(tsr__bfile *bf, int varid, int64_t frame, const held_block *b,
                          tsr__berr *err) {
  static const char nothing[8];
  const tsr__bvar *v = &bf->vars[varid];
  size_t st[TSR_MAX_DIMS] = {0}, ct[TSR_MAX_DIMS] = {0};
  if (b) {
    tsr__nc_corners(v, frame, b->start, b->count, st, ct);
  } else if (v->is_record) {
    st[0] = (size_t)frame; /* an empty request at the frame the others extend to */
  }
  errno = 0;
  int status = nc_put_vara(bf->ncid, v->fid, st, ct, b ? b->data : (const void *)nothing);
  return status ? fail(err, status, errno, "nc_put_vara", bf->path, v->name) : 0;
}

/* Collective: write every held block (see the comment at the top). A rank
 * whose write failed goes on taking part, so no rank waits in vain. */
static int flush_held(tsr__bfile *bf, tsr__berr *err) {
  if (bf->nheld > 1) qsort(bf->held, (size_t)bf->nheld, sizeof *bf->held, by_key);
  long long *keys;
  int nkeys, rc = merged_keys(bf, &keys, &nkeys);
  if (rc) {
    drop_held(bf);
    return tsr__berr_plain(err, rc, LIB, "no memory to agree on the blocks to write (path %s)",
                           bf->path);
  }
  int next = 0; /* this rank's first held block not yet written */
  for (int k = 0; k < nkeys; k++) {
    int varid = (int)keys[3 * k];
    int64_t frame = keys[3 * k + 1], most = keys[3 * k + 2];
    for (int64_t i = 0; i < most; i++) {
      const held_block *b = NULL;
      if (next < bf->nheld && bf->held[next].varid == varid && bf->held[next].frame == frame)
        b = &bf->held[next++];
      if (!b && !bf->vars[varid].is_record && bf->vars[varid].nd == 0)
        continue; /* a scalar: written independently by its holders (define_var) */
      int wrc = put_collective(bf, varid, frame, b, rc ? NULL : err);
      if (!rc) rc = wrc;
    }
  }
  free(keys);
  drop_held(bf);
  return rc;
}

static int tsr__nc4_flush(tsr__bfile *bf, tsr__berr *err) {
  int rc = parallel(bf) ? flush_held(bf, err) : 0;
  errno = 0;
  /* Collective in parallel (H5Fflush): every rank reaches it. */
  int st = nc_sync(bf->ncid);
  if (st && !rc) rc = fail(err, st, errno, "nc_sync", bf->path, NULL);
  return agree(bf, rc);
}

/* In parallel the held blocks go first (collectively), as close does; then
 * the attributes, which parallel netCDF-4 defines collectively. */
static int tsr__nc4_annotate(tsr__bfile *bf, const char *name, char *const texts[],
                             tsr__berr *err) {
  int rc = parallel(bf) ? flush_held(bf, err) : 0, st;
  errno = 0;
  if ((st = nc_redef(bf->ncid))) return rc ? rc : fail(err, st, errno, "nc_redef", bf->path, NULL);
  for (int v = 0; v < bf->nvars && !rc; v++)
    if (texts[v] && (st = nc_put_att_text(bf->ncid, bf->vars[v].fid, name, strlen(texts[v]), texts[v])))
      rc = fail(err, st, errno, "nc_put_att_text", bf->path, bf->vars[v].name);
  if ((st = nc_enddef(bf->ncid)) && !rc) rc = fail(err, st, errno, "nc_enddef", bf->path, NULL);
  return rc;
}

static int tsr__nc4_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  int rc = 0, st;
  if (bf->writing && parallel(bf)) rc = flush_held(bf, err);
  errno = 0;
  /* Closed even after an error: in parallel nc_close is collective. It
   * writes HDF5's metadata, so a full disk can show up here. */
  if ((st = nc_close(bf->ncid)) && !rc) rc = fail(err, st, errno, "nc_close", bf->path, NULL);
  rc = agree(bf, rc);
  free_file(bf);
  return rc;
}

static void tsr__nc4_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  drop_held(bf); /* nothing is worth writing now */
  nc_abort(bf->ncid); /* collective in parallel: HDF5 closes the MPI file */
  remove_file(bf, path ? path : bf->path);
  free_file(bf);
}

/* ---- reading ---- */

static int tsr__nc4_open(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *s,
                         tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  tsr__schema_init(s);
  tsr__bfile *bf;
  int rc = prepare(comm, path, NULL, &bf, err);
  if (rc) return rc;
  int st;
  errno = 0;
  if (parallel(bf)) {
    MPI_Info info;
    rc = agree(bf, make_info(h, &info));
    if (rc) {
      free_file(bf);
      return tsr__berr_plain(err, rc, LIB, "cannot pass MPI-IO hints (path %s)", path);
    }
    st = nc_open_par(path, NC_NOWRITE, bf->comm, info, &bf->ncid);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  } else {
    st = nc_open(path, NC_NOWRITE, &bf->ncid);
  }
  /* HDF5 opens collectively and every rank sees the same file; agree anyway
   * so that no rank goes on alone. */
  rc = st ? fail(err, st, errno, parallel(bf) ? "nc_open_par" : "nc_open", path, NULL) : 0;
  int all = agree(bf, rc);
  if (all) {
    if (!rc) {
      tsr__berr_plain(err, all, LIB, "opening %s failed on another rank", path);
      nc_close(bf->ncid);
    }
    free_file(bf);
    return all;
  }
  int *fid = NULL;
  rc = tsr__nc_describe(bf->ncid, path, s, &fid, &bf->nrecs, err);
  if (!rc && tsr__bvars_from_file(s, fid, &bf->vars))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  for (int v = 0; !rc && parallel(bf) && v < s->nvars; v++)
    if ((st = nc_var_par_access(bf->ncid, fid[v], NC_COLLECTIVE)))
      rc = fail(err, st, 0, "nc_var_par_access", path, s->vars[v].name);
  free(fid);
  all = agree(bf, rc);
  if (all) {
    if (!rc) tsr__berr_plain(err, all, LIB, "opening %s failed on another rank", path);
    nc_close(bf->ncid); /* collective: every rank opened */
    free_file(bf);
    tsr__schema_free(s);
    return all;
  }
  bf->nvars = s->nvars;
  *out = bf;
  return 0;
}

static int tsr__nc4_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                               const int64_t count[], void *buf, tsr__memview mem,
                               tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (!rc && v->is_record && frame >= bf->nrecs)
    rc = tsr__berr_plain(err, TSR_ERANGE, LIB, "frame %lld of %s: the file has %lld records",
                         (long long)frame, v->name, (long long)bf->nrecs);
  int64_t n = rc ? 0 : tsr__block_elems(v->nd, count);
  if (!parallel(bf) && (rc || n == 0)) return rc; /* serial: nobody waits */
  if (!v) v = bf->nvars > 0 ? &bf->vars[0] : NULL;
  if (!v) return rc; /* a file without variables: no rank has anything to read */
  size_t st[TSR_MAX_DIMS] = {0}, ct[TSR_MAX_DIMS] = {0};
  void *dst = buf;
  static char nothing[8];
  if (n > 0) {
    tsr__nc_corners(v, frame, start, count, st, ct);
    /* NetCDF reads contiguous blocks only: one inside a larger array lands
     * in the scratch buffer and is spread from there (halos untouched). */
    if (mem.mshape) {
      int frc = scratch_fit(bf, (size_t)n * v->esize, v, err);
      if (frc) { /* still take part (parallel), with nothing */
        rc = frc;
        n = 0;
        memset(ct, 0, sizeof ct);
        memset(st, 0, sizeof st);
      }
      dst = bf->scratch;
    }
  }
  if (n == 0) dst = nothing;
  errno = 0;
  int status = nc_get_vara(bf->ncid, v->fid, st, ct, dst);
  if (!rc && status) rc = fail(err, status, errno, "nc_get_vara", bf->path, v->name);
  if (!rc && n > 0 && mem.mshape) tsr__block_unpack(buf, bf->scratch, v->esize, v->nd, count, mem);
  return rc;
}

static int64_t tsr__nc4_num_records(const tsr__bfile *bf) { return bf->nrecs; }

const tsr__backend_ops tsr__backend_netcdf4 = {
    .version = TSR__BACKEND_VERSION,
    .name = "netcdf4",
    /* Every rank of the communicator it gets calls every operation; with one
     * rank (serial, split) that is plain serial NetCDF-4. */
    .parallel = 1,
    .create = tsr__nc4_create,
    .write_block = tsr__nc4_write_block,
    .pending_bytes = tsr__nc4_pending_bytes,
    .flush = tsr__nc4_flush,
    .close = tsr__nc4_close,
    .abort = tsr__nc4_abort,
    .file_info = NULL,
    .block_offset = NULL,
    .open = tsr__nc4_open,
    .read_block = tsr__nc4_read_block,
    .num_records = tsr__nc4_num_records,
    .annotate = tsr__nc4_annotate,
};
