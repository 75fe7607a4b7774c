/* Zarr v3 metadata documents (contract in backend/zarr_meta.h). */
#include "backend/zarr_meta.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

void tsr__zjson_free(tsr__zjson *j) {
  free(j->s);
  memset(j, 0, sizeof *j);
}

static void put(tsr__zjson *j, const char *p, size_t n) {
  if (j->oom) return;
  if (j->len + n + 1 > j->cap) {
    size_t cap = j->cap ? j->cap : 1024;
    while (cap < j->len + n + 1) cap *= 2;
    char *s = realloc(j->s, cap);
    if (!s) {
      j->oom = 1;
      return;
    }
    j->s = s;
    j->cap = cap;
  }
  memcpy(j->s + j->len, p, n);
  j->len += n;
  j->s[j->len] = '\0';
}

static void raw(tsr__zjson *j, const char *text) { put(j, text, strlen(text)); }

static void fmt(tsr__zjson *j, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void fmt(tsr__zjson *j, const char *f, ...) {
  char b[64];
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  if (n > 0) put(j, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. Overlong
 * forms, surrogates and code points past U+10FFFF are not valid. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (len == 0 || len > n || c > 0xf4) return 0;
  for (size_t i = 1; i < len; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (len == 3 && c == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
  if (len == 3 && c == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
  if (len == 4 && c == 0xf0 && p[1] < 0x90) return 0; /* overlong */
  if (len == 4 && c == 0xf4 && p[1] >= 0x90) return 0; /* past U+10FFFF */
  return len;
}

/* A JSON string of @p n bytes: quotes, backslashes and control characters
 * escaped; a byte that starts no valid UTF-8 sequence is taken as Latin-1
 * (\u00XX), so the document stays valid whatever a char attribute holds. */
static void str(tsr__zjson *j, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  put(j, "\"", 1);
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    size_t u = c >= 0x80 ? utf8_len(p + i, n - i) : 1;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(j, e, 2);
    } else if (c == '\n') raw(j, "\\n");
    else if (c == '\t') raw(j, "\\t");
    else if (c < 0x20 || c == 0x7f || u == 0) fmt(j, "\\u%04x", c);
    else {
      put(j, s + i, u);
      i += u;
      continue;
    }
    i++;
  }
  put(j, "\"", 1);
}

/* A double exactly (17 digits read back as the same value; a float widened
 * to double compares equal to the float); JSON has no NaN or infinities, so
 * those are the strings Zarr v3 uses for them. */
static void dbl(tsr__zjson *j, double v) {
  if (isnan(v)) raw(j, "\"NaN\"");
  else if (isinf(v)) raw(j, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else {
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    raw(j, b);
    if (!strpbrk(b, ".eE")) raw(j, ".0"); /* stays a float for every reader */
  }
}

/* Element i of @p values of type @p t as a JSON number. */
static void num(tsr__zjson *j, tsr_type t, const void *values, size_t i) {
  switch (t) {
  case TSR_BYTE: fmt(j, "%d", ((const int8_t *)values)[i]); break;
  case TSR_SHORT: fmt(j, "%d", ((const int16_t *)values)[i]); break;
  case TSR_INT: fmt(j, "%d", ((const int32_t *)values)[i]); break;
  case TSR_UBYTE: fmt(j, "%u", ((const uint8_t *)values)[i]); break;
  case TSR_USHORT: fmt(j, "%u", ((const uint16_t *)values)[i]); break;
  case TSR_UINT: fmt(j, "%u", ((const uint32_t *)values)[i]); break;
  case TSR_INT64: fmt(j, "%lld", (long long)((const int64_t *)values)[i]); break;
  case TSR_UINT64: fmt(j, "%llu", (unsigned long long)((const uint64_t *)values)[i]); break;
  case TSR_FLOAT: dbl(j, ((const float *)values)[i]); break;
  case TSR_DOUBLE: dbl(j, ((const double *)values)[i]); break;
  default: raw(j, "null");
  }
}

static void base64(tsr__zjson *j, const unsigned char *p, size_t n) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  put(j, "\"", 1);
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    char q[4] = {a[v >> 18], a[(v >> 12) & 63], i + 1 < n ? a[(v >> 6) & 63] : '=',
                 i + 2 < n ? a[v & 63] : '='};
    put(j, q, 4);
  }
  put(j, "\"", 1);
}

static double as_double(tsr_type t, const void *v) {
  return t == TSR_FLOAT ? ((const float *)v)[0] : t == TSR_DOUBLE ? ((const double *)v)[0] : 0;
}

/* _FillValue as xarray's Zarr backend reads it back (FillValueCoder): a
 * float as base64 of its little-endian double, bytes as base64. */
static void fill_attr(tsr__zjson *j, const tsr__att *a) {
  if (a->type == TSR_FLOAT || a->type == TSR_DOUBLE) {
    double d = as_double(a->type, a->values);
    unsigned char le[8];
    uint64_t bits;
    memcpy(&bits, &d, 8);
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(bits >> (8 * i));
    base64(j, le, 8);
  } else if (a->type == TSR_CHAR) {
    base64(j, a->values, a->n);
  } else {
    num(j, a->type, a->values, 0);
  }
}

static void attributes(tsr__zjson *j, const tsr__att *atts, int n) {
  raw(j, "{");
  for (int i = 0; i < n; i++) {
    const tsr__att *a = &atts[i];
    if (i) raw(j, ", ");
    str(j, a->name, strlen(a->name));
    raw(j, ": ");
    if (strcmp(a->name, "_FillValue") == 0 && a->n == 1) {
      fill_attr(j, a);
    } else if (a->type == TSR_CHAR) {
      size_t len = a->n;
      while (len > 0 && ((const char *)a->values)[len - 1] == '\0') len--; /* C padding */
      str(j, a->values, len);
    } else if (a->n == 1) {
      num(j, a->type, a->values, 0);
    } else {
      raw(j, "[");
      for (size_t k = 0; k < a->n; k++) {
        if (k) raw(j, ", ");
        num(j, a->type, a->values, k);
      }
      raw(j, "]");
    }
  }
  raw(j, "}");
}

const char *tsr__zarr_dtype(tsr_type t) {
  switch (t) {
  case TSR_BYTE: return "\"int8\"";
  case TSR_CHAR:
    return "{\"name\": \"null_terminated_bytes\", \"configuration\": {\"length_bytes\": 1}}";
  case TSR_SHORT: return "\"int16\"";
  case TSR_INT: return "\"int32\"";
  case TSR_FLOAT: return "\"float32\"";
  case TSR_DOUBLE: return "\"float64\"";
  case TSR_UBYTE: return "\"uint8\"";
  case TSR_USHORT: return "\"uint16\"";
  case TSR_UINT: return "\"uint32\"";
  case TSR_INT64: return "\"int64\"";
  case TSR_UINT64: return "\"uint64\"";
  default: return NULL;
  }
}

/* Whether JSON loses attribute @p a's type: numbers other than int and
 * double (float, short, ...) read back as int or double without a name. */
static int typed_att(const tsr__att *a) {
  return a->type != TSR_CHAR && a->type != TSR_INT && a->type != TSR_DOUBLE &&
         strcmp(a->name, "_FillValue") != 0;
}

/* `"NAME": {"att": "float32", ...}` for the attributes of one variable
 * ("" for the global ones) whose type JSON loses; nothing when none. */
static void att_types(tsr__zjson *j, const char *name, const tsr__att *atts, int n, int *first) {
  int any = 0;
  for (int i = 0; i < n; i++) {
    if (!typed_att(&atts[i])) continue;
    const char *dt = tsr__zarr_dtype(atts[i].type);
    raw(j, any ? ", " : *first ? "" : ", ");
    if (!any) {
      str(j, name, strlen(name));
      raw(j, ": {");
    }
    any = 1;
    str(j, atts[i].name, strlen(atts[i].name));
    fmt(j, ": %s", dt);
  }
  if (any) raw(j, "}"), *first = 0;
}

/* The NetCDF layout Zarr has no place for, for Tessera's reader
 * (zarr_read.c): the dimensions in file order with their lengths (0: the
 * record dimension), the record dimension's name, the arrays in file order,
 * and the types of the attributes JSON numbers do not say
 * ("attribute_types": {"": global ones, "T": T's, ...}).
 * xarray hides group attributes whose names start with "_nc". */
static void layout(tsr__zjson *j, const tsr__schema *s) {
  raw(j, "\"" TSR__ZARR_LAYOUT_ATT "\": {\"dimensions\": [");
  const char *rec = NULL;
  for (int d = 0; d < s->ndims; d++) {
    raw(j, d ? ", [" : "[");
    str(j, s->dims[d].name, strlen(s->dims[d].name));
    fmt(j, ", %lld]", (long long)s->dims[d].len);
    if (s->dims[d].len == TSR_UNLIMITED) rec = s->dims[d].name;
  }
  raw(j, "], \"unlimited\": ");
  if (rec) str(j, rec, strlen(rec));
  else raw(j, "null");
  raw(j, ", \"arrays\": [");
  for (int v = 0; v < s->nvars; v++) {
    if (v) raw(j, ", ");
    str(j, s->vars[v].name, strlen(s->vars[v].name));
  }
  raw(j, "], \"attribute_types\": {");
  int first = 1;
  att_types(j, "", s->gatts, s->ngatts, &first);
  for (int v = 0; v < s->nvars; v++)
    att_types(j, s->vars[v].name, s->vars[v].atts, s->vars[v].natts, &first);
  raw(j, "}}");
}

int tsr__zarr_group_json(const tsr__schema *s, tsr__zjson *out) {
  raw(out, "{\n  \"zarr_format\": 3,\n  \"node_type\": \"group\",\n  \"attributes\": ");
  attributes(out, s->gatts, s->ngatts);
  /* The layout goes last among the attributes: the object is reopened. */
  out->len--;
  raw(out, s->ngatts ? ", " : "");
  layout(out, s);
  raw(out, "}\n}\n");
  return out->oom ? TSR_ENOMEM : 0;
}

/* The chunk codecs: little-endian bytes (one-byte types take no endian),
 * then the compressor, if any. */
static void chunk_codecs(tsr__zjson *out, tsr_type t, const char *compressor) {
  raw(out, "[{\"name\": \"bytes\"");
  raw(out, tsr__type_size(t) > 1 ? ", \"configuration\": {\"endian\": \"little\"}}" : "}");
  if (compressor[0]) {
    raw(out, ", ");
    raw(out, compressor);
  }
  raw(out, "]");
}

int tsr__zarr_array_json(const tsr__schema *s, int v, int64_t nrec, const int64_t chunk[],
                         const int64_t inner[], const char *compressor, tsr__zjson *out) {
  const tsr__var *var = &s->vars[v];
  raw(out, "{\n  \"zarr_format\": 3,\n  \"node_type\": \"array\",\n  \"shape\": [");
  for (int i = 0; i < var->ndims; i++) {
    int64_t len = var->is_record && i == 0 ? nrec : s->dims[var->dimids[i]].len;
    fmt(out, "%s%lld", i ? ", " : "", (long long)len);
  }
  raw(out, "],\n  \"data_type\": ");
  raw(out, tsr__zarr_dtype(var->type));
  raw(out, ",\n  \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [");
  for (int i = 0; i < var->ndims; i++) fmt(out, "%s%lld", i ? ", " : "", (long long)chunk[i]);
  raw(out, "]}},\n  \"chunk_key_encoding\": {\"name\": \"default\", "
           "\"configuration\": {\"separator\": \"/\"}},\n  \"fill_value\": ");
  unsigned char fill[8] = {0};
  tsr__var_fill(s, v, fill);
  if (var->type == TSR_CHAR) base64(out, fill, fill[0] ? 1 : 0);
  else num(out, var->type, fill, 0);
  raw(out, ",\n  \"codecs\": ");
  if (inner) {
    /* A shard: the chunk grid's chunks above are shards of these inner
     * chunks; the index is little-endian bytes at the end, no crc32c. */
    raw(out, "[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [");
    for (int i = 0; i < var->ndims; i++) fmt(out, "%s%lld", i ? ", " : "", (long long)inner[i]);
    raw(out, "], \"codecs\": ");
    chunk_codecs(out, var->type, compressor);
    raw(out, ", \"index_codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": "
             "\"little\"}}], \"index_location\": \"end\"}}]");
  } else {
    chunk_codecs(out, var->type, compressor);
  }
  raw(out, ",\n  \"attributes\": ");
  attributes(out, var->atts, var->natts);
  raw(out, ",\n  \"dimension_names\": [");
  for (int i = 0; i < var->ndims; i++) {
    if (i) raw(out, ", ");
    const char *name = s->dims[var->dimids[i]].name;
    str(out, name, strlen(name));
  }
  raw(out, "]\n}\n");
  return out->oom ? TSR_ENOMEM : 0;
}
