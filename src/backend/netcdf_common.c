/* Shared by the NetCDF-C backends (contract in backend/netcdf_common.h). */
#include "backend/netcdf_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netcdf.h>

#include "backend/backend_errors.h"

#define LIB "NetCDF"

/* NetCDF reports POSIX failures as positive errno values (handled by the
 * shared mapping); these are its negative codes that mean more than "I/O". */
static const tsr__berr_class nc_classes[] = {
    {NC_ENOMEM, TSR_ENOMEM, 0},    {NC_EPERM, TSR_EACCES, 0}, {NC_EACCESS, TSR_EACCES, 0},
    {NC_ENOTFOUND, TSR_EACCES, 0}, {NC_EIO, TSR_EIO, 1},      {NC_ENOTNC, TSR_EFORMAT, 0},
    {NC_EHDFERR, TSR_EIO, 1},      {NC_EBADTYPE, TSR_ETYPE, 0}, {NC_ESTRICTNC3, TSR_ETYPE, 0},
    {NC_ENOFILTER, TSR_ENOTBUILT, 0},
};

int tsr__nc_fail(tsr__berr *err, int status, int sys_errno, const char *call, const char *path,
                 const char *var) {
  return tsr__berr_native(err, LIB, status, sys_errno, nc_strerror(status), nc_classes,
                          sizeof nc_classes / sizeof nc_classes[0], "%s%s%s, path %s", call,
                          var ? " " : "", var ? var : "", path);
}

static int put_att(int ncid, int varid, const tsr__att *a) {
  /* nc_put_att_text because NetCDF treats text as its own kind, not a
   * numeric type that the generic call would convert. */
  if (a->type == TSR_CHAR) return nc_put_att_text(ncid, varid, a->name, a->n, a->values);
  return nc_put_att(ncid, varid, a->name, (nc_type)a->type, a->n, a->values);
}

int tsr__nc_define(int ncid, const char *path, const tsr__schema *s, tsr__nc_var_hook hook,
                   void *arg, tsr__berr *err) {
  int st, id, rc;
  char what[TSR_MAX_NAME * 2 + 2];
  errno = 0;
  /* Tessera writes fill values itself where no rank owns a point, so
   * NetCDF's pre-fill would only write every byte twice. */
  if ((st = nc_set_fill(ncid, NC_NOFILL, NULL)))
    return tsr__nc_fail(err, st, errno, "nc_set_fill", path, NULL);
  for (int d = 0; d < s->ndims; d++) {
    size_t len = s->dims[d].len == TSR_UNLIMITED ? NC_UNLIMITED : (size_t)s->dims[d].len;
    if ((st = nc_def_dim(ncid, s->dims[d].name, len, &id)))
      return tsr__nc_fail(err, st, errno, "nc_def_dim", path, s->dims[d].name);
  }
  for (int a = 0; a < s->ngatts; a++) {
    if ((st = put_att(ncid, NC_GLOBAL, &s->gatts[a])))
      return tsr__nc_fail(err, st, errno, "nc_put_att", path, s->gatts[a].name);
  }
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    if ((st = nc_def_var(ncid, var->name, (nc_type)var->type, var->ndims, var->dimids, &id)))
      return tsr__nc_fail(err, st, errno, "nc_def_var", path, var->name);
    if (hook && (rc = hook(ncid, id, s, v, arg, err))) return rc;
    for (int a = 0; a < var->natts; a++) {
      if ((st = put_att(ncid, id, &var->atts[a]))) {
        snprintf(what, sizeof what, "%s:%s", var->name, var->atts[a].name);
        return tsr__nc_fail(err, st, errno, "nc_put_att", path, what);
      }
    }
  }
  return 0;
}

/* Copy one attribute of the open file into the schema, unless its type has
 * no tsr_type (then it is left out). */
static int read_att(int ncid, const char *path, int fvar, int a, tsr__schema *s, int svar,
                    tsr__berr *err) {
  char name[NC_MAX_NAME + 1];
  nc_type xtype;
  size_t n;
  int st;
  if ((st = nc_inq_attname(ncid, fvar, a, name)) || (st = nc_inq_att(ncid, fvar, name, &xtype, &n)))
    return tsr__nc_fail(err, st, 0, "nc_inq_att", path, NULL);
  if (!tsr__bschema_att_ok(name, xtype)) return 0;
  void *values = malloc(n * tsr__type_size((tsr_type)xtype) + 1);
  if (!values) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for attribute %s", name);
  int rc = 0;
  if ((st = nc_get_att(ncid, fvar, name, values)))
    rc = tsr__nc_fail(err, st, 0, "nc_get_att", path, name);
  else if ((rc = tsr__bschema_put_att(s, svar, name, xtype, n, values)))
    tsr__berr_plain(err, rc, LIB, "no memory for attribute %s", name);
  free(values);
  return rc;
}

int tsr__nc_describe(int ncid, const char *path, tsr__schema *s, int **fid, int64_t *nrecs,
                     tsr__berr *err) {
  int st, ndims, nvars, ngatts, unlim, fmt, rc = 0;
  char name[NC_MAX_NAME + 1];
  *nrecs = 0;
  if ((st = nc_inq(ncid, &ndims, &nvars, &ngatts, &unlim)) || (st = nc_inq_format(ncid, &fmt)))
    return tsr__nc_fail(err, st, 0, "nc_inq", path, NULL);
  s->format = fmt;
  for (int d = 0; d < ndims && !rc; d++) {
    size_t len;
    if ((st = nc_inq_dim(ncid, d, name, &len)))
      return tsr__nc_fail(err, st, 0, "nc_inq_dim", path, NULL);
    if ((rc = tsr__bschema_add_dim(s, name, d == unlim ? TSR_UNLIMITED : (int64_t)len)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe dimension %s (path %s)", name, path);
  }
  for (int a = 0; a < ngatts && !rc; a++) rc = read_att(ncid, path, NC_GLOBAL, a, s, TSR_GLOBAL, err);
  *fid = malloc((size_t)(nvars > 0 ? nvars : 1) * sizeof **fid);
  if (!*fid) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  for (int v = 0; v < nvars && !rc; v++) {
    int nd, natts, dimids[TSR_MAX_DIMS], sv = -1;
    nc_type xtype;
    if ((st = nc_inq_varndims(ncid, v, &nd)))
      return tsr__nc_fail(err, st, 0, "nc_inq_varndims", path, NULL);
    if (nd > TSR_MAX_DIMS) continue; /* more dims than Tessera handles: left out */
    if ((st = nc_inq_var(ncid, v, name, &xtype, &nd, dimids, &natts)))
      return tsr__nc_fail(err, st, 0, "nc_inq_var", path, NULL);
    if ((rc = tsr__bschema_add_var(s, name, xtype, nd, dimids, &sv)))
      return tsr__berr_plain(err, rc, LIB, "cannot describe variable %s (path %s)", name, path);
    if (sv < 0) continue;
    (*fid)[sv] = v;
    for (int a = 0; a < natts && !rc; a++) rc = read_att(ncid, path, v, a, s, sv, err);
  }
  if (!rc && unlim >= 0) {
    size_t n;
    if ((st = nc_inq_dimlen(ncid, unlim, &n)))
      return tsr__nc_fail(err, st, 0, "nc_inq_dimlen", path, NULL);
    *nrecs = (int64_t)n;
  }
  return rc;
}

void tsr__nc_corners(const tsr__bvar *v, int64_t frame, const int64_t start[],
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

int tsr__nc_scratch_fit(void **buf, size_t *cap, size_t bytes, const char *var, tsr__berr *err) {
  return tsr__block_scratch_fit(buf, cap, bytes, LIB, var, err);
}
