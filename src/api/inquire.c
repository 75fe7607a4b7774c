/* Inquiry: what a file holds (dimensions, variables, attributes), from its
 * schema, for files being written and files opened with tsr_open alike, so a
 * model reading its restart file needs no NetCDF call of its own. Every rank
 * holds the same schema, so nothing here is collective. */
#include <string.h>

#include "api/api.h"

/* The record dimension's length: records in the file when it was opened for
 * reading; records put so far when it is being written. */
static int64_t records(const tsr_file *f) {
  return f->reader ? tsr__reader_records(f) : f->st.frames;
}

static int64_t dim_len(const tsr_file *f, int dimid) {
  int64_t len = f->schema.dims[dimid].len;
  return len == TSR_UNLIMITED ? records(f) : len;
}

int tsr_inq(const tsr_file *f, int *ndims, int *nvars, int *ngatts, int *unlimdimid) {
  if (!f) return TSR_EINVAL;
  if (ndims) *ndims = f->schema.ndims;
  if (nvars) *nvars = f->schema.nvars;
  if (ngatts) *ngatts = f->schema.ngatts;
  if (unlimdimid) {
    *unlimdimid = -1;
    for (int d = 0; d < f->schema.ndims; d++)
      if (f->schema.dims[d].len == TSR_UNLIMITED) *unlimdimid = d;
  }
  return 0;
}

int tsr_inq_dim(const tsr_file *f, int dimid, char *name, int64_t *len) {
  if (!f) return TSR_EINVAL;
  if (dimid < 0 || dimid >= f->schema.ndims) return TSR_EBADID;
  if (name) strcpy(name, f->schema.dims[dimid].name);
  if (len) *len = dim_len(f, dimid);
  return 0;
}

int tsr_inq_dimid(const tsr_file *f, const char *name, int *dimid) {
  if (!f || !name) return TSR_EINVAL;
  for (int d = 0; d < f->schema.ndims; d++)
    if (strcmp(f->schema.dims[d].name, name) == 0) {
      if (dimid) *dimid = d;
      return 0;
    }
  return TSR_ENAME;
}

int tsr_inq_var(const tsr_file *f, int varid, char *name, tsr_type *type, int *ndims,
                int dimids[], int64_t shape[]) {
  if (!f) return TSR_EINVAL;
  if (varid < 0 || varid >= f->schema.nvars) return TSR_EBADID;
  const tsr__var *v = &f->schema.vars[varid];
  if (name) strcpy(name, v->name);
  if (type) *type = v->type;
  if (ndims) *ndims = v->ndims;
  for (int i = 0; i < v->ndims; i++) {
    if (dimids) dimids[i] = v->dimids[i];
    if (shape) shape[i] = dim_len(f, v->dimids[i]);
  }
  return 0;
}

/* The attribute list of a variable, or the global one (varid TSR_GLOBAL). */
static int atts_of(const tsr_file *f, int varid, const tsr__att **a, int *n) {
  if (varid == TSR_GLOBAL) {
    *a = f->schema.gatts;
    *n = f->schema.ngatts;
    return 0;
  }
  if (varid < 0 || varid >= f->schema.nvars) return TSR_EBADID;
  *a = f->schema.vars[varid].atts;
  *n = f->schema.vars[varid].natts;
  return 0;
}

int tsr_inq_natts(const tsr_file *f, int varid, int *natts) {
  if (!f || !natts) return TSR_EINVAL;
  const tsr__att *a;
  return atts_of(f, varid, &a, natts);
}

int tsr_inq_attname(const tsr_file *f, int varid, int attnum, char *name) {
  if (!f || !name) return TSR_EINVAL;
  const tsr__att *a;
  int n, rc = atts_of(f, varid, &a, &n);
  if (rc) return rc;
  if (attnum < 0 || attnum >= n) return TSR_EBADID;
  strcpy(name, a[attnum].name);
  return 0;
}

static const tsr__att *find_att(const tsr_file *f, int varid, const char *name, int *rc) {
  if (!f || !name) return *rc = TSR_EINVAL, NULL;
  const tsr__att *a;
  int n;
  if ((*rc = atts_of(f, varid, &a, &n))) return NULL;
  const tsr__att *found = tsr__att_find(a, n, name);
  if (!found) *rc = TSR_ENAME;
  return found;
}

int tsr_inq_att(const tsr_file *f, int varid, const char *name, tsr_type *type, size_t *n) {
  int rc;
  const tsr__att *a = find_att(f, varid, name, &rc);
  if (!a) return rc;
  if (type) *type = a->type;
  if (n) *n = a->n;
  return 0;
}

int tsr_get_att(const tsr_file *f, int varid, const char *name, void *values) {
  int rc;
  const tsr__att *a = find_att(f, varid, name, &rc);
  if (!a) return rc;
  if (!values && a->n > 0) return TSR_EINVAL;
  if (a->n > 0) memcpy(values, a->values, a->n * tsr__type_size(a->type));
  return 0;
}
