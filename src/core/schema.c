/* Schema: dimensions, variables and attributes kept in memory during define
 * mode, handed whole to the backend at enddef, and packed for servers. */
#include "core/schema.h"

#include "core/name_index.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

size_t tsr__type_size(tsr_type t) {
  switch (t) {
  case TSR_BYTE:
  case TSR_CHAR:
  case TSR_UBYTE: return 1;
  case TSR_SHORT:
  case TSR_USHORT: return 2;
  case TSR_INT:
  case TSR_UINT:
  case TSR_FLOAT: return 4;
  case TSR_DOUBLE:
  case TSR_INT64:
  case TSR_UINT64: return 8;
  }
  return 0;
}

int tsr__type_in_format(tsr_type t, int format) {
  if (!tsr__type_valid(t)) return 0;
  /* CDF-1/CDF-2 and netCDF-4's classic model have the six original types;
   * CDF-5 and netCDF-4 all of them. */
  if (format == 1 || format == 2 || format == 4) return t <= TSR_DOUBLE;
  return 1;
}

int tsr__type_valid(tsr_type t) { return tsr__type_size(t) != 0; }

size_t tsr_type_size(tsr_type type) { return tsr__type_size(type); }

void tsr__schema_init(tsr__schema *s) {
  memset(s, 0, sizeof *s);
  s->format = 2;
}

static void free_atts(tsr__att *atts, int n) {
  for (int i = 0; i < n; i++) free(atts[i].values);
  free(atts);
}

void tsr__schema_free(tsr__schema *s) {
  if (!s) return;
  for (int v = 0; v < s->nvars; v++) free_atts(s->vars[v].atts, s->vars[v].natts);
  free(s->vars);
  free(s->dims);
  free_atts(s->gatts, s->ngatts);
  tsr__name_index_free(&s->var_index);
  tsr__name_index_free(&s->dim_index);
  tsr__schema_init(s);
}

static int name_ok(const char *name) {
  return name && name[0] != '\0' && strlen(name) < TSR_MAX_NAME;
}

/* The array @p p of @p n records of @p size bytes with room for one more
 * (NULL when memory runs out; @p p is then still valid): it doubles, so
 * appending N records copies O(N) bytes in all. */
static void *room_for_one(void *p, int *cap, int n, size_t size) {
  if (n < *cap) return p;
  int want = *cap ? 2 * *cap : 16;
  void *np = realloc(p, (size_t)want * size);
  if (np) *cap = want;
  return np;
}

int tsr__schema_add_dim(tsr__schema *s, const char *name, int64_t len, int *dimid) {
  if (!name_ok(name) || len < 0) return TSR_EINVAL;
  if (tsr__name_index_find(s->dim_index, s->dims, sizeof *s->dims, s->ndims, name) >= 0)
    return TSR_ENAME;
  /* NetCDF classic formats allow one record dimension only. */
  for (int d = 0; len == TSR_UNLIMITED && d < s->ndims; d++)
    if (s->dims[d].len == TSR_UNLIMITED) return TSR_EINVAL;
  tsr__dim *dims = room_for_one(s->dims, &s->dim_cap, s->ndims, sizeof *dims);
  if (!dims) return TSR_ENOMEM;
  s->dims = dims;
  tsr__dim *nd = &s->dims[s->ndims];
  memset(nd, 0, sizeof *nd);
  strcpy(nd->name, name);
  nd->len = len;
  if (dimid) *dimid = s->ndims;
  s->ndims++;
  tsr__name_index_added(&s->dim_index, s->dims, sizeof *s->dims, s->ndims);
  return 0;
}

int tsr__schema_find_var(const tsr__schema *s, const char *name) {
  return tsr__name_index_find(s->var_index, s->vars, sizeof *s->vars, s->nvars, name);
}

int tsr__schema_add_var(tsr__schema *s, const char *name, tsr_type type, int ndims,
                        const int dimids[], int *varid) {
  if (!name_ok(name) || ndims < 0 || ndims > TSR_MAX_DIMS || (ndims > 0 && !dimids))
    return TSR_EINVAL;
  if (!tsr__type_in_format(type, s->format)) return TSR_ETYPE;
  if (tsr__schema_find_var(s, name) >= 0) return TSR_ENAME;
  int is_record = 0;
  for (int i = 0; i < ndims; i++) {
    if (dimids[i] < 0 || dimids[i] >= s->ndims) return TSR_EBADID;
    if (s->dims[dimids[i]].len == TSR_UNLIMITED) {
      if (i != 0) return TSR_EINVAL; /* the record dimension must come first */
      is_record = 1;
    }
  }
  tsr__var *vars = room_for_one(s->vars, &s->var_cap, s->nvars, sizeof *vars);
  if (!vars) return TSR_ENOMEM;
  s->vars = vars;
  tsr__var *v = &s->vars[s->nvars];
  memset(v, 0, sizeof *v);
  strcpy(v->name, name);
  v->type = type;
  v->ndims = ndims;
  for (int i = 0; i < ndims; i++) v->dimids[i] = dimids[i];
  v->is_record = is_record;
  if (varid) *varid = s->nvars;
  s->nvars++;
  tsr__name_index_added(&s->var_index, s->vars, sizeof *s->vars, s->nvars);
  return 0;
}

int tsr__schema_put_att(tsr__schema *s, int varid, const char *name, tsr_type type, size_t n,
                        const void *values) {
  if (!name_ok(name) || (n > 0 && !values)) return TSR_EINVAL;
  if (!tsr__type_in_format(type, s->format)) return TSR_ETYPE;
  if (varid != TSR_GLOBAL && (varid < 0 || varid >= s->nvars)) return TSR_EBADID;
  if (varid != TSR_GLOBAL && strcmp(name, "_FillValue") == 0 &&
      (type != s->vars[varid].type || n != 1))
    return TSR_ETYPE;
  tsr__att **atts = varid == TSR_GLOBAL ? &s->gatts : &s->vars[varid].atts;
  int *natts = varid == TSR_GLOBAL ? &s->ngatts : &s->vars[varid].natts;
  size_t bytes = n * tsr__type_size(type);
  void *copy = malloc(bytes ? bytes : 1);
  if (!copy) return TSR_ENOMEM;
  if (bytes) memcpy(copy, values, bytes);
  for (int a = 0; a < *natts; a++) {
    if (strcmp((*atts)[a].name, name) == 0) { /* redefinition replaces, as in NetCDF */
      free((*atts)[a].values);
      (*atts)[a].type = type;
      (*atts)[a].n = n;
      (*atts)[a].values = copy;
      return 0;
    }
  }
  tsr__att *na = realloc(*atts, (size_t)(*natts + 1) * sizeof *na);
  if (!na) {
    free(copy);
    return TSR_ENOMEM;
  }
  *atts = na;
  memset(&na[*natts], 0, sizeof na[0]);
  strcpy(na[*natts].name, name);
  na[*natts].type = type;
  na[*natts].n = n;
  na[*natts].values = copy;
  (*natts)++;
  return 0;
}

int tsr__var_shape(const tsr__schema *s, int varid, int64_t shape[TSR_MAX_DIMS]) {
  const tsr__var *v = &s->vars[varid];
  int n = 0;
  for (int i = v->is_record ? 1 : 0; i < v->ndims; i++) shape[n++] = s->dims[v->dimids[i]].len;
  return n;
}

int64_t tsr__var_frame_elems(const tsr__schema *s, int varid) {
  int64_t shape[TSR_MAX_DIMS], n = 1;
  int nd = tsr__var_shape(s, varid, shape);
  for (int i = 0; i < nd; i++) n *= shape[i];
  return n;
}

const tsr__att *tsr__att_find(const tsr__att *a, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(a[i].name, name) == 0) return &a[i];
  return NULL;
}

void tsr__var_fill(const tsr__schema *s, int varid, void *out) {
  const tsr__var *v = &s->vars[varid];
  const tsr__att *fill = tsr__att_find(v->atts, v->natts, "_FillValue");
  if (fill && fill->type == v->type) {
    memcpy(out, fill->values, tsr__type_size(v->type));
    return;
  }
  /* NetCDF's default fill values (netcdf.h NC_FILL_*). */
  switch (v->type) {
  case TSR_BYTE: *(int8_t *)out = -127; break;
  case TSR_CHAR: *(char *)out = 0; break;
  case TSR_SHORT: *(int16_t *)out = -32767; break;
  case TSR_INT: *(int32_t *)out = -2147483647; break;
  case TSR_FLOAT: *(float *)out = 9.9692099683868690e+36f; break;
  case TSR_DOUBLE: *(double *)out = 9.9692099683868690e+36; break;
  case TSR_UBYTE: *(uint8_t *)out = 255; break;
  case TSR_USHORT: *(uint16_t *)out = 65535; break;
  case TSR_UINT: *(uint32_t *)out = 4294967295u; break;
  case TSR_INT64: *(int64_t *)out = -9223372036854775806LL; break;
  case TSR_UINT64: *(uint64_t *)out = 18446744073709551614ULL; break;
  }
}

/* ---- packing: a flat little buffer writer/reader, for shipping to servers ---- */

typedef struct {
  unsigned char *p;
  size_t len, cap;
  int err;
} packer;

static void put_bytes(packer *pk, const void *src, size_t n) {
  if (pk->err) return;
  if (pk->len + n > pk->cap) {
    size_t cap = pk->cap ? pk->cap * 2 : 1024;
    while (cap < pk->len + n) cap *= 2;
    unsigned char *np = realloc(pk->p, cap);
    if (!np) {
      pk->err = 1;
      return;
    }
    pk->p = np;
    pk->cap = cap;
  }
  memcpy(pk->p + pk->len, src, n);
  pk->len += n;
}

static void put_i64(packer *pk, int64_t v) { put_bytes(pk, &v, sizeof v); }

static void put_atts(packer *pk, const tsr__att *atts, int n) {
  put_i64(pk, n);
  for (int a = 0; a < n; a++) {
    put_bytes(pk, atts[a].name, TSR_MAX_NAME);
    put_i64(pk, atts[a].type);
    put_i64(pk, (int64_t)atts[a].n);
    put_bytes(pk, atts[a].values, atts[a].n * tsr__type_size(atts[a].type));
  }
}

int tsr__schema_pack(const tsr__schema *s, void **buf, size_t *len) {
  packer pk = {0};
  put_i64(&pk, s->format);
  put_i64(&pk, s->ndims);
  for (int d = 0; d < s->ndims; d++) {
    put_bytes(&pk, s->dims[d].name, TSR_MAX_NAME);
    put_i64(&pk, s->dims[d].len);
  }
  put_i64(&pk, s->nvars);
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    put_bytes(&pk, var->name, TSR_MAX_NAME);
    put_i64(&pk, var->type);
    put_i64(&pk, var->ndims);
    for (int i = 0; i < var->ndims; i++) put_i64(&pk, var->dimids[i]);
    put_i64(&pk, var->quantize_set);
    put_i64(&pk, var->quantize_mode);
    put_i64(&pk, var->quantize_nsd);
    put_atts(&pk, var->atts, var->natts);
  }
  put_atts(&pk, s->gatts, s->ngatts);
  if (pk.err) {
    free(pk.p);
    return TSR_ENOMEM;
  }
  *buf = pk.p;
  *len = pk.len;
  return 0;
}

typedef struct {
  const unsigned char *p;
  size_t len, pos;
  int err;
} unpacker;

static void get_bytes(unpacker *u, void *dst, size_t n) {
  if (u->err || u->pos + n > u->len) {
    u->err = 1;
    return;
  }
  memcpy(dst, u->p + u->pos, n);
  u->pos += n;
}

static int64_t get_i64(unpacker *u) {
  int64_t v = 0;
  get_bytes(u, &v, sizeof v);
  return v;
}

static int get_atts(unpacker *u, tsr__schema *s, int varid) {
  int64_t n = get_i64(u);
  for (int64_t a = 0; a < n && !u->err; a++) {
    char name[TSR_MAX_NAME];
    get_bytes(u, name, TSR_MAX_NAME);
    name[TSR_MAX_NAME - 1] = '\0';
    tsr_type type = (tsr_type)get_i64(u);
    size_t cnt = (size_t)get_i64(u), bytes = cnt * tsr__type_size(type);
    if (u->err || !tsr__type_valid(type) || bytes > u->len - u->pos) return TSR_EFORMAT;
    int rc = tsr__schema_put_att(s, varid, name, type, cnt, u->p + u->pos);
    u->pos += bytes;
    if (rc) return rc;
  }
  return u->err ? TSR_EFORMAT : 0;
}

int tsr__schema_unpack(const void *buf, size_t len, tsr__schema *s) {
  unpacker u = {buf, len, 0, 0};
  tsr__schema_init(s);
  int rc = 0;
  s->format = (int)get_i64(&u);
  int64_t nd = get_i64(&u);
  for (int64_t d = 0; d < nd && !rc && !u.err; d++) {
    char name[TSR_MAX_NAME];
    get_bytes(&u, name, TSR_MAX_NAME);
    name[TSR_MAX_NAME - 1] = '\0';
    rc = tsr__schema_add_dim(s, name, get_i64(&u), NULL);
  }
  int64_t nv = get_i64(&u);
  for (int64_t v = 0; v < nv && !rc && !u.err; v++) {
    char name[TSR_MAX_NAME];
    int dimids[TSR_MAX_DIMS];
    get_bytes(&u, name, TSR_MAX_NAME);
    name[TSR_MAX_NAME - 1] = '\0';
    tsr_type type = (tsr_type)get_i64(&u);
    int64_t n = get_i64(&u);
    if (n < 0 || n > TSR_MAX_DIMS) {
      rc = TSR_EFORMAT;
      break;
    }
    for (int i = 0; i < n; i++) dimids[i] = (int)get_i64(&u);
    int varid;
    rc = tsr__schema_add_var(s, name, type, (int)n, dimids, &varid);
    int64_t qset = get_i64(&u), qmode = get_i64(&u), qnsd = get_i64(&u);
    if (!rc) {
      s->vars[varid].quantize_set = (int)qset;
      s->vars[varid].quantize_mode = (int)qmode;
      s->vars[varid].quantize_nsd = (int)qnsd;
    }
    if (!rc) rc = get_atts(&u, s, varid);
  }
  if (!rc) rc = get_atts(&u, s, TSR_GLOBAL);
  if (!rc && u.err) rc = TSR_EFORMAT;
  if (rc) tsr__schema_free(s);
  return rc;
}
