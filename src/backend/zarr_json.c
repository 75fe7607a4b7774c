/* JSON reader for Zarr documents (contract in backend/zarr_json.h). */
#include "backend/zarr_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *start, *p, *end;
  char *why;
  size_t whylen;
  int depth;
} parser;

static int fail(parser *ps, const char *what) {
  snprintf(ps->why, ps->whylen, "%s at byte %td", what, ps->p - ps->start);
  return -1;
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
    ps->p++;
}

static int hex4(const char *p, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                 : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99u;
    if (d > 15) return -1;
    *v = *v * 16 + d;
  }
  return 0;
}

static size_t put_utf8(char *o, unsigned c) {
  if (c < 0x80) return o[0] = (char)c, 1;
  if (c < 0x800) return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 63)), 2;
  if (c < 0x10000) {
    o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 63));
    o[2] = (char)(0x80 | (c & 63));
    return 3;
  }
  o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | ((c >> 12) & 63));
  o[2] = (char)(0x80 | ((c >> 6) & 63)), o[3] = (char)(0x80 | (c & 63));
  return 4;
}

/* A string at ps->p (after its opening quote) into a malloc'd buffer. */
static int string(parser *ps, char **out, size_t *len) {
  const char *q = ps->p;
  while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= ps->end) return fail(ps, "unterminated string");
  char *o = malloc((size_t)(q - ps->p) + 1), *w = o; /* unescaping only shrinks */
  if (!o) return fail(ps, "out of memory");
  while (ps->p < q) {
    char c = *ps->p++;
    if (c != '\\') {
      *w++ = c;
      continue;
    }
    c = *ps->p++;
    switch (c) {
    case 'n': *w++ = '\n'; break;
    case 't': *w++ = '\t'; break;
    case 'r': *w++ = '\r'; break;
    case 'b': *w++ = '\b'; break;
    case 'f': *w++ = '\f'; break;
    case 'u': {
      unsigned v, lo;
      if (q - ps->p < 4 || hex4(ps->p, &v)) return free(o), fail(ps, "bad \\u escape");
      ps->p += 4;
      if (v >= 0xd800 && v < 0xdc00 && q - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u' &&
          !hex4(ps->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
        v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
        ps->p += 6;
      }
      if (v >= 0x80 && v < 0x100) *w++ = (char)v; /* a raw byte (zarr_json.h) */
      else w += put_utf8(w, v);
      break;
    }
    default: *w++ = c; /* \" \\ \/ */
    }
  }
  ps->p = q + 1;
  *w = '\0';
  *out = o;
  *len = (size_t)(w - o);
  return 0;
}

static int value(parser *ps, tsr__zj *j);

static int push(parser *ps, tsr__zj *j, int *cap) {
  if (j->nkids == *cap) {
    int c = *cap ? 2 * *cap : 8;
    tsr__zj *k = realloc(j->kids, (size_t)c * sizeof *k);
    if (!k) return fail(ps, "out of memory");
    j->kids = k;
    *cap = c;
  }
  memset(&j->kids[j->nkids], 0, sizeof *j->kids);
  j->nkids++;
  return 0;
}

static int container(parser *ps, tsr__zj *j, char close) {
  int cap = 0;
  j->type = close == '}' ? TSR__ZJ_OBJ : TSR__ZJ_ARR;
  if (++ps->depth > 64) return fail(ps, "nested too deep");
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) return ps->p++, ps->depth--, 0;
  for (;;) {
    if (push(ps, j, &cap)) return -1;
    tsr__zj *k = &j->kids[j->nkids - 1];
    skip_ws(ps);
    if (close == '}') {
      size_t n;
      if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "expected a member name");
      ps->p++;
      if (string(ps, &k->key, &n)) return -1;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') return fail(ps, "expected ':'");
      ps->p++;
    }
    if (value(ps, k)) return -1;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) return ps->p++, ps->depth--, 0;
    return fail(ps, "expected ',' or the end of a list");
  }
}

static int value(parser *ps, tsr__zj *j) {
  skip_ws(ps);
  if (ps->p >= ps->end) return fail(ps, "unexpected end");
  char c = *ps->p;
  if (c == '{' || c == '[') return ps->p++, container(ps, j, c == '{' ? '}' : ']');
  if (c == '"') {
    ps->p++;
    j->type = TSR__ZJ_STR;
    return string(ps, &j->str, &j->len);
  }
  static const struct { const char *w; int t; } words[] = {
      {"null", TSR__ZJ_NULL}, {"true", TSR__ZJ_TRUE}, {"false", TSR__ZJ_FALSE}};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i].w);
    if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, words[i].w, n))
      return ps->p += n, j->type = words[i].t, 0;
  }
  const char *q = ps->p;
  while (q < ps->end && strchr("+-0123456789.eE", *q)) q++;
  if (q == ps->p) return fail(ps, "unexpected character");
  j->type = TSR__ZJ_NUM;
  j->len = (size_t)(q - ps->p);
  if (!(j->str = malloc(j->len + 1))) return fail(ps, "out of memory");
  memcpy(j->str, ps->p, j->len);
  j->str[j->len] = '\0';
  char *e;
  j->num = strtod(j->str, &e);
  if (*e) return fail(ps, "bad number");
  j->is_int = !strpbrk(j->str, ".eE");
  ps->p = q;
  return 0;
}

int tsr__zj_parse(const char *text, size_t n, tsr__zj *out, char *why, size_t whylen) {
  memset(out, 0, sizeof *out);
  parser ps = {text, text, text + n, why, whylen, 0};
  int rc = value(&ps, out);
  skip_ws(&ps);
  if (!rc && ps.p != ps.end) rc = fail(&ps, "text after the document");
  if (rc) tsr__zj_free(out);
  return rc;
}

void tsr__zj_free(tsr__zj *j) {
  if (!j) return;
  for (int i = 0; i < j->nkids; i++) tsr__zj_free(&j->kids[i]);
  free(j->kids);
  free(j->key);
  free(j->str);
  memset(j, 0, sizeof *j);
}

const tsr__zj *tsr__zj_get(const tsr__zj *j, const char *key) {
  if (!j || j->type != TSR__ZJ_OBJ) return NULL;
  for (int i = 0; i < j->nkids; i++)
    if (j->kids[i].key && !strcmp(j->kids[i].key, key)) return &j->kids[i];
  return NULL;
}
