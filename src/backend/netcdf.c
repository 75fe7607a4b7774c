/* Serial NetCDF backend: one rank owns the file (comm is MPI_COMM_SELF) and
 * writes blocks with nc_put_vara. For reading, every rank opens the file
 * itself (read-only, no coordination needed) and reads its blocks with
 * nc_get_vara. We link Debian's MPI build of NetCDF
 * (libnetcdf_mpi) but call only its serial API, so the classic CDF-2/CDF-5
 * formats go through NetCDF's own POSIX layer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netcdf.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"

#define LIB "NetCDF"

struct tsr__bfile {
  int ncid;
  char *path;
  int nvars;
  tsr__bvar *vars;
  void *scratch; /* packs blocks that sit inside a larger memory array */
  size_t scratch_cap;
  int64_t nrecs; /* records when opened for reading */
};

/* NetCDF reports POSIX failures as positive errno values (handled by the
 * shared mapping); these are its negative codes that mean more than "I/O". */
static const tsr__berr_class nc_classes[] = {
    {NC_ENOMEM, TSR_ENOMEM, 0},  {NC_EPERM, TSR_EACCES, 0}, {NC_EACCESS, TSR_EACCES, 0},
    {NC_ENOTFOUND, TSR_EACCES, 0}, {NC_EIO, TSR_EIO, 1},     {NC_ENOTNC, TSR_EFORMAT, 0},
};

static int nc_fail(tsr__berr *err, int status, int sys_errno, const char *call,
                   const tsr__bfile *bf, const char *path, const char *var) {
  return tsr__berr_native(err, LIB, status, sys_errno, nc_strerror(status), nc_classes,
                          sizeof nc_classes / sizeof nc_classes[0], "%s%s%s, path %s", call,
                          var ? " " : "", var ? var : "", bf ? bf->path : path);
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  free(bf->path);
  free(bf->vars);
  free(bf->scratch);
  free(bf);
}

static int put_att(int ncid, int varid, const tsr__att *a) {
  /* nc_put_att_text because NetCDF treats text as its own kind, not a
   * numeric type that the generic call would convert. */
  if (a->type == TSR_CHAR) return nc_put_att_text(ncid, varid, a->name, a->n, a->values);
  return nc_put_att(ncid, varid, a->name, (nc_type)a->type, a->n, a->values);
}

/* Define the whole schema; NetCDF numbers dims and vars in definition order,
 * so the schema's ids are NetCDF's ids. */
static int define(tsr__bfile *bf, const tsr__schema *s, tsr__berr *err) {
  int st, id;
  char what[TSR_MAX_NAME * 2 + 2];
  errno = 0;
  /* Tessera writes fill values itself where no rank owns a point, so
   * NetCDF's pre-fill would only write every byte twice. */
  if ((st = nc_set_fill(bf->ncid, NC_NOFILL, NULL)))
    return nc_fail(err, st, errno, "nc_set_fill", bf, NULL, NULL);
  for (int d = 0; d < s->ndims; d++) {
    if ((st = nc_def_dim(bf->ncid, s->dims[d].name, (size_t)s->dims[d].len, &id)))
      return nc_fail(err, st, errno, "nc_def_dim", bf, NULL, s->dims[d].name);
  }
  for (int a = 0; a < s->ngatts; a++) {
    if ((st = put_att(bf->ncid, NC_GLOBAL, &s->gatts[a])))
      return nc_fail(err, st, errno, "nc_put_att", bf, NULL, s->gatts[a].name);
  }
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    if ((st = nc_def_var(bf->ncid, var->name, (nc_type)var->type, var->ndims, var->dimids, &id)))
      return nc_fail(err, st, errno, "nc_def_var", bf, NULL, var->name);
    for (int a = 0; a < var->natts; a++) {
      if ((st = put_att(bf->ncid, id, &var->atts[a]))) {
        snprintf(what, sizeof what, "%s:%s", var->name, var->atts[a].name);
        return nc_fail(err, st, errno, "nc_put_att", bf, NULL, what);
      }
    }
  }
  errno = 0;
  if ((st = nc_enddef(bf->ncid))) return nc_fail(err, st, errno, "nc_enddef", bf, NULL, NULL);
  return 0;
}

static int tsr__nc_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                          const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  (void)comm; /* always MPI_COMM_SELF: the serial API has no communicator */
  (void)h;    /* no pass-through hints: there is no MPI-IO underneath */
  *out = NULL;
  int cmode;
  if (s->format == 2)
    cmode = NC_CLOBBER | NC_64BIT_OFFSET;
  else if (s->format == 5)
    cmode = NC_CLOBBER | NC_64BIT_DATA;
  else
    return tsr__berr_plain(err, TSR_EINVAL, LIB, "unknown format %d (path %s)", s->format, path);

  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf || !(bf->path = strdup(path)) || tsr__bvars_from_schema(s, &bf->vars)) {
    free_file(bf);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  }
  bf->nvars = s->nvars;
  errno = 0;
  int st = nc_create(path, cmode, &bf->ncid);
  if (st) {
    int rc = nc_fail(err, st, errno, "nc_create", NULL, path, NULL);
    free_file(bf);
    return rc;
  }
  int rc = define(bf, s, err);
  if (rc) {
    /* nc_abort deletes a file still in define mode; unlink covers the case
     * where nc_enddef got far enough to leave a header behind. */
    nc_abort(bf->ncid);
    unlink(path);
    free_file(bf);
    return rc;
  }
  *out = bf;
  return 0;
}

/* NetCDF's start/count of a block: the frame first for record variables. */
static void corners(const tsr__bvar *v, int64_t frame, const int64_t start[],
                    const int64_t count[], size_t st[], size_t ct[]) {
  int k = 0;
  if (v->is_record) {
    st[k] = (size_t)frame;
    ct[k++] = 1;
  }
  for (int i = 0; i < v->nd; i++, k++) {
    st[k] = (size_t)start[i];
    ct[k] = (size_t)count[i];
  }
}

/* Room for a block in the scratch buffer, which packs (writes) or receives
 * (reads) blocks that sit inside a larger memory array. Grown, never shrunk:
 * a model moves the same block shapes every frame, so the largest one is
 * allocated once. */
static int scratch_fit(tsr__bfile *bf, size_t bytes, const tsr__bvar *v, tsr__berr *err) {
  if (bytes <= bf->scratch_cap) return 0;
  void *p = realloc(bf->scratch, bytes);
  if (!p)
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to stage %zu bytes of %s", bytes,
                           v->name);
  bf->scratch = p;
  bf->scratch_cap = bytes;
  return 0;
}

static int tsr__nc_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                               const int64_t count[], const void *buf, tsr__memview mem,
                               tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0; /* nothing to write; NetCDF would accept it, but why call */

  size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  corners(v, frame, start, count, st, ct);

  const void *src = buf;
  if (mem.mshape) {
    if ((rc = scratch_fit(bf, (size_t)n * v->esize, v, err))) return rc;
    tsr__block_pack(bf->scratch, buf, v->esize, v->nd, count, mem);
    src = bf->scratch;
  }
  errno = 0;
  int status = nc_put_vara(bf->ncid, v->fid, st, ct, src);
  if (status) return nc_fail(err, status, errno, "nc_put_vara", bf, NULL, v->name);
  return 0;
}

static int64_t tsr__nc_pending_bytes(const tsr__bfile *bf) {
  (void)bf; /* nc_put_vara has handed the data to NetCDF when it returns */
  return 0;
}

static int tsr__nc_flush(tsr__bfile *bf, tsr__berr *err) {
  errno = 0;
  int st = nc_sync(bf->ncid);
  return st ? nc_fail(err, st, errno, "nc_sync", bf, NULL, NULL) : 0;
}

static int tsr__nc_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  errno = 0;
  /* nc_close writes NetCDF's last buffered page, so it can be where a full
   * disk or a file size limit shows up. */
  int st = nc_close(bf->ncid);
  int rc = st ? nc_fail(err, st, errno, "nc_close", bf, NULL, NULL) : 0;
  free_file(bf);
  return rc;
}

static void tsr__nc_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  nc_abort(bf->ncid);
  /* In data mode nc_abort only closes; delete so a failed file never looks
   * complete. A missing file (already deleted) is fine. */
  unlink(path ? path : bf->path);
  free_file(bf);
}

/* The serial API does not expose a variable's begin offset. */
static int64_t tsr__nc_block_offset(const tsr__bfile *bf, int varid, int64_t frame,
                                    const int64_t start[]) {
  (void)bf;
  (void)varid;
  (void)frame;
  (void)start;
  return -1;
}

/* ---- reading ---- */

/* Copy one attribute of the open file into the schema, unless its type has
 * no tsr_type (then it is left out). */
static int read_att(tsr__bfile *bf, int fvar, int a, tsr__schema *s, int svar, tsr__berr *err) {
  char name[NC_MAX_NAME + 1];
  nc_type xtype;
  size_t n;
  int st;
  if ((st = nc_inq_attname(bf->ncid, fvar, a, name)) ||
      (st = nc_inq_att(bf->ncid, fvar, name, &xtype, &n)))
    return nc_fail(err, st, 0, "nc_inq_att", bf, NULL, NULL);
  if (!tsr__bschema_att_ok(name, xtype)) return 0;
  void *values = malloc(n * tsr__type_size((tsr_type)xtype) + 1);
  if (!values) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for attribute %s", name);
  int rc = 0;
  if ((st = nc_get_att(bf->ncid, fvar, name, values)))
    rc = nc_fail(err, st, 0, "nc_get_att", bf, NULL, name);
  else if ((rc = tsr__bschema_put_att(s, svar, name, xtype, n, values)))
    tsr__berr_plain(err, rc, LIB, "no memory for attribute %s", name);
  free(values);
  return rc;
}

/* The whole header of the open file as a schema (backend.h: open). */
static int describe(tsr__bfile *bf, tsr__schema *s, int **fid, tsr__berr *err) {
  int st, ndims, nvars, ngatts, unlim, fmt, rc = 0;
  char name[NC_MAX_NAME + 1];
  if ((st = nc_inq(bf->ncid, &ndims, &nvars, &ngatts, &unlim)) ||
      (st = nc_inq_format(bf->ncid, &fmt)))
    return nc_fail(err, st, 0, "nc_inq", bf, NULL, NULL);
  s->format = fmt;
  for (int d = 0; d < ndims && !rc; d++) {
    size_t len;
    if ((st = nc_inq_dim(bf->ncid, d, name, &len)))
      return nc_fail(err, st, 0, "nc_inq_dim", bf, NULL, NULL);
    if ((rc = tsr__bschema_add_dim(s, name, d == unlim ? TSR_UNLIMITED : (int64_t)len)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe dimension %s (path %s)", name,
                             bf->path);
  }
  for (int a = 0; a < ngatts && !rc; a++) rc = read_att(bf, NC_GLOBAL, a, s, TSR_GLOBAL, err);
  *fid = malloc((size_t)(nvars > 0 ? nvars : 1) * sizeof **fid);
  if (!*fid) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
  for (int v = 0; v < nvars && !rc; v++) {
    int nd, natts, dimids[TSR_MAX_DIMS], sv = -1;
    nc_type xtype;
    if ((st = nc_inq_varndims(bf->ncid, v, &nd)))
      return nc_fail(err, st, 0, "nc_inq_varndims", bf, NULL, NULL);
    if (nd > TSR_MAX_DIMS) continue; /* more dims than Tessera handles: left out */
    if ((st = nc_inq_var(bf->ncid, v, name, &xtype, &nd, dimids, &natts)))
      return nc_fail(err, st, 0, "nc_inq_var", bf, NULL, NULL);
    if ((rc = tsr__bschema_add_var(s, name, xtype, nd, dimids, &sv)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe variable %s (path %s)", name,
                             bf->path);
    if (sv < 0) continue;
    (*fid)[sv] = v;
    for (int a = 0; a < natts && !rc; a++) rc = read_att(bf, v, a, s, sv, err);
  }
  if (!rc && unlim >= 0) {
    size_t n;
    if ((st = nc_inq_dimlen(bf->ncid, unlim, &n)))
      return nc_fail(err, st, 0, "nc_inq_dimlen", bf, NULL, NULL);
    bf->nrecs = (int64_t)n;
  }
  return rc;
}

static int tsr__nc_open(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *s,
                        tsr__bfile **out, tsr__berr *err) {
  (void)comm; /* MPI_COMM_SELF: every rank opens the file on its own */
  (void)h;
  *out = NULL;
  tsr__schema_init(s);
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf || !(bf->path = strdup(path))) {
    free_file(bf);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  }
  errno = 0;
  int st = nc_open(path, NC_NOWRITE, &bf->ncid);
  if (st) {
    int rc = nc_fail(err, st, errno, "nc_open", NULL, path, NULL);
    free_file(bf);
    return rc;
  }
  int *fid = NULL;
  int rc = describe(bf, s, &fid, err);
  if (!rc && tsr__bvars_from_file(s, fid, &bf->vars))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  if (rc) {
    free(fid);
    nc_close(bf->ncid);
    free_file(bf);
    tsr__schema_free(s);
    return rc;
  }
  bf->nvars = s->nvars;
  free(fid);
  *out = bf;
  return 0;
}

static int tsr__nc_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                              const int64_t count[], void *buf, tsr__memview mem,
                              tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0; /* serial: nobody waits for an empty call */
  if (v->is_record && frame >= bf->nrecs)
    return tsr__berr_plain(err, TSR_ERANGE, LIB, "frame %lld of %s: the file has %lld records",
                           (long long)frame, v->name, (long long)bf->nrecs);
  size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  corners(v, frame, start, count, st, ct);
  /* NetCDF's serial API reads contiguous blocks only: a block inside a
   * larger array lands in the scratch buffer and is spread from there, so
   * the halo around it stays as the caller left it. */
  void *dst = buf;
  if (mem.mshape) {
    if ((rc = scratch_fit(bf, (size_t)n * v->esize, v, err))) return rc;
    dst = bf->scratch;
  }
  errno = 0;
  int status = nc_get_vara(bf->ncid, v->fid, st, ct, dst);
  if (status) return nc_fail(err, status, errno, "nc_get_vara", bf, NULL, v->name);
  if (mem.mshape) tsr__block_unpack(buf, bf->scratch, v->esize, v->nd, count, mem);
  return 0;
}

static int64_t tsr__nc_num_records(const tsr__bfile *bf) { return bf->nrecs; }

const tsr__backend_ops tsr__backend_netcdf = {
    .version = TSR__BACKEND_VERSION,
    .name = "netcdf",
    .parallel = 0,
    .create = tsr__nc_create,
    .write_block = tsr__nc_write_block,
    .pending_bytes = tsr__nc_pending_bytes,
    .flush = tsr__nc_flush,
    .close = tsr__nc_close,
    .abort = tsr__nc_abort,
    .file_info = NULL,
    .block_offset = tsr__nc_block_offset,
    .open = tsr__nc_open,
    .read_block = tsr__nc_read_block,
    .num_records = tsr__nc_num_records,
};
