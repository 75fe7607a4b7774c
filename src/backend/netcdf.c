/* Serial NetCDF backend: one rank owns the file (comm is MPI_COMM_SELF) and
 * writes blocks with nc_put_vara. We link Debian's MPI build of NetCDF
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
};

/* NetCDF reports POSIX failures as positive errno values (handled by the
 * shared mapping); these are its negative codes that mean more than "I/O". */
static const tsr__berr_class nc_classes[] = {
    {NC_ENOMEM, TSR_ENOMEM, 0},  {NC_EPERM, TSR_EACCES, 0}, {NC_EACCESS, TSR_EACCES, 0},
    {NC_ENOTFOUND, TSR_EACCES, 0}, {NC_EIO, TSR_EIO, 1},
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
  int k = 0;
  if (v->is_record) {
    st[k] = (size_t)frame;
    ct[k++] = 1;
  }
  for (int i = 0; i < v->nd; i++, k++) {
    st[k] = (size_t)start[i];
    ct[k] = (size_t)count[i];
  }

  const void *src = buf;
  if (mem.mshape) {
    size_t bytes = (size_t)n * v->esize;
    if (bytes > bf->scratch_cap) {
      /* Grown, never shrunk: a model writes the same block shapes every
       * frame, so the largest one is allocated once. */
      void *p = realloc(bf->scratch, bytes);
      if (!p)
        return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to pack %zu bytes of %s",
                               bytes, v->name);
      bf->scratch = p;
      bf->scratch_cap = bytes;
    }
    tsr__block_pack(bf->scratch, buf, v->esize, v->nd, count, mem);
    src = bf->scratch;
  }
  errno = 0;
  int status = nc_put_vara(bf->ncid, varid, st, ct, src);
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
};
