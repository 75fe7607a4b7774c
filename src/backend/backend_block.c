/* Block geometry shared by the file backends. */
#include "backend/backend_block.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend_errors.h"

int tsr__bvars_from_schema(const tsr__schema *s, tsr__bvar **out) {
  *out = NULL;
  if (s->nvars == 0) return 0;
  tsr__bvar *v = calloc((size_t)s->nvars, sizeof *v);
  if (!v) return TSR_ENOMEM;
  for (int i = 0; i < s->nvars; i++) {
    memcpy(v[i].name, s->vars[i].name, TSR_MAX_NAME);
    v[i].fid = i;
    v[i].type = s->vars[i].type;
    v[i].esize = tsr__type_size(s->vars[i].type);
    v[i].is_record = s->vars[i].is_record;
    v[i].nd = tsr__var_shape(s, i, v[i].shape);
  }
  *out = v;
  return 0;
}

int tsr__bschema_add_dim(tsr__schema *s, const char *name, int64_t len) {
  /* Refusals here (a name of NC_MAX_NAME characters, a second record
   * dimension) would shift every later dimension id: refuse the file. */
  int rc = tsr__schema_add_dim(s, name, len, NULL);
  return rc == TSR_ENOMEM ? rc : rc ? TSR_EFORMAT : 0;
}

int tsr__bschema_add_var(tsr__schema *s, const char *name, int xtype, int ndims,
                         const int dimids[], int *varid) {
  *varid = -1;
  if (ndims < 0 || ndims > TSR_MAX_DIMS) return 0;
  for (int i = 0; i < ndims; i++)
    if (dimids[i] < 0 || dimids[i] >= s->ndims) return TSR_EFORMAT;
  if (!tsr__type_valid((tsr_type)xtype) || strlen(name) >= TSR_MAX_NAME) return 0;
  for (int i = 1; i < ndims; i++)
    if (s->dims[dimids[i]].len == TSR_UNLIMITED) return 0; /* netCDF-4 allows it; we do not */
  int rc = tsr__schema_add_var(s, name, (tsr_type)xtype, ndims, dimids, varid);
  if (rc) *varid = -1;
  return rc == TSR_ENOMEM ? rc : rc ? TSR_EFORMAT : 0;
}

int tsr__bschema_att_ok(const char *name, int xtype) {
  return tsr__type_valid((tsr_type)xtype) && strlen(name) < TSR_MAX_NAME;
}

int tsr__bschema_put_att(tsr__schema *s, int varid, const char *name, int xtype, size_t n,
                         const void *values) {
  if (!tsr__bschema_att_ok(name, xtype)) return 0;
  int rc = tsr__schema_put_att(s, varid, name, (tsr_type)xtype, n, values);
  return rc == TSR_ENOMEM ? rc : 0; /* metadata the schema refuses is not worth failing over */
}

int64_t tsr__block_elems(int nd, const int64_t count[]) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= count[i];
  return n;
}

int tsr__block_check(const tsr__bvar *vars, int nvars, int varid, int64_t frame,
                     const int64_t start[], const int64_t count[], const void *buf,
                     tsr__memview mem, const char *lib, const char *path, const tsr__bvar **out,
                     tsr__berr *err) {
  if (varid < 0 || varid >= nvars)
    return tsr__berr_plain(err, TSR_EBADID, lib, "no variable %d (path %s)", varid, path);
  const tsr__bvar *v = &vars[varid];
  *out = v;
  if (v->is_record && frame < 0)
    return tsr__berr_plain(err, TSR_ERANGE, lib, "negative frame %lld for %s", (long long)frame,
                           v->name);
  if (v->nd > 0 && (!start || !count))
    return tsr__berr_plain(err, TSR_EINVAL, lib, "start/count missing for %s", v->name);
  if ((mem.mshape == NULL) != (mem.moffset == NULL))
    return tsr__berr_plain(err, TSR_EINVAL, lib, "memory view of %s lacks shape or offset",
                           v->name);
  for (int i = 0; i < v->nd; i++) {
    /* Written so that no sum can overflow even for hostile values. */
    if (start[i] < 0 || count[i] < 0 || start[i] > v->shape[i] ||
        count[i] > v->shape[i] - start[i])
      return tsr__berr_plain(err, TSR_ERANGE, lib,
                             "block [%lld +%lld] outside dimension %d (length %lld) of %s",
                             (long long)start[i], (long long)count[i], i,
                             (long long)v->shape[i], v->name);
    if (mem.mshape && (mem.moffset[i] < 0 || mem.mshape[i] < 0 || mem.moffset[i] > mem.mshape[i] ||
                       count[i] > mem.mshape[i] - mem.moffset[i]))
      return tsr__berr_plain(err, TSR_EINVAL, lib,
                             "block of %s does not fit its memory array in dimension %d", v->name,
                             i);
  }
  if (!buf && tsr__block_elems(v->nd, count) > 0)
    return tsr__berr_plain(err, TSR_EINVAL, lib, "NULL buffer for %s", v->name);
  return 0;
}

/* Walk the block row by row (a row = the fastest dimension), copying each row
 * with one memcpy between the contiguous block and its place in the memory
 * array; `idx` is an odometer over the slower dimensions. to_array picks the
 * direction (src is the block, dst the array), so pack (writes) and unpack
 * (reads) share one walk. */
static void block_copy(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                       tsr__memview mem, int to_array) {
  if (nd == 0) {
    memcpy(dst, src, esize);
    return;
  }
  if (tsr__block_elems(nd, count) == 0) return;
  int64_t stride[TSR_MAX_DIMS]; /* elements between neighbours of dimension i in memory */
  stride[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) stride[i] = stride[i + 1] * mem.mshape[i + 1];
  int64_t base = 0;
  for (int i = 0; i < nd; i++) base += mem.moffset[i] * stride[i];
  size_t row = (size_t)count[nd - 1] * esize;
  int64_t idx[TSR_MAX_DIMS] = {0};
  const char *s = src;
  char *d = dst;
  for (;;) {
    int64_t off = base;
    for (int i = 0; i < nd - 1; i++) off += idx[i] * stride[i];
    if (to_array) {
      memcpy(d + (size_t)off * esize, s, row);
      s += row;
    } else {
      memcpy(d, s + (size_t)off * esize, row);
      d += row;
    }
    int i = nd - 2;
    while (i >= 0 && ++idx[i] == count[i]) idx[i--] = 0;
    if (i < 0) break;
  }
}

void tsr__block_pack(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                     tsr__memview mem) {
  block_copy(dst, src, esize, nd, count, mem, 0);
}

void tsr__block_unpack(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                       tsr__memview mem) {
  block_copy(dst, src, esize, nd, count, mem, 1);
}

int tsr__block_scratch_fit(void **buf, size_t *cap, size_t bytes, const char *lib,
                           const char *var, tsr__berr *err) {
  if (bytes <= *cap) return 0;
  void *p = realloc(*buf, bytes);
  if (!p)
    return tsr__berr_plain(err, TSR_ENOMEM, lib, "no memory to stage %zu bytes of %s", bytes, var);
  *buf = p;
  *cap = bytes;
  return 0;
}

const void *tsr__block_contiguous(const void *buf, size_t esize, int nd, const int64_t count[],
                                  tsr__memview mem, void **scratch, size_t *cap,
                                  const char *lib, const char *var, tsr__berr *err) {
  if (!mem.mshape) return buf;
  size_t bytes = (size_t)tsr__block_elems(nd, count) * esize;
  if (tsr__block_scratch_fit(scratch, cap, bytes, lib, var, err)) return NULL;
  tsr__block_pack(*scratch, buf, esize, nd, count, mem);
  return *scratch;
}

int tsr__bvars_from_file(const tsr__schema *s, const int *fid, tsr__bvar **out) {
  int rc = tsr__bvars_from_schema(s, out);
  for (int v = 0; !rc && v < s->nvars; v++) (*out)[v].fid = fid[v];
  return rc;
}
