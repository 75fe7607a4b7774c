/* Reading Zarr v3 stores (contract in backend/zarr_read.h; docs/zarr.md).
 *
 * The documents are parsed with zarr_json.c. What Zarr has no place for (the
 * record dimension, the order of dimensions and arrays) comes from the root
 * group's layout attribute, which Tessera's writer adds (zarr_meta.h); a
 * store without it reads with no record dimension, arrays in name order.
 * Attributes come back as JSON keeps them: text as char, integers as int
 * (int64 past 32 bits), other numbers as double; _FillValue in the
 * variable's type. A block is read chunk by chunk: a chunk file is read,
 * decompressed (gzip, zstd) and the block's part copied out; a missing chunk
 * file is the fill value, as the Zarr specification says. The last decoded
 * chunk is kept, so slabs read one after the other decode each chunk once. */
#include "backend/zarr_read.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/zarr_codec.h"
#include "backend/zarr_json.h"
#include "backend/zarr_meta.h"
#include "backend/zarr_shard.h"

#define LIB "Zarr"
#define RPATH 4400

enum { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD };

typedef struct {
  int nd;                      /* every dimension, record included */
  int64_t chunk[TSR_MAX_DIMS]; /* chunk lengths (a sharded array's inner chunks) */
  int64_t grid[TSR_MAX_DIMS];  /* chunks along each (record: unused) */
  int64_t celems;
  int codec, swap;
  int sharded, index_end, index_crc; /* sharding_indexed: where its index is */
  int64_t per[TSR_MAX_DIMS];         /* inner chunks per shard along each */
  char sep;
  unsigned char fill[8];
} rvar;

struct tsr__zreader {
  char *path;
  int nvars;
  tsr__bvar *vars;
  rvar *z;
  int64_t nrec;
  unsigned char *raw, *chunk;
  size_t rawcap, chunkcap;
  int cvar; /* the decoded chunk: variable (-1: none), its key */
  int64_t ckey[TSR_MAX_DIMS];
  int svar; /* the shard file in raw: variable (-1: none, or raw holds a chunk), its key */
  int64_t skey[TSR_MAX_DIMS];
  size_t slen; /* its bytes (0: no file, every inner chunk the fill value) */
  void *scratch;
  size_t scratch_cap;
  const tsr__zj *atypes; /* the layout's attribute_types, while describing */
};

static int read_whole(const char *path, unsigned char **buf, size_t *cap, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  *len = 0;
  for (;;) {
    if (*len + 65536 > *cap) {
      size_t c = *cap ? 2 * *cap : 1 << 17;
      while (c < *len + 65536) c *= 2;
      unsigned char *p = realloc(*buf, c);
      if (!p) return fclose(fp), errno = ENOMEM, -1;
      *buf = p, *cap = c;
    }
    size_t n = fread(*buf + *len, 1, *cap - *len, fp);
    *len += n;
    if (n == 0) break;
  }
  int bad = ferror(fp);
  fclose(fp);
  return bad ? (errno = EIO, -1) : 0;
}

static int parse_doc(const char *path, tsr__zj *doc, tsr__berr *err) {
  unsigned char *buf = NULL;
  size_t cap = 0, len = 0;
  if (read_whole(path, &buf, &cap, &len)) {
    int e = errno;
    free(buf);
    return tsr__berr_plain(err, e == ENOENT ? TSR_EACCES : tsr__berr_from_errno(e), LIB,
                           "cannot read %s: %s", path, strerror(e));
  }
  char why[128];
  int rc = tsr__zj_parse((const char *)buf, len, doc, why, sizeof why);
  free(buf);
  if (rc) return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: not JSON: %s", path, why);
  return 0;
}

static int b64(const char *s, size_t n, unsigned char *out, size_t max) {
  static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  unsigned v = 0;
  int bits = 0;
  size_t k = 0;
  for (size_t i = 0; i < n && s[i] != '='; i++) {
    const char *p = strchr(a, s[i]);
    if (!p || !s[i]) return -1;
    v = v << 6 | (unsigned)(p - a);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (k < max) out[k] = (unsigned char)(v >> bits);
      k++;
    }
  }
  return (int)k;
}

/* A JSON number or Zarr's float strings as a double. */
static int as_double(const tsr__zj *j, double *d) {
  if (j->type == TSR__ZJ_NUM) return *d = j->num, 0;
  if (j->type != TSR__ZJ_STR) return -1;
  if (!strcmp(j->str, "NaN")) *d = NAN;
  else if (!strcmp(j->str, "Infinity")) *d = INFINITY;
  else if (!strcmp(j->str, "-Infinity")) *d = -INFINITY;
  else return -1;
  return 0;
}

static void store(tsr_type t, double d, long long i, int is_int, void *out) {
  switch (t) {
  case TSR_BYTE: *(int8_t *)out = (int8_t)i; break;
  case TSR_UBYTE: *(uint8_t *)out = (uint8_t)i; break;
  case TSR_SHORT: *(int16_t *)out = (int16_t)i; break;
  case TSR_USHORT: *(uint16_t *)out = (uint16_t)i; break;
  case TSR_INT: *(int32_t *)out = (int32_t)i; break;
  case TSR_UINT: *(uint32_t *)out = (uint32_t)i; break;
  case TSR_INT64: *(int64_t *)out = (int64_t)i; break;
  case TSR_UINT64: *(uint64_t *)out = (uint64_t)i; break;
  case TSR_FLOAT: *(float *)out = is_int ? (float)i : (float)d; break;
  case TSR_DOUBLE: *(double *)out = is_int ? (double)i : d; break;
  default: break;
  }
}

/* The fill_value of an array of type @p t (8 bytes, zeros where absent). */
static int fill_of(const tsr__zj *f, tsr_type t, unsigned char out[8]) {
  memset(out, 0, 8);
  if (!f || f->type == TSR__ZJ_NULL) return 0;
  if (t == TSR_CHAR) {
    if (f->type == TSR__ZJ_STR) return b64(f->str, f->len, out, 1) < 0 ? -1 : 0;
    if (f->type == TSR__ZJ_NUM) out[0] = (unsigned char)f->num;
    return 0;
  }
  if (f->type == TSR__ZJ_STR && !strncmp(f->str, "0x", 2) && (t == TSR_FLOAT || t == TSR_DOUBLE)) {
    unsigned long long bits = strtoull(f->str + 2, NULL, 16);
    if (t == TSR_FLOAT) {
      uint32_t b = (uint32_t)bits;
      memcpy(out, &b, 4);
    } else {
      memcpy(out, &bits, 8);
    }
    return 0;
  }
  double d;
  if (as_double(f, &d)) return -1;
  store(t, d, f->type == TSR__ZJ_NUM && f->is_int ? strtoll(f->str, NULL, 10) : 0,
        f->type == TSR__ZJ_NUM && f->is_int, out);
  if (t == TSR_UINT64 && f->is_int) {
    uint64_t u = strtoull(f->str, NULL, 10);
    memcpy(out, &u, 8);
  }
  return 0;
}

static int type_of(const tsr__zj *dt, tsr_type *t) {
  static const struct { const char *n; tsr_type t; } names[] = {
      {"int8", TSR_BYTE},    {"int16", TSR_SHORT},   {"int32", TSR_INT},     {"int64", TSR_INT64},
      {"uint8", TSR_UBYTE},  {"uint16", TSR_USHORT}, {"uint32", TSR_UINT},   {"uint64", TSR_UINT64},
      {"float32", TSR_FLOAT}, {"float64", TSR_DOUBLE}};
  if (dt && dt->type == TSR__ZJ_STR) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (!strcmp(dt->str, names[i].n)) return *t = names[i].t, 0;
    return -1;
  }
  const tsr__zj *n = tsr__zj_get(dt, "name"), *c = tsr__zj_get(dt, "configuration");
  const tsr__zj *lb = tsr__zj_get(c, "length_bytes");
  if (n && n->type == TSR__ZJ_STR && !strcmp(n->str, "null_terminated_bytes") && lb &&
      lb->type == TSR__ZJ_NUM && lb->num == 1)
    return *t = TSR_CHAR, 0;
  return -1;
}

/* One attribute of @p varid (-1: global) from its JSON value; values of a
 * kind NetCDF has no attribute for (objects, mixed lists) are left out.
 * @p types: the layout's attribute_types entry of this variable (may be
 * NULL), which names the NetCDF type of a number that JSON cannot tell
 * (a float attribute, a short), so it reads back in its own type. */
static int put_json_att(tsr__schema *s, int varid, tsr_type vtype, const tsr__zj *a,
                        const tsr__zj *types) {
  if (!strcmp(a->key, TSR__ZARR_LAYOUT_ATT)) return 0;
  if (!strcmp(a->key, "_FillValue") && varid >= 0) {
    unsigned char f[8] = {0};
    if (a->type == TSR__ZJ_STR && vtype != TSR_CHAR) { /* base64 of a little-endian double */
      unsigned char le[8];
      if (b64(a->str, a->len, le, 8) != 8) return 0;
      uint64_t bits = 0;
      for (int i = 7; i >= 0; i--) bits = bits << 8 | le[i];
      double d;
      memcpy(&d, &bits, 8);
      store(vtype, d, 0, 0, f);
    } else if (a->type == TSR__ZJ_STR) {
      if (b64(a->str, a->len, f, 1) != 1) return 0;
    } else if (fill_of(a, vtype, f)) {
      return 0;
    }
    return tsr__schema_put_att(s, varid, a->key, vtype, 1, f);
  }
  if (a->type == TSR__ZJ_STR) return tsr__schema_put_att(s, varid, a->key, TSR_CHAR, a->len, a->str);
  const tsr__zj *v = a->type == TSR__ZJ_ARR ? a->kids : a;
  int n = a->type == TSR__ZJ_ARR ? a->nkids : 1, ints = 1, big = 0;
  if (n == 0) return 0;
  for (int i = 0; i < n; i++) {
    double d;
    if (v[i].type == TSR__ZJ_TRUE || v[i].type == TSR__ZJ_FALSE) continue;
    if (as_double(&v[i], &d)) return 0;
    if (v[i].type != TSR__ZJ_NUM || !v[i].is_int) ints = 0;
    else if (fabs(v[i].num) > 2147483647.0) big = 1;
  }
  tsr_type t = ints ? (big ? TSR_INT64 : TSR_INT) : TSR_DOUBLE, named;
  if (types && !type_of(tsr__zj_get(types, a->key), &named)) t = named;
  size_t es = tsr__type_size(t);
  unsigned char *vals = malloc((size_t)n * es);
  if (!vals) return TSR_ENOMEM;
  for (int i = 0; i < n; i++) {
    double d = v[i].type == TSR__ZJ_TRUE ? 1 : 0;
    long long q = (long long)d;
    if (v[i].type != TSR__ZJ_TRUE && v[i].type != TSR__ZJ_FALSE) {
      as_double(&v[i], &d);
      q = v[i].type == TSR__ZJ_NUM && v[i].is_int ? strtoll(v[i].str, NULL, 10) : 0;
    }
    store(t, d, q, ints, vals + (size_t)i * es);
  }
  int rc = tsr__schema_put_att(s, varid, a->key, t, (size_t)n, vals);
  free(vals);
  return rc;
}

static int dim_id(tsr__schema *s, const char *name, int64_t len, int add) {
  for (int d = 0; d < s->ndims; d++)
    if (!strcmp(s->dims[d].name, name)) return d;
  int id = -1;
  if (add && tsr__schema_add_dim(s, name, len, &id)) return -1;
  return id;
}

static int int_list(const tsr__zj *l, int64_t *out, int max) {
  if (!l || l->type != TSR__ZJ_ARR || l->nkids > max) return -1;
  for (int i = 0; i < l->nkids; i++) {
    if (l->kids[i].type != TSR__ZJ_NUM || l->kids[i].num < 0) return -1;
    out[i] = (int64_t)l->kids[i].num;
  }
  return l->nkids;
}

/* A chunk's codec list: `bytes` (either endian), then gzip or zstd or
 * nothing. 0, or -1 for a list this reader cannot decode. */
static int chunk_codecs(rvar *z, const tsr__zj *codecs, tsr_type t) {
  if (!codecs || codecs->type != TSR__ZJ_ARR || codecs->nkids < 1 || codecs->nkids > 2) return -1;
  for (int i = 0; i < codecs->nkids; i++) {
    const tsr__zj *cn = tsr__zj_get(&codecs->kids[i], "name");
    const tsr__zj *en = tsr__zj_get(tsr__zj_get(&codecs->kids[i], "configuration"), "endian");
    if (!cn || cn->type != TSR__ZJ_STR) return -1;
    if (i == 0 && !strcmp(cn->str, "bytes")) {
      const uint16_t one = 1;
      int big_host = *(const unsigned char *)&one == 0;
      int big = en && en->type == TSR__ZJ_STR && !strcmp(en->str, "big");
      z->swap = big != big_host && tsr__type_size(t) > 1;
    } else if (i == 1 && !strcmp(cn->str, "gzip")) z->codec = CODEC_GZIP;
    else if (i == 1 && !strcmp(cn->str, "zstd") && tsr__zarr_zstd_built()) z->codec = CODEC_ZSTD;
    else return -1;
  }
  return 0;
}

/* sharding_indexed's configuration @p conf for shards of @p shard (@p nd
 * lengths): inner chunks that divide the shard, their codecs as
 * chunk_codecs takes them, an index of little-endian bytes (on a
 * big-endian host too: the index is read byte by byte) with or without a
 * crc32c (not verified), at the end or the start. 0, or -1. */
static int shard_codec(rvar *z, const tsr__zj *conf, tsr_type t, const int64_t shard[], int nd) {
  int64_t inner[TSR_MAX_DIMS];
  if (int_list(tsr__zj_get(conf, "chunk_shape"), inner, TSR_MAX_DIMS) != nd) return -1;
  for (int i = 0; i < nd; i++) {
    if (inner[i] < 1 || shard[i] % inner[i] != 0) return -1;
    z->per[i] = shard[i] / inner[i];
  }
  if (chunk_codecs(z, tsr__zj_get(conf, "codecs"), t)) return -1;
  const tsr__zj *ic = tsr__zj_get(conf, "index_codecs"), *loc = tsr__zj_get(conf, "index_location");
  if (!ic || ic->type != TSR__ZJ_ARR || ic->nkids < 1 || ic->nkids > 2) return -1;
  const tsr__zj *b = tsr__zj_get(&ic->kids[0], "name");
  const tsr__zj *en = tsr__zj_get(tsr__zj_get(&ic->kids[0], "configuration"), "endian");
  const tsr__zj *c = ic->nkids == 2 ? tsr__zj_get(&ic->kids[1], "name") : NULL;
  if (!b || b->type != TSR__ZJ_STR || strcmp(b->str, "bytes") ||
      (en && (en->type != TSR__ZJ_STR || strcmp(en->str, "little"))) ||
      (ic->nkids == 2 && (!c || c->type != TSR__ZJ_STR || strcmp(c->str, "crc32c"))))
    return -1;
  if (loc && (loc->type != TSR__ZJ_STR || (strcmp(loc->str, "end") && strcmp(loc->str, "start"))))
    return -1;
  z->sharded = 1;
  z->index_crc = ic->nkids == 2;
  z->index_end = !loc || !strcmp(loc->str, "end");
  return 0;
}

/* Array @p name: added to @p s (or left out, *vid -1) with its chunking in @p z. */
static int add_array(tsr__zreader *r, tsr__schema *s, const char *name, int have_layout,
                     tsr__berr *err) {
  char p[RPATH];
  snprintf(p, sizeof p, "%s/%s/zarr.json", r->path, name);
  tsr__zj doc;
  int rc = parse_doc(p, &doc, err);
  if (rc) return rc;
  const tsr__zj *nt = tsr__zj_get(&doc, "node_type");
  int64_t shape[TSR_MAX_DIMS], chunk[TSR_MAX_DIMS];
  int nd = int_list(tsr__zj_get(&doc, "shape"), shape, TSR_MAX_DIMS);
  const tsr__zj *cg = tsr__zj_get(&doc, "chunk_grid"), *ck = tsr__zj_get(&doc, "chunk_key_encoding");
  const tsr__zj *dn = tsr__zj_get(&doc, "dimension_names"), *codecs = tsr__zj_get(&doc, "codecs");
  const tsr__zj *sep = tsr__zj_get(tsr__zj_get(ck, "configuration"), "separator");
  const tsr__zj *ckn = tsr__zj_get(ck, "name"), *cgn = tsr__zj_get(cg, "name");
  tsr_type t;
  rvar z;
  memset(&z, 0, sizeof z);
  z.sep = sep && sep->type == TSR__ZJ_STR && sep->len == 1 ? sep->str[0] : '/';
  /* What this reader cannot read is left out, as NetCDF's readers leave out
   * types Tessera has none for. */
  int ok = nt && nt->type == TSR__ZJ_STR && !strcmp(nt->str, "array") && nd >= 0 &&
           !type_of(tsr__zj_get(&doc, "data_type"), &t) && cgn && cgn->type == TSR__ZJ_STR &&
           !strcmp(cgn->str, "regular") &&
           int_list(tsr__zj_get(tsr__zj_get(cg, "configuration"), "chunk_shape"), chunk,
                    TSR_MAX_DIMS) == nd &&
           (!ck || (ckn && ckn->type == TSR__ZJ_STR && !strcmp(ckn->str, "default"))) && dn &&
           dn->type == TSR__ZJ_ARR && dn->nkids == nd && codecs && codecs->type == TSR__ZJ_ARR;
  const tsr__zj *c0 = ok && codecs->nkids == 1 ? tsr__zj_get(&codecs->kids[0], "name") : NULL;
  if (c0 && c0->type == TSR__ZJ_STR && !strcmp(c0->str, "sharding_indexed"))
    ok = !shard_codec(&z, tsr__zj_get(&codecs->kids[0], "configuration"), t, chunk, nd);
  else if (ok)
    ok = !chunk_codecs(&z, codecs, t);
  int dimids[TSR_MAX_DIMS];
  for (int i = 0; ok && i < nd; i++) {
    if (dn->kids[i].type != TSR__ZJ_STR || chunk[i] < 1) {
      ok = 0;
      break;
    }
    dimids[i] = dim_id(s, dn->kids[i].str, shape[i], !have_layout);
    if (dimids[i] < 0) ok = 0;
    else if (s->dims[dimids[i]].len == TSR_UNLIMITED) {
        /* the record dimension first, a frame a chunk (a shard) */
      if (i > 0 || chunk[0] != 1 || (z.sharded && z.per[0] != 1)) ok = 0;
    } else if (s->dims[dimids[i]].len != shape[i]) {
      ok = 0;
    }
  }
  int vid = -1;
  if (ok) rc = tsr__schema_add_var(s, name, t, nd, dimids, &vid);
  if (!rc && vid >= 0) {
    int rec = s->vars[vid].is_record;
    if (rec && shape[0] > r->nrec) r->nrec = shape[0];
    z.nd = nd;
    z.celems = 1;
    for (int i = 0; i < nd; i++) {
      if (z.sharded) chunk[i] /= z.per[i]; /* the inner chunk */
      z.chunk[i] = chunk[i];
      z.grid[i] = (shape[i] + chunk[i] - 1) / chunk[i];
      z.celems *= chunk[i];
    }
    if (fill_of(tsr__zj_get(&doc, "fill_value"), t, z.fill)) memset(z.fill, 0, 8);
    r->z[vid] = z;
    const tsr__zj *atts = tsr__zj_get(&doc, "attributes");
    for (int i = 0; atts && atts->type == TSR__ZJ_OBJ && i < atts->nkids && !rc; i++)
      rc = put_json_att(s, vid, t, &atts->kids[i], tsr__zj_get(r->atypes, name));
    if (rc) rc = tsr__berr_plain(err, rc, LIB, "%s: cannot keep the attributes of %s", r->path, name);
  } else if (rc) {
    rc = tsr__berr_plain(err, rc, LIB, "%s: cannot describe array %s", r->path, name);
  }
  tsr__zj_free(&doc);
  return rc;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Stores without the layout attribute: the arrays are the subdirectories
 * with a zarr.json, in name order. */
static int arrays_by_name(const char *path, char ***names, int *n) {
  DIR *d = opendir(path);
  if (!d) return -1;
  struct dirent *e;
  int cap = 0;
  *n = 0;
  *names = NULL;
  while ((e = readdir(d))) {
    char p[RPATH];
    struct stat sb;
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s/zarr.json", path, e->d_name);
    if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 32;
      char **q = realloc(*names, (size_t)cap * sizeof *q);
      if (!q) break;
      *names = q;
    }
    if (!((*names)[*n] = strdup(e->d_name))) break;
    (*n)++;
  }
  closedir(d);
  if (*n) qsort(*names, (size_t)*n, sizeof **names, by_name);
  return 0;
}

static int describe(tsr__zreader *r, tsr__schema *s, tsr__berr *err) {
  char p[RPATH];
  snprintf(p, sizeof p, "%s/zarr.json", r->path);
  tsr__zj root;
  int rc = parse_doc(p, &root, err);
  if (rc) return rc;
  const tsr__zj *nt = tsr__zj_get(&root, "node_type"), *zf = tsr__zj_get(&root, "zarr_format");
  const tsr__zj *atts = tsr__zj_get(&root, "attributes");
  const tsr__zj *lay = tsr__zj_get(atts, TSR__ZARR_LAYOUT_ATT);
  const tsr__zj *dims = tsr__zj_get(lay, "dimensions"), *arrs = tsr__zj_get(lay, "arrays");
  const tsr__zj *unl = tsr__zj_get(lay, "unlimited");
  r->atypes = tsr__zj_get(lay, "attribute_types");
  if (!nt || nt->type != TSR__ZJ_STR || strcmp(nt->str, "group") || !zf || zf->num != 3) {
    tsr__zj_free(&root);
    return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s is no Zarr v3 group", p);
  }
  int have = dims && dims->type == TSR__ZJ_ARR && arrs && arrs->type == TSR__ZJ_ARR;
  for (int i = 0; have && i < dims->nkids && !rc; i++) {
    const tsr__zj *d = &dims->kids[i];
    if (d->type != TSR__ZJ_ARR || d->nkids != 2 || d->kids[0].type != TSR__ZJ_STR ||
        d->kids[1].type != TSR__ZJ_NUM) {
      rc = tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: a bad dimension in %s", p,
                           TSR__ZARR_LAYOUT_ATT);
      break;
    }
    int rec = unl && unl->type == TSR__ZJ_STR && !strcmp(unl->str, d->kids[0].str);
    int id;
    rc = tsr__schema_add_dim(s, d->kids[0].str, rec ? TSR_UNLIMITED : (int64_t)d->kids[1].num, &id);
  }
  for (int i = 0; atts && atts->type == TSR__ZJ_OBJ && i < atts->nkids && !rc; i++)
    rc = put_json_att(s, -1, TSR_CHAR, &atts->kids[i], tsr__zj_get(r->atypes, ""));
  char **names = NULL;
  int n = 0;
  if (!rc && !have && arrays_by_name(r->path, &names, &n))
    rc = tsr__berr_plain(err, TSR_EACCES, LIB, "cannot list %s: %s", r->path, strerror(errno));
  int total = have ? arrs->nkids : n;
  if (!rc && !(r->z = calloc((size_t)(total > 0 ? total : 1), sizeof *r->z)))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", r->path);
  for (int i = 0; i < total && !rc; i++) {
    const char *name = have ? arrs->kids[i].str : names[i];
    if (!name || strchr(name, '/') || !strcmp(name, "..")) continue;
    rc = add_array(r, s, name, have, err);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  r->atypes = NULL;
  tsr__zj_free(&root);
  s->format = 17;
  return rc;
}

int tsr__zarr_read_open(const char *path, tsr__schema *s, tsr__zreader **out, tsr__berr *err) {
  *out = NULL;
  tsr__schema_init(s);
  tsr__zreader *r = calloc(1, sizeof *r);
  int rc = r && (r->path = strdup(path)) ? 0 : TSR_ENOMEM;
  if (rc) rc = tsr__berr_plain(err, rc, LIB, "out of memory (%s)", path);
  if (!rc && strlen(path) > RPATH - TSR_MAX_NAME - 24 * (TSR_MAX_DIMS + 1) - 64)
    rc = tsr__berr_plain(err, TSR_EACCES, LIB, "store path too long (%s)", path);
  if (!rc) rc = describe(r, s, err);
  if (!rc && tsr__bvars_from_schema(s, &r->vars))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", path);
  if (rc) {
    tsr__zarr_read_free(r);
    tsr__schema_free(s);
    tsr__schema_init(s);
    return rc;
  }
  r->nvars = s->nvars;
  r->cvar = r->svar = -1;
  *out = r;
  return 0;
}

void tsr__zarr_read_free(tsr__zreader *r) {
  if (!r) return;
  free(r->path);
  free(r->vars);
  free(r->z);
  free(r->raw);
  free(r->chunk);
  free(r->scratch);
  free(r);
}

int64_t tsr__zarr_read_records(const tsr__zreader *r) { return r->nrec; }

/* The encoded bytes of chunk @p key of @p varid (*raw NULL: no data, the
 * fill value), read into r->raw; @p p gets the file's path. A sharded
 * array's shard file is read once and kept while its inner chunks are
 * read one after the other. */
static int chunk_bytes(tsr__zreader *r, int varid, const int64_t key[], char p[RPATH],
                       const unsigned char **raw, size_t *len, tsr__berr *err) {
  const rvar *z = &r->z[varid];
  int64_t file[TSR_MAX_DIMS], pos = 0, ninner = 1;
  for (int i = 0; i < z->nd; i++) {
    int64_t per = z->sharded ? z->per[i] : 1;
    file[i] = key[i] / per;
    pos = pos * per + key[i] % per;
    ninner *= per;
  }
  int w = snprintf(p, RPATH, "%s/%s/c", r->path, r->vars[varid].name);
  for (int i = 0; i < z->nd; i++)
    w += snprintf(p + w, RPATH - (size_t)w, "%c%lld", z->sep, (long long)file[i]);
  int kept = z->sharded && r->svar == varid &&
             !memcmp(r->skey, file, sizeof(int64_t) * (size_t)z->nd);
  if (!kept) {
    r->svar = -1;
    if (read_whole(p, &r->raw, &r->rawcap, &r->slen)) {
      if (errno != ENOENT)
        return tsr__berr_plain(err, tsr__berr_from_errno(errno), LIB, "cannot read %s: %s", p,
                               strerror(errno));
      r->slen = 0;
      *raw = NULL;
      if (!z->sharded) return 0;
    }
    if (z->sharded) {
      r->svar = varid;
      memcpy(r->skey, file, sizeof(int64_t) * (size_t)z->nd);
    }
  }
  *raw = r->raw, *len = r->slen;
  if (!z->sharded) return 0;
  if (r->slen == 0) return *raw = NULL, 0; /* no shard file */
  uint64_t off, n;
  int at = tsr__zarr_shard_find(r->raw, r->slen, ninner, pos, z->index_end, z->index_crc, &off, &n);
  if (at < 0)
    return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: a shard index that does not fit its %zu "
                           "bytes", p, r->slen);
  if (at > 0) return *raw = NULL, 0;
  *raw = r->raw + off, *len = (size_t)n;
  return 0;
}

/* Chunk @p key (every dimension's chunk coordinate) of @p varid decoded into
 * r->chunk: little-endian values in C order, the fill value where no file. */
static int load_chunk(tsr__zreader *r, int varid, const int64_t key[], tsr__berr *err) {
  const rvar *z = &r->z[varid];
  if (r->cvar == varid && !memcmp(r->ckey, key, sizeof(int64_t) * (size_t)z->nd)) return 0;
  r->cvar = -1;
  size_t es = r->vars[varid].esize, n = (size_t)z->celems * es;
  if (n > r->chunkcap) {
    unsigned char *p = realloc(r->chunk, n);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for a chunk (%s)", r->path);
    r->chunk = p, r->chunkcap = n;
  }
  char p[RPATH];
  const unsigned char *raw = NULL;
  size_t len = 0;
  int rc = chunk_bytes(r, varid, key, p, &raw, &len, err);
  if (rc) return rc;
  if (!raw) {
    for (size_t i = 0; i < n; i += es) memcpy(r->chunk + i, z->fill, es);
  } else if (z->codec == CODEC_NONE) {
    if (len != n)
      return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: %zu bytes, expected %zu", p, len, n);
    memcpy(r->chunk, raw, n);
  } else if (z->codec == CODEC_ZSTD) {
    char why[128];
    if (tsr__zarr_unzstd(raw, len, r->chunk, n, why, sizeof why))
      return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: zstd: %s", p, why);
  } else {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 15 + 32) != Z_OK)
      return tsr__berr_plain(err, TSR_ENOMEM, LIB, "zlib: inflateInit2 failed (%s)", p);
    s.next_in = (Bytef *)raw;
    s.avail_in = (uInt)len;
    s.next_out = r->chunk;
    s.avail_out = (uInt)n;
    int st = inflate(&s, Z_FINISH);
    size_t got = s.total_out;
    inflateEnd(&s);
    if (st != Z_STREAM_END || got != n)
      return tsr__berr_plain(err, TSR_EFORMAT, LIB, "%s: gzip: %zu bytes, expected %zu (%s)", p,
                             got, n, s.msg ? s.msg : "bad data");
  }
  if (z->swap)
    for (size_t i = 0; i < n; i += es)
      for (size_t a = 0, b = es - 1; a < b; a++, b--) {
        unsigned char t = r->chunk[i + a];
        r->chunk[i + a] = r->chunk[i + b], r->chunk[i + b] = t;
      }
  r->cvar = varid;
  memcpy(r->ckey, key, sizeof(int64_t) * (size_t)z->nd);
  return 0;
}

int tsr__zarr_read_block(tsr__zreader *r, int varid, int64_t frame, const int64_t start[],
                         const int64_t count[], void *buf, tsr__memview mem, tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(r->vars, r->nvars, varid, frame, start, count, buf, mem, LIB, r->path,
                            &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0;
  size_t es = v->esize;
  unsigned char *dst = buf;
  if (mem.mshape) {
    if ((size_t)n * es > r->scratch_cap) {
      void *p = realloc(r->scratch, (size_t)n * es);
      if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to read %s", v->name);
      r->scratch = p, r->scratch_cap = (size_t)n * es;
    }
    dst = r->scratch;
  }
  /* The block in every dimension of the array (the record one a single frame). */
  const rvar *z = &r->z[varid];
  int nd = z->nd, rec = v->is_record;
  int64_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  if (rec) st[0] = frame, ct[0] = 1;
  for (int i = 0; i < v->nd; i++) st[rec + i] = start[i], ct[rec + i] = count[i];
  if (nd == 0) { /* a scalar: chunk c */
    int64_t none[1] = {0};
    rc = load_chunk(r, varid, none, err);
    if (!rc) memcpy(dst, r->chunk, es);
  }
  /* Every chunk the block meets, then the rows of their intersection. */
  int64_t c0[TSR_MAX_DIMS], c1[TSR_MAX_DIMS], key[TSR_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    c0[i] = key[i] = st[i] / z->chunk[i];
    c1[i] = (st[i] + ct[i] - 1) / z->chunk[i];
  }
  while (nd > 0 && !rc) {
    rc = load_chunk(r, varid, key, err);
    int64_t lo[TSR_MAX_DIMS], hi[TSR_MAX_DIMS], idx[TSR_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
      int64_t a = key[i] * z->chunk[i], b = a + z->chunk[i];
      lo[i] = st[i] > a ? st[i] : a;
      hi[i] = st[i] + ct[i] < b ? st[i] + ct[i] : b;
      idx[i] = lo[i];
    }
    int64_t seg = hi[nd - 1] - lo[nd - 1];
    while (!rc) {
      int64_t co = 0, bo = 0; /* offsets in the chunk and in the block */
      for (int i = 0; i < nd; i++) {
        co = co * z->chunk[i] + (idx[i] - key[i] * z->chunk[i]);
        bo = bo * ct[i] + (idx[i] - st[i]);
      }
      memcpy(dst + bo * (int64_t)es, r->chunk + co * (int64_t)es, (size_t)seg * es);
      int i = nd - 2;
      for (; i >= 0 && ++idx[i] == hi[i]; i--) idx[i] = lo[i];
      if (i < 0) break;
    }
    int i = nd - 1;
    for (; i >= 0 && ++key[i] > c1[i]; i--) key[i] = c0[i];
    if (i < 0) break;
  }
  if (!rc && mem.mshape) tsr__block_unpack(buf, dst, es, v->nd, count, mem);
  return rc;
}
