/* PnetCDF backend: every rank of the writer communicator opens the file;
 * write_block posts an independent nonblocking request and flush completes
 * them all collectively with ncmpi_wait_all, so ranks write what they hold
 * without synchronising per block.
 *
 * A block that fits into the remaining attached buffer goes through
 * ncmpi_bput_vara, which copies it there at once (the caller may reuse its
 * buffer). A block that does not fit is copied into a private contiguous
 * buffer and posted with ncmpi_iput_vara; the copy is freed after the next
 * wait. With put_mode=deferred a block is posted with ncmpi_iput_vara from
 * the caller's memory. All count as pending bytes until flush.
 *
 * Reading (tsr_open / tsr_get): the file is opened collectively read-only
 * and every block is read with one collective ncmpi_get_vara_all, straight
 * into the caller's memory array through the same subarray types; ranks
 * with nothing to read take part with an empty request. */
/* Compiled only when PnetCDF was found (src/CMakeLists.txt). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pnetcdf.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/backend_fresh.h"
#include "backend/classic_gaps.h"
#include "backend/sink_checksum.h"
#include "core/memory_room.h"

#define LIB "PnetCDF"

/* Subarray datatypes for blocks inside larger memory arrays. A model writes
 * the same few tile shapes every frame, so a handful of slots hit almost
 * always; the least recently used one is evicted. */
#define TYPE_SLOTS 8

typedef struct {
  MPI_Datatype dt; /* MPI_DATATYPE_NULL: empty */
  MPI_Datatype etype;
  int nd;
  int sizes[TSR_MAX_DIMS], subsizes[TSR_MAX_DIMS], starts[TSR_MAX_DIMS];
  unsigned long used; /* tick of the last use */
} type_slot;

struct tsr__bfile {
  int ncid;
  MPI_Comm comm; /* our duplicate: abort needs it after the caller's may be gone */
  char *path;
  int nvars;
  tsr__bvar *vars;
  int64_t *begin;   /* file offset of each variable (of its record 0), fixed at enddef */
  size_t *sumlen;   /* checksum=: each variable's placeholder length (define_sums) */
  int64_t recsize;  /* bytes between records */
  int64_t max_end;  /* end of the highest byte this rank has posted */
  int64_t nrecs_put; /* highest record this rank has posted + 1 */
  int64_t verified_end; /* the file was seen to reach this byte (every rank: agreed) */
  int created;          /* 1: created here (written), 0: opened for reading */
  MPI_Offset buffer_bytes; /* attached buffer size; 0: none attached */
  int64_t pending;         /* bytes posted (bput + iput) since the last wait */
  int nreq, reqcap;
  int *reqs, *statuses, *reqvar; /* request ids, their statuses, their varids */
  int ncopies, copycap;
  void **copies; /* private copies of blocks posted with iput */
  type_slot types[TYPE_SLOTS];
  unsigned long tick;
  int64_t nrecs; /* records when opened for reading */
};

/* PnetCDF codes that mean more than "I/O error". The generic ones carry
 * use_errno: behind NC_EFILE/NC_EWRITE there may be EFBIG or ENOSPC from the
 * MPI-IO layer, which PnetCDF does not translate. */
static const tsr__berr_class pnc_classes[] = {
    {NC_ENOMEM, TSR_ENOMEM, 0},    {NC_ENOENT, TSR_EACCES, 0},  {NC_EACCESS, TSR_EACCES, 0},
    {NC_EPERM, TSR_EACCES, 0},     {NC_EBAD_FILE, TSR_EACCES, 0}, {NC_EOFILE, TSR_EACCES, 1},
    {NC_ENO_SPACE, TSR_ENOSPC, 0}, {NC_EQUOTA, TSR_ENOSPC, 0},  {NC_EFILE, TSR_EIO, 1},
    {NC_EWRITE, TSR_EIO, 1},       {NC_EIO, TSR_EIO, 1},        {NC_ENOTNC, TSR_EFORMAT, 0},
};

static int pnc_fail(tsr__berr *err, int status, int sys_errno, const char *call, const char *path,
                    const char *var) {
  return tsr__berr_native(err, LIB, status, sys_errno, ncmpi_strerror(status), pnc_classes,
                          sizeof pnc_classes / sizeof pnc_classes[0], "%s%s%s, path %s", call,
                          var ? " " : "", var ? var : "", path);
}

static MPI_Datatype mpi_type(tsr_type t) {
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
  case TSR_INT64: return MPI_LONG_LONG;
  case TSR_UINT64: return MPI_UNSIGNED_LONG_LONG;
  }
  return MPI_DATATYPE_NULL;
}

static void free_copies(tsr__bfile *bf) {
  for (int i = 0; i < bf->ncopies; i++) free(bf->copies[i]);
  bf->ncopies = 0;
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  for (int i = 0; i < TYPE_SLOTS; i++)
    if (bf->types[i].dt != MPI_DATATYPE_NULL) MPI_Type_free(&bf->types[i].dt);
  free_copies(bf);
  free(bf->copies);
  free(bf->reqs);
  free(bf->statuses);
  free(bf->reqvar);
  free(bf->vars);
  free(bf->sumlen);
  free(bf->begin);
  free(bf->path);
  if (bf->comm != MPI_COMM_NULL) MPI_Comm_free(&bf->comm);
  free(bf);
}

/* Every rank must take the same branch after a step that may fail locally,
 * or the next collective call hangs; MPI_MIN picks any rank's error. */
static int agree(MPI_Comm comm, int rc) {
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

static int put_att(int ncid, int varid, const tsr__att *a) {
  if (a->type == TSR_CHAR)
    return ncmpi_put_att_text(ncid, varid, a->name, (MPI_Offset)a->n, a->values);
  return ncmpi_put_att(ncid, varid, a->name, (nc_type)a->type, (MPI_Offset)a->n, a->values);
}

/* Define mode is local to each rank until enddef, which checks that all
 * ranks defined the same header. */
/* checksum=: each variable's sums attribute as a placeholder, which close
 * overwrites in data mode (backend/sink_checksum.h: a classic header that
 * grew would move the data). */
static int define_sums(tsr__bfile *bf, const tsr__schema *s, int frames, tsr__berr *err) {
  if (!(bf->sumlen = calloc((size_t)s->nvars + 1, sizeof *bf->sumlen)))
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
  for (int v = 0; v < s->nvars; v++) {
    char *p = tsr__sums_placeholder(s, v, frames);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
    bf->sumlen[v] = strlen(p);
    int st = ncmpi_put_att_text(bf->ncid, v, TSR__CHECKSUM_ATT, (MPI_Offset)bf->sumlen[v], p);
    free(p);
    if (st) return pnc_fail(err, st, 0, "ncmpi_put_att_text", bf->path, s->vars[v].name);
  }
  return 0;
}

static int define(tsr__bfile *bf, const tsr__schema *s, tsr__berr *err) {
  int st, id;
  char what[TSR_MAX_NAME * 2 + 2];
  /* Tessera writes fill values itself; pre-filling would write twice. */
  if ((st = ncmpi_set_fill(bf->ncid, NC_NOFILL, NULL)))
    return pnc_fail(err, st, 0, "ncmpi_set_fill", bf->path, NULL);
  for (int d = 0; d < s->ndims; d++) {
    if ((st = ncmpi_def_dim(bf->ncid, s->dims[d].name, (MPI_Offset)s->dims[d].len, &id)))
      return pnc_fail(err, st, 0, "ncmpi_def_dim", bf->path, s->dims[d].name);
  }
  for (int a = 0; a < s->ngatts; a++) {
    if ((st = put_att(bf->ncid, NC_GLOBAL, &s->gatts[a])))
      return pnc_fail(err, st, 0, "ncmpi_put_att", bf->path, s->gatts[a].name);
  }
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    if ((st = ncmpi_def_var(bf->ncid, var->name, (nc_type)var->type, var->ndims, var->dimids,
                            &id)))
      return pnc_fail(err, st, 0, "ncmpi_def_var", bf->path, var->name);
    for (int a = 0; a < var->natts; a++) {
      if ((st = put_att(bf->ncid, id, &var->atts[a]))) {
        snprintf(what, sizeof what, "%s:%s", var->name, var->atts[a].name);
        return pnc_fail(err, st, 0, "ncmpi_put_att", bf->path, what);
      }
    }
  }
  return 0;
}

static int make_info(const tsr__hints *h, MPI_Info *info) {
  *info = MPI_INFO_NULL;
  if (!h || (h->npass <= 0 && !h->put_mode_deferred)) return 0;
  if (MPI_Info_create(info) != MPI_SUCCESS) return TSR_EMPI;
  int rc = MPI_SUCCESS;
  /* Deferred puts post the caller's arrays: PnetCDF must not byte-swap them
   * in place, or the model would read swapped values until the wait. Given
   * first, so an explicit pass-through value still wins. */
  if (h->put_mode_deferred) rc = MPI_Info_set(*info, "nc_in_place_swap", "disable");
  for (int i = 0; i < h->npass && i < TSR__MAX_PASSTHROUGH && rc == MPI_SUCCESS; i++)
    rc = MPI_Info_set(*info, h->pass[i].key, h->pass[i].value);
  if (rc != MPI_SUCCESS) {
    MPI_Info_free(info);
    return TSR_EMPI;
  }
  return 0;
}

/* The layout is fixed once enddef has run: keep it, so that block offsets
 * cost no library call per block. */
static int read_layout(tsr__bfile *bf, tsr__berr *err) {
  MPI_Offset off, rs = 0;
  int st;
  for (int v = 0; v < bf->nvars; v++) {
    if ((st = ncmpi_inq_varoffset(bf->ncid, v, &off)))
      return pnc_fail(err, st, 0, "ncmpi_inq_varoffset", bf->path, bf->vars[v].name);
    bf->begin[v] = (int64_t)off;
  }
  if ((st = ncmpi_inq_recsize(bf->ncid, &rs)))
    return pnc_fail(err, st, 0, "ncmpi_inq_recsize", bf->path, NULL);
  bf->recsize = (int64_t)rs;
  return 0;
}

/* File offset of element idx (non-record indices) of a variable at a frame. */
static int64_t elem_offset(const tsr__bfile *bf, int varid, int64_t frame, const int64_t idx[]) {
  const tsr__bvar *v = &bf->vars[varid];
  int64_t off = bf->begin[varid] + (v->is_record ? frame * bf->recsize : 0);
  int64_t lin = 0; /* C-order element index within one frame */
  for (int i = 0; i < v->nd; i++) lin = lin * v->shape[i] + idx[i];
  return off + lin * (int64_t)v->esize;
}

/* What create and open share before the file is touched: a private
 * communicator, the handle, the MPI_Info of the pass-through hints and, when
 * writing (@p s non-NULL), the per-variable tables of the schema. Agreed on
 * every rank, so either all go on to the collective ncmpi_create/open or none
 * does. @p what names the step in the message ("create", "open"). */
static int prepare(MPI_Comm comm, const char *path, const tsr__hints *h, const tsr__schema *s,
                   const char *what, tsr__bfile **out, MPI_Info *info, tsr__berr *err) {
  *out = NULL;
  *info = MPI_INFO_NULL;
  MPI_Comm dup;
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
    return tsr__berr_plain(err, TSR_EMPI, LIB, "MPI_Comm_dup failed (path %s)", path);
  int rc = 0;
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (bf) {
    bf->comm = dup;
    for (int i = 0; i < TYPE_SLOTS; i++) bf->types[i].dt = MPI_DATATYPE_NULL;
    if (!(bf->path = strdup(path))) rc = TSR_ENOMEM;
    if (!rc && s) {
      bf->nvars = s->nvars;
      if (tsr__bvars_from_schema(s, &bf->vars) ||
          !(bf->begin = calloc((size_t)s->nvars + 1, sizeof *bf->begin)))
        rc = TSR_ENOMEM;
    }
  } else {
    rc = TSR_ENOMEM;
  }
  /* Pass-through hints matter for reads too (cb_buffer_size, romio_cb_read). */
  if (!rc) rc = make_info(h, info);
  int all = agree(dup, rc);
  if (all) {
    if (*info != MPI_INFO_NULL) MPI_Info_free(info);
    if (bf)
      free_file(bf);
    else
      MPI_Comm_free(&dup);
    return tsr__berr_plain(err, all, LIB, "%s preparing to %s %s",
                           rc ? tsr_strerror(rc) : "failure on another rank", what, path);
  }
  *out = bf;
  return 0;
}

static int tsr__pnc_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                           const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  int cmode;
  /* The schema is the same on every rank, so this return is too. */
  if (s->format == 2)
    cmode = NC_NOCLOBBER | NC_64BIT_OFFSET; /* a fresh name: backend_fresh.h */
  else if (s->format == 5)
    cmode = NC_NOCLOBBER | NC_64BIT_DATA;
  else
    return tsr__berr_plain(err, TSR_EINVAL, LIB, "unknown format %d (path %s)", s->format, path);

  MPI_Info info;
  tsr__bfile *bf;
  int rc = prepare(comm, path, h, s, "create", &bf, &info, err);
  if (rc) return rc;
  if ((rc = tsr__backend_fresh_name(bf->comm, path, LIB, err))) {
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    free_file(bf);
    return rc;
  }

  /* ncmpi_create agrees on its result across ranks (MPI_File_open does). */
  errno = 0;
  int st = ncmpi_create(bf->comm, path, cmode, info, &bf->ncid);
  int sys = errno;
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (st) {
    rc = pnc_fail(err, st, sys, "ncmpi_create", path, NULL);
    free_file(bf);
    return rc;
  }

  rc = define(bf, s, err);
  if (!rc && h && h->checksum) rc = define_sums(bf, s, h->frames_per_outfile, err);
  int all = agree(bf->comm, rc);
  if (!all) {
    errno = 0;
    if ((st = ncmpi_enddef(bf->ncid))) rc = pnc_fail(err, st, errno, "ncmpi_enddef", path, NULL);
    if (!rc) rc = read_layout(bf, err);
    /* Without a buffer every block takes the private-copy path. */
    if (!rc && h && h->buffer_bytes > 0) {
      /* PnetCDF 1.12 does not check the buffer's malloc: a failed one is a
       * SIGSEGV at the first bput (ncmpio_pack_xbuf), so try it first. */
      if (!tsr__memory_can_allocate(h->buffer_bytes))
        rc = tsr__berr_plain(err, TSR_ENOMEM, LIB,
                             "cannot allocate the %lld-byte bput buffer (hint buffer_bytes) for %s",
                             (long long)h->buffer_bytes, path);
      else if ((st = ncmpi_buffer_attach(bf->ncid, (MPI_Offset)h->buffer_bytes)))
        rc = pnc_fail(err, st, 0, "ncmpi_buffer_attach", path, NULL);
      else
        bf->buffer_bytes = (MPI_Offset)h->buffer_bytes;
    }
    all = agree(bf->comm, rc);
  }
  bf->created = 1;
  if (all) {
    if (!rc) tsr__berr_plain(err, all, LIB, "creating %s failed on another rank", path);
    /* ncmpi_abort deletes a file it created that never left define mode;
     * after enddef it only closes, so delete explicitly like abort does. */
    ncmpi_abort(bf->ncid);
    MPI_Barrier(bf->comm);
    int rank;
    MPI_Comm_rank(bf->comm, &rank);
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(bf->comm);
    free_file(bf);
    return all;
  }
  *out = bf;
  return 0;
}

/* Room for one more request, reserved before posting so that nothing can
 * fail after PnetCDF holds the request. */
static int reserve_request(tsr__bfile *bf) {
  if (bf->nreq == bf->reqcap) {
    size_t ncap = bf->reqcap ? 2 * (size_t)bf->reqcap : 16;
    int *p;
    if (!(p = realloc(bf->reqs, ncap * sizeof *p))) return TSR_ENOMEM;
    bf->reqs = p;
    if (!(p = realloc(bf->statuses, ncap * sizeof *p))) return TSR_ENOMEM;
    bf->statuses = p;
    if (!(p = realloc(bf->reqvar, ncap * sizeof *p))) return TSR_ENOMEM;
    bf->reqvar = p;
    bf->reqcap = (int)ncap;
  }
  if (bf->ncopies == bf->copycap) {
    size_t ncap = bf->copycap ? 2 * (size_t)bf->copycap : 16;
    void **p = realloc(bf->copies, ncap * sizeof *p);
    if (!p) return TSR_ENOMEM;
    bf->copies = p;
    bf->copycap = (int)ncap;
  }
  return 0;
}

/* A committed MPI_Type_create_subarray type selecting the block inside its
 * memory array (C order), from the cache or newly made. */
static int subarray_type(tsr__bfile *bf, const tsr__bvar *v, const int64_t count[],
                         tsr__memview mem, MPI_Datatype *dt, tsr__berr *err) {
  type_slot key = {.dt = MPI_DATATYPE_NULL, .etype = mpi_type(v->type), .nd = v->nd};
  for (int i = 0; i < v->nd; i++) {
    if (mem.mshape[i] > INT_MAX)
      return tsr__berr_plain(err, TSR_ETOOBIG, LIB,
                             "memory array of %s has a dimension over INT_MAX elements", v->name);
    key.sizes[i] = (int)mem.mshape[i];
    key.subsizes[i] = (int)count[i];
    key.starts[i] = (int)mem.moffset[i];
  }
  size_t nbytes = (size_t)v->nd * sizeof(int);
  int victim = 0;
  for (int s = 0; s < TYPE_SLOTS; s++) {
    type_slot *t = &bf->types[s];
    if (t->dt != MPI_DATATYPE_NULL && t->etype == key.etype && t->nd == key.nd &&
        !memcmp(t->sizes, key.sizes, nbytes) && !memcmp(t->subsizes, key.subsizes, nbytes) &&
        !memcmp(t->starts, key.starts, nbytes)) {
      t->used = ++bf->tick;
      *dt = t->dt;
      return 0;
    }
    if (t->dt == MPI_DATATYPE_NULL || (bf->types[victim].dt != MPI_DATATYPE_NULL &&
                                       t->used < bf->types[victim].used))
      victim = s;
  }
  if (MPI_Type_create_subarray(key.nd, key.sizes, key.subsizes, key.starts, MPI_ORDER_C,
                               key.etype, &key.dt) != MPI_SUCCESS ||
      MPI_Type_commit(&key.dt) != MPI_SUCCESS)
    return tsr__berr_plain(err, TSR_EMPI, LIB, "cannot build the memory datatype of %s",
                           v->name);
  /* Freeing the evicted type is safe: bput packed its data when posted. */
  if (bf->types[victim].dt != MPI_DATATYPE_NULL) MPI_Type_free(&bf->types[victim].dt);
  key.used = ++bf->tick;
  bf->types[victim] = key;
  *dt = key.dt;
  return 0;
}

/* ncmpi_bput_vara and ncmpi_iput_vara take the same arguments. */
typedef int (*post_fn)(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                       const void *buf, MPI_Offset bufcount, MPI_Datatype buftype, int *req);

static int tsr__pnc_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                                const int64_t count[], const void *buf, tsr__memview mem,
                                tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0;
  if (reserve_request(bf))
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for a request on %s", v->name);

  MPI_Offset st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  int k = 0;
  if (v->is_record) {
    st[k] = (MPI_Offset)frame;
    ct[k++] = 1;
  }
  for (int i = 0; i < v->nd; i++, k++) {
    st[k] = (MPI_Offset)start[i];
    ct[k] = (MPI_Offset)count[i];
  }
  int64_t bytes = n * (int64_t)v->esize;
  int inside = mem.mshape && v->nd > 0; /* the block is a piece of a larger array */
  MPI_Datatype etype = mpi_type(v->type);

  MPI_Offset room = 0;
  if (bf->buffer_bytes > 0) {
    MPI_Offset used = 0;
    if (ncmpi_inq_buffer_usage(bf->ncid, &used) == NC_NOERR) room = bf->buffer_bytes - used;
  }

  int req = NC_REQ_NULL, status;
  const char *call;
  errno = 0;
  if (mem.deferred || bytes <= room) {
    /* Deferred: the caller keeps buf until the next wait, so post it as it
     * is (iput, no copy). Else bput copies it into the attached buffer. */
    post_fn post = mem.deferred ? ncmpi_iput_vara : ncmpi_bput_vara;
    call = mem.deferred ? "ncmpi_iput_vara" : "ncmpi_bput_vara";
    MPI_Datatype dt = etype;
    MPI_Offset nbuf = (MPI_Offset)n;
    if (inside) {
      if ((rc = subarray_type(bf, v, count, mem, &dt, err))) return rc;
      nbuf = 1;
    }
    status = post(bf->ncid, v->fid, st, ct, buf, nbuf, dt, &req);
  } else {
    call = "ncmpi_iput_vara";
    void *copy = malloc((size_t)bytes);
    if (!copy)
      return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to copy %lld bytes of %s",
                             (long long)bytes, v->name);
    if (inside)
      tsr__block_pack(copy, buf, v->esize, v->nd, count, mem);
    else
      memcpy(copy, buf, (size_t)bytes);
    status = ncmpi_iput_vara(bf->ncid, v->fid, st, ct, copy, (MPI_Offset)n, etype, &req);
    if (status)
      free(copy);
    else
      bf->copies[bf->ncopies++] = copy;
  }
  if (status) return pnc_fail(err, status, errno, call, bf->path, v->name);
  bf->reqs[bf->nreq] = req;
  bf->reqvar[bf->nreq++] = varid;
  /* Deferred requests count too: PnetCDF swaps their bytes in a buffer of
   * its own (in-place swap is off), and a wait over more than 2 GiB per rank
   * fails ("Size of I/O request exceeds INT_MAX"), so the sink's drain rule
   * bounds them by buffer_bytes like the copies. */
  bf->pending += bytes;
  /* C order: the block's last element is its highest byte in the file. */
  int64_t last[TSR_MAX_DIMS];
  for (int i = 0; i < v->nd; i++) last[i] = start[i] + count[i] - 1;
  int64_t end = elem_offset(bf, varid, frame, last) + (int64_t)v->esize;
  if (end > bf->max_end) bf->max_end = end;
  if (v->is_record && frame + 1 > bf->nrecs_put) bf->nrecs_put = frame + 1;
  return 0;
}

static int64_t tsr__pnc_pending_bytes(const tsr__bfile *bf) { return bf->pending; }

/* Zeros over the padding and gaps of the file (classic_gaps.h), @p fd open
 * for writing, @p size bytes long, @p nrecs records. Returns 0 or errno. */
static int zero_padding(const tsr__bfile *bf, int fd, int64_t size, int64_t nrecs) {
  tsr__classic_var *cv = malloc((size_t)(bf->nvars > 0 ? bf->nvars : 1) * sizeof *cv);
  if (!cv) return ENOMEM;
  for (int v = 0; v < bf->nvars; v++) {
    cv[v].begin = bf->begin[v];
    cv[v].bytes = tsr__block_elems(bf->vars[v].nd, bf->vars[v].shape) * (int64_t)bf->vars[v].esize;
    cv[v].is_record = bf->vars[v].is_record;
  }
  int e = tsr__classic_zero_gaps(fd, size, cv, bf->nvars, bf->recsize, nrecs);
  free(cv);
  return e;
}

/* Open MPI's OMPIO returns MPI_SUCCESS from a write that stopped short
 * (file size limit, full disk: the status counts 0 bytes), and PnetCDF counts
 * requested rather than written bytes, so such a loss is silent. After every
 * wait and at close the file must reach the highest byte any rank posted;
 * rank 0 checks (open + fstat, which revalidates NFS attributes) and tells
 * the others, unless no rank posted past what was seen before. A path with
 * an MPI-IO prefix ("lustre:...") cannot be opened and is not checked. At
 * close (@p closing, every rank's writes done) rank 0 also writes zeros over
 * the bytes no variable owns (classic_gaps.h) of a good file. */
static int check_file_end(tsr__bfile *bf, int closing, tsr__berr *err) {
  long long mine[2] = {bf->max_end, bf->nrecs_put}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, bf->comm);
  long long need = all[0];
  if (!closing && need <= bf->verified_end) return 0;
  int rank;
  MPI_Comm_rank(bf->comm, &rank);
  long long seen[2] = {-1, 0}; /* the file's size; errno of the zeros */
  /* Never a file opened for reading; nor one that failed: not worth it. */
  int zero_gaps = closing && err && bf->created;
  if (rank == 0 && (need > 0 || zero_gaps)) {
    int fd = open(bf->path, zero_gaps ? O_RDWR : O_RDONLY);
    struct stat sb;
    if (fd >= 0) {
      if (fstat(fd, &sb) == 0) seen[0] = (long long)sb.st_size;
      if (zero_gaps && seen[0] >= need) seen[1] = zero_padding(bf, fd, seen[0], all[1]);
      close(fd);
    }
  }
  MPI_Bcast(seen, 2, MPI_LONG_LONG, 0, bf->comm);
  if (seen[1])
    return tsr__berr_plain(err, tsr__berr_from_errno((int)seen[1]), LIB,
                           "writing zeros over the padding of %s: %s", bf->path,
                           strerror((int)seen[1]));
  if (seen[0] < 0 || seen[0] >= need) {
    bf->verified_end = need;
    return 0;
  }
  int rc = tsr__berr_plain(err, TSR_ENOSPC, LIB,
                           "file is %lld bytes but blocks were written up to byte %lld: a write "
                           "stopped short without an error (no space or file size limit?) "
                           "(path %s)",
                           seen[0], need, bf->path);
  if (err) err->code = NC_EWRITE;
  return rc;
}

static int tsr__pnc_flush(tsr__bfile *bf, tsr__berr *err) {
  int n = bf->nreq, rc = 0;
  errno = 0;
  /* Collective: ranks with nothing posted still call, with n == 0. Passing
   * the arrays (not NC_REQ_ALL) gives each request's own status, so a
   * failed write is reported even when wait_all itself succeeds. */
  int st = ncmpi_wait_all(bf->ncid, n, n ? bf->reqs : NULL, n ? bf->statuses : NULL);
  int sys = errno;
  if (st) {
    rc = pnc_fail(err, st, sys, "ncmpi_wait_all", bf->path, NULL);
  } else {
    for (int i = 0; i < n; i++) {
      if (bf->statuses[i] != NC_NOERR) {
        rc = pnc_fail(err, bf->statuses[i], sys, "write", bf->path, bf->vars[bf->reqvar[i]].name);
        break;
      }
    }
  }
  /* Completed or failed, the requests are gone from PnetCDF either way. */
  free_copies(bf);
  bf->nreq = 0;
  bf->pending = 0;
  /* A write that stopped short is reported by nobody (below): look now,
   * while the loss is at the end of the file, before later writes cover it
   * and the close could not tell. Collective, whatever rc is. */
  int st2 = check_file_end(bf, 0, rc ? NULL : err);
  return rc ? rc : st2;
}

static int tsr__pnc_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  int rc = tsr__pnc_flush(bf, err), st;
  if (bf->buffer_bytes > 0 && (st = ncmpi_buffer_detach(bf->ncid)) && !rc)
    rc = pnc_fail(err, st, 0, "ncmpi_buffer_detach", bf->path, NULL);
  /* Closed even after an error: ncmpi_close is collective and every rank
   * must reach it; it agrees on its own status across ranks. */
  errno = 0;
  if ((st = ncmpi_close(bf->ncid)) && !rc)
    rc = pnc_fail(err, st, errno, "ncmpi_close", bf->path, NULL);
  st = check_file_end(bf, 1, rc ? NULL : err); /* collective: called whatever rc is */
  if (!rc) rc = st;
  free_file(bf);
  return rc;
}

static void tsr__pnc_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  /* ncmpi_abort drops pending requests without freeing them (ncmpi_close
   * cancels first); cancelling is local, and nothing is worth writing now. */
  if (bf->nreq > 0) ncmpi_cancel(bf->ncid, NC_REQ_ALL, NULL, NULL);
  /* Collective: it closes the MPI file. */
  ncmpi_abort(bf->ncid);
  /* Delete once, after every rank has closed, and return only when the file
   * is gone, so that a retry at the same path cannot race the delete. */
  MPI_Barrier(bf->comm);
  int rank;
  MPI_Comm_rank(bf->comm, &rank);
  if (rank == 0) MPI_File_delete(path ? path : bf->path, MPI_INFO_NULL);
  MPI_Barrier(bf->comm);
  free_file(bf);
}

/* ncmpi_open takes the text before a ':' for a file-system prefix (ROMIO's
 * "ufs:", "lustre:"), so WRF's time-stamped names cannot be opened (creating
 * them works). */
static int tsr__pnc_can_open(const char *path) { return strchr(path, ':') == NULL; }

static MPI_Info tsr__pnc_file_info(const tsr__bfile *bf) {
  MPI_Info info = MPI_INFO_NULL;
  if (ncmpi_inq_file_info(bf->ncid, &info) != NC_NOERR) return MPI_INFO_NULL;
  return info;
}

static int64_t tsr__pnc_block_offset(const tsr__bfile *bf, int varid, int64_t frame,
                                     const int64_t start[]) {
  if (varid < 0 || varid >= bf->nvars || (bf->vars[varid].is_record && frame < 0)) return -1;
  if (bf->vars[varid].nd > 0 && !start) return -1;
  return elem_offset(bf, varid, frame, start);
}

/* ---- reading ---- */

/* Copy one attribute of the open file into the schema, unless its type has
 * no tsr_type (then it is left out). */
static int read_att(tsr__bfile *bf, int fvar, int a, tsr__schema *s, int svar, tsr__berr *err) {
  char name[NC_MAX_NAME + 1];
  nc_type xtype;
  MPI_Offset n;
  int st;
  if ((st = ncmpi_inq_attname(bf->ncid, fvar, a, name)) ||
      (st = ncmpi_inq_att(bf->ncid, fvar, name, &xtype, &n)))
    return pnc_fail(err, st, 0, "ncmpi_inq_att", bf->path, NULL);
  if (!tsr__bschema_att_ok(name, xtype)) return 0;
  void *values = malloc((size_t)n * tsr__type_size((tsr_type)xtype) + 1);
  if (!values) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for attribute %s", name);
  int rc = 0;
  if ((st = ncmpi_get_att(bf->ncid, fvar, name, values)))
    rc = pnc_fail(err, st, 0, "ncmpi_get_att", bf->path, name);
  else if ((rc = tsr__bschema_put_att(s, svar, name, xtype, (size_t)n, values)))
    tsr__berr_plain(err, rc, LIB, "no memory for attribute %s", name);
  free(values);
  return rc;
}

/* The whole header as a schema (backend.h: open). PnetCDF reads the header
 * on one rank and broadcasts it, so every rank describes the same file; only
 * memory can fail differently, and the caller agrees on the result. */
static int describe(tsr__bfile *bf, tsr__schema *s, int **fid, tsr__berr *err) {
  int st, ndims, nvars, ngatts, unlim, fmt, rc = 0;
  char name[NC_MAX_NAME + 1];
  if ((st = ncmpi_inq(bf->ncid, &ndims, &nvars, &ngatts, &unlim)) ||
      (st = ncmpi_inq_format(bf->ncid, &fmt)))
    return pnc_fail(err, st, 0, "ncmpi_inq", bf->path, NULL);
  s->format = fmt;
  for (int d = 0; d < ndims; d++) {
    MPI_Offset len;
    if ((st = ncmpi_inq_dim(bf->ncid, d, name, &len)))
      return pnc_fail(err, st, 0, "ncmpi_inq_dim", bf->path, NULL);
    if ((rc = tsr__bschema_add_dim(s, name, d == unlim ? TSR_UNLIMITED : (int64_t)len)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe dimension %s (path %s)", name,
                             bf->path);
    if (d == unlim) bf->nrecs = (int64_t)len; /* PnetCDF reports the record count */
  }
  for (int a = 0; a < ngatts && !rc; a++) rc = read_att(bf, NC_GLOBAL, a, s, TSR_GLOBAL, err);
  *fid = malloc((size_t)(nvars > 0 ? nvars : 1) * sizeof **fid);
  if (!*fid) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
  for (int v = 0; v < nvars && !rc; v++) {
    int nd, natts, dimids[TSR_MAX_DIMS], sv = -1;
    nc_type xtype;
    if ((st = ncmpi_inq_varndims(bf->ncid, v, &nd)))
      return pnc_fail(err, st, 0, "ncmpi_inq_varndims", bf->path, NULL);
    if (nd > TSR_MAX_DIMS) continue; /* more dims than Tessera handles: left out */
    if ((st = ncmpi_inq_var(bf->ncid, v, name, &xtype, &nd, dimids, &natts)))
      return pnc_fail(err, st, 0, "ncmpi_inq_var", bf->path, NULL);
    if ((rc = tsr__bschema_add_var(s, name, xtype, nd, dimids, &sv)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe variable %s (path %s)", name,
                             bf->path);
    if (sv < 0) continue;
    (*fid)[sv] = v;
    for (int a = 0; a < natts && !rc; a++) rc = read_att(bf, v, a, s, sv, err);
  }
  return rc;
}

/* PnetCDF reports a file too short to hold any header (an empty file left by
 * a crashed run) as a failed read (NC_EFILE), where NetCDF says "not a
 * NetCDF file". 32 bytes is the smallest classic header. Every rank looks
 * for itself; they see the same file. */
static int too_short(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < 32;
}

static int tsr__pnc_open(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *s,
                         tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  tsr__schema_init(s);
  MPI_Info info;
  tsr__bfile *bf;
  int rc = prepare(comm, path, h, NULL, "open", &bf, &info, err);
  if (rc) return rc;
  /* Like ncmpi_create, ncmpi_open agrees on its result (MPI_File_open is
   * collective, and the header is read on one rank and broadcast). */
  errno = 0;
  int st = ncmpi_open(bf->comm, path, NC_NOWRITE, info, &bf->ncid);
  int sys = errno;
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (st) {
    rc = pnc_fail(err, st, sys, "ncmpi_open", path, NULL);
    if (rc == TSR_EIO && too_short(path)) {
      rc = tsr__berr_plain(err, TSR_EFORMAT, LIB, "too short to be a NetCDF file (path %s)", path);
      if (err) err->code = st;
    }
    free_file(bf);
    return rc;
  }
  int *fid = NULL;
  rc = describe(bf, s, &fid, err);
  if (!rc && tsr__bvars_from_file(s, fid, &bf->vars))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  int all = agree(bf->comm, rc);
  if (all) {
    if (!rc) tsr__berr_plain(err, all, LIB, "opening %s failed on another rank", path);
    free(fid);
    ncmpi_close(bf->ncid); /* collective: every rank opened */
    free_file(bf);
    tsr__schema_free(s);
    return all;
  }
  bf->nvars = s->nvars;
  free(fid);
  *out = bf;
  return 0;
}

static int tsr__pnc_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                               const int64_t count[], void *buf, tsr__memview mem,
                               tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (!rc && v->is_record && frame >= bf->nrecs)
    rc = tsr__berr_plain(err, TSR_ERANGE, LIB, "frame %lld of %s: the file has %lld records",
                         (long long)frame, v->name, (long long)bf->nrecs);
  int64_t n = rc ? 0 : tsr__block_elems(v->nd, count);
  /* An empty request is all zeros (frame included, which may lie beyond the
   * records), on any variable: a rank with nothing to read, or whose request
   * is invalid, still makes the collective call the others make. */
  MPI_Offset st[TSR_MAX_DIMS] = {0}, ct[TSR_MAX_DIMS] = {0};
  int fid = v ? v->fid : bf->nvars > 0 ? bf->vars[0].fid : 0;
  MPI_Datatype dt = v ? mpi_type(v->type) : MPI_BYTE;
  MPI_Offset bufcount = 0;
  void *dst = NULL;
  if (n > 0) {
    int k = 0;
    if (v->is_record) {
      st[k] = (MPI_Offset)frame;
      ct[k++] = 1;
    }
    for (int i = 0; i < v->nd; i++, k++) {
      st[k] = (MPI_Offset)start[i];
      ct[k] = (MPI_Offset)count[i];
    }
    dst = buf;
    bufcount = (MPI_Offset)n;
    /* Inside a larger array: MPI scatters the block into place, halos untouched. */
    if (mem.mshape && v->nd > 0) {
      MPI_Datatype sub = MPI_DATATYPE_NULL;
      rc = subarray_type(bf, v, count, mem, &sub, err);
      if (rc) { /* still take part, with nothing */
        memset(st, 0, sizeof st);
        memset(ct, 0, sizeof ct);
        dst = NULL;
        bufcount = 0;
      } else {
        dt = sub;
        bufcount = 1;
      }
    }
  }
  errno = 0;
  int status = ncmpi_get_vara_all(bf->ncid, fid, st, ct, dst, bufcount, dt);
  if (!rc && status) rc = pnc_fail(err, status, errno, "ncmpi_get_vara_all", bf->path, v->name);
  return rc;
}

static int64_t tsr__pnc_num_records(const tsr__bfile *bf) { return bf->nrecs; }

/* Collective, with the same texts on every rank. Over the placeholders, in
 * data mode; sums longer than theirs (more frames than frames_per_outfile
 * said) need define mode, which PnetCDF enters only with no request
 * pending, and where the header grows and PnetCDF moves the data behind it:
 * correct, and slow. */
static int tsr__pnc_annotate(tsr__bfile *bf, const char *name, char *const texts[],
                             tsr__berr *err) {
  int rc = tsr__pnc_flush(bf, err), st = 0, indef = 0;
  for (int v = 0; v < bf->nvars && !rc; v++) {
    if (!texts[v]) continue;
    size_t len = bf->sumlen ? bf->sumlen[v] : 0;
    char *fit = malloc(len + 1);
    if (!fit) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
    int fits = tsr__sums_fit(texts[v], len, fit);
    errno = 0;
    if (!fits && !indef) {
      if ((st = ncmpi_redef(bf->ncid))) rc = pnc_fail(err, st, errno, "ncmpi_redef", bf->path, NULL);
      indef = !st;
    }
    if (!rc && (st = fits ? ncmpi_put_att_text(bf->ncid, bf->vars[v].fid, name, (MPI_Offset)len, fit)
                          : ncmpi_put_att_text(bf->ncid, bf->vars[v].fid, name,
                                               (MPI_Offset)strlen(texts[v]), texts[v])))
      rc = pnc_fail(err, st, errno, "ncmpi_put_att_text", bf->path, bf->vars[v].name);
    free(fit);
  }
  /* Leave define mode even after a failed attribute: close needs data mode. */
  if (indef && (st = ncmpi_enddef(bf->ncid)) && !rc)
    rc = pnc_fail(err, st, errno, "ncmpi_enddef", bf->path, NULL);
  return rc;
}

const tsr__backend_ops tsr__backend_pnetcdf = {
    .version = TSR__BACKEND_VERSION,
    .name = "pnetcdf",
    .parallel = 1,
    .create = tsr__pnc_create,
    .write_block = tsr__pnc_write_block,
    .pending_bytes = tsr__pnc_pending_bytes,
    .flush = tsr__pnc_flush,
    .close = tsr__pnc_close,
    .abort = tsr__pnc_abort,
    .file_info = tsr__pnc_file_info,
    .block_offset = tsr__pnc_block_offset,
    .open = tsr__pnc_open,
    .read_block = tsr__pnc_read_block,
    .num_records = tsr__pnc_num_records,
    .annotate = tsr__pnc_annotate,
    .can_open = tsr__pnc_can_open,
};
