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
    v[i].type = s->vars[i].type;
    v[i].esize = tsr__type_size(s->vars[i].type);
    v[i].is_record = s->vars[i].is_record;
    v[i].nd = tsr__var_shape(s, i, v[i].shape);
  }
  *out = v;
  return 0;
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
 * with one memcpy; `idx` is an odometer over the slower dimensions. */
void tsr__block_pack(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                     tsr__memview mem) {
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
    memcpy(d, s + (size_t)off * esize, row);
    d += row;
    int i = nd - 2;
    while (i >= 0 && ++idx[i] == count[i]) idx[i--] = 0;
    if (i < 0) break;
  }
}
