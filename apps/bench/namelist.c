/* WRF namelist.input reader: a tokenizer and a small parser of Fortran
 * namelist groups (`&name ... /`). See namelist.h. */
#include "namelist.h"
#include "text_file.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { TK_GROUP, TK_END, TK_WORD, TK_STRING, TK_EQ, TK_COMMA, TK_EOF } tk_kind;

typedef struct {
  tk_kind kind;
  int line;
  char text[128];
} token;

typedef struct {
  const char *p;
  int line;
  const char *name;
  char *err;
  size_t errlen;
} lexer;

static int fail(char *err, size_t errlen, const char *name, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (err && errlen) {
    if (line > 0)
      snprintf(err, errlen, "%s:%d: %s", name, line, msg);
    else
      snprintf(err, errlen, "%s: %s", name, msg);
  }
  return -1;
}

static void copy_text(token *t, const char *s, size_t n) {
  if (n >= sizeof t->text) n = sizeof t->text - 1;
  memcpy(t->text, s, n);
  t->text[n] = '\0';
}

static int is_word_char(int c) {
  return c != '\0' && !isspace(c) && c != '=' && c != ',' && c != '/' && c != '!' &&
         c != '&' && c != '$' && c != '\'' && c != '"';
}

/* Next token; -1 on a lexical error. */
static int lex(lexer *lx, token *t) {
  for (;;) {
    while (*lx->p && isspace((unsigned char)*lx->p)) {
      if (*lx->p == '\n') lx->line++;
      lx->p++;
    }
    if (*lx->p == '!') {
      while (*lx->p && *lx->p != '\n') lx->p++;
      continue;
    }
    break;
  }
  t->line = lx->line;
  t->text[0] = '\0';
  char c = *lx->p;
  if (c == '\0') {
    t->kind = TK_EOF;
    return 0;
  }
  if (c == '&' || c == '$') {
    const char *s = ++lx->p;
    while (*lx->p && (isalnum((unsigned char)*lx->p) || *lx->p == '_')) lx->p++;
    if (lx->p == s)
      return fail(lx->err, lx->errlen, lx->name, t->line, "'%c' must be followed by a group name", c);
    copy_text(t, s, (size_t)(lx->p - s));
    for (char *q = t->text; *q; q++) *q = (char)tolower((unsigned char)*q);
    t->kind = strcmp(t->text, "end") == 0 ? TK_END : TK_GROUP;
    return 0;
  }
  if (c == '/') {
    lx->p++;
    t->kind = TK_END;
    return 0;
  }
  if (c == '=') {
    lx->p++;
    t->kind = TK_EQ;
    return 0;
  }
  if (c == ',' || c == ';') {
    lx->p++;
    t->kind = TK_COMMA;
    return 0;
  }
  if (c == '\'' || c == '"') {
    char buf[sizeof t->text];
    size_t n = 0;
    lx->p++;
    for (;;) {
      if (*lx->p == '\0' || *lx->p == '\n')
        return fail(lx->err, lx->errlen, lx->name, t->line, "unterminated string (missing %c)", c);
      if (*lx->p == c) {
        if (lx->p[1] == c) { /* doubled quote inside a string */
          lx->p++;
        } else {
          lx->p++;
          break;
        }
      }
      if (n + 1 < sizeof buf) buf[n++] = *lx->p;
      lx->p++;
    }
    copy_text(t, buf, n);
    t->kind = TK_STRING;
    return 0;
  }
  const char *s = lx->p;
  while (is_word_char((unsigned char)*lx->p)) lx->p++;
  if (lx->p == s)
    return fail(lx->err, lx->errlen, lx->name, t->line, "unexpected character '%c'", c);
  copy_text(t, s, (size_t)(lx->p - s));
  t->kind = TK_WORD;
  return 0;
}

typedef enum { NV_INT, NV_REAL, NV_LOGICAL } nv_type;

typedef struct {
  const char *group;
  const char *key;
  nv_type type;
  size_t offset;
  int per_domain; /* a max_domains list in WRF's registry: one column per domain */
} nl_entry;

#define E(g, k, t) {#g, #k, t, offsetof(bench_namelist, k), 0}
#define D(g, k, t) {#g, #k, t, offsetof(bench_namelist, k), 1}
static const nl_entry entries[] = {
    E(time_control, run_days, NV_INT),           E(time_control, run_hours, NV_INT),
    E(time_control, run_minutes, NV_INT),        E(time_control, run_seconds, NV_INT),
    D(time_control, start_year, NV_INT),         D(time_control, start_month, NV_INT),
    D(time_control, start_day, NV_INT),          D(time_control, start_hour, NV_INT),
    D(time_control, start_minute, NV_INT),       D(time_control, start_second, NV_INT),
    D(time_control, end_year, NV_INT),           D(time_control, end_month, NV_INT),
    D(time_control, end_day, NV_INT),            D(time_control, end_hour, NV_INT),
    D(time_control, end_minute, NV_INT),         D(time_control, end_second, NV_INT),
    D(time_control, history_interval, NV_INT),   D(time_control, history_interval_d, NV_INT),
    D(time_control, history_interval_h, NV_INT), D(time_control, history_interval_m, NV_INT),
    D(time_control, history_interval_s, NV_INT), D(time_control, frames_per_outfile, NV_INT),
    E(time_control, io_form_history, NV_INT),    E(time_control, restart_interval, NV_INT),
    E(time_control, restart, NV_LOGICAL),        E(time_control, nocolons, NV_LOGICAL),
    E(domains, max_dom, NV_INT),                 D(domains, e_we, NV_INT),
    D(domains, e_sn, NV_INT),                    D(domains, e_vert, NV_INT),
    E(domains, time_step, NV_INT),               E(domains, time_step_fract_num, NV_INT),
    E(domains, time_step_fract_den, NV_INT),     D(domains, dx, NV_REAL),
    D(domains, dy, NV_REAL),                     E(domains, nproc_x, NV_INT),
    E(domains, nproc_y, NV_INT),                 D(domains, parent_id, NV_INT),
    D(domains, parent_time_step_ratio, NV_INT),  E(namelist_quilt, nio_groups, NV_INT),
    E(namelist_quilt, nio_tasks_per_group, NV_INT),
};
#undef E
#undef D

static const nl_entry *find_entry(const char *group, const char *key) {
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (strcmp(entries[i].group, group) == 0 && strcmp(entries[i].key, key) == 0) return &entries[i];
  return NULL;
}

/* Fortran constants as a namelist may hold them (strings are tokens of their
 * own). Each returns 1 when the whole word matches. */
static int is_integer(const char *w) {
  if (*w == '+' || *w == '-') w++;
  if (!isdigit((unsigned char)*w)) return 0;
  while (isdigit((unsigned char)*w)) w++;
  return *w == '\0';
}

static int is_real(const char *w) {
  if (*w == '+' || *w == '-') w++;
  int digits = 0;
  while (isdigit((unsigned char)*w)) w++, digits++;
  if (*w == '.') {
    w++;
    while (isdigit((unsigned char)*w)) w++, digits++;
  }
  if (!digits) return 0;
  if (*w == 'e' || *w == 'E' || *w == 'd' || *w == 'D') {
    w++;
    if (*w == '+' || *w == '-') w++;
    if (!isdigit((unsigned char)*w)) return 0;
    while (isdigit((unsigned char)*w)) w++;
  }
  return *w == '\0';
}

/* .true. .false. t f .t. .f. true false (any case); sets *v. */
static int is_logical(const char *w, long *v) {
  char buf[16];
  size_t n = strlen(w);
  if (n == 0 || n >= sizeof buf) return 0;
  size_t a = w[0] == '.' ? 1 : 0, b = n > a && w[n - 1] == '.' ? n - 1 : n;
  if (b <= a) return 0;
  for (size_t i = a; i < b; i++) buf[i - a] = (char)tolower((unsigned char)w[i]);
  buf[b - a] = '\0';
  if (strcmp(buf, "t") == 0 || strcmp(buf, "true") == 0) return (*v = 1), 1;
  if (strcmp(buf, "f") == 0 || strcmp(buf, "false") == 0) return (*v = 0), 1;
  return 0;
}

/* Split an `r*c` repeat: *rest points at c ("" for a null value `r*`).
 * Returns 0, or -1 when r is not a positive integer. */
static int strip_repeat(const char *w, const char **rest) {
  const char *star = strchr(w, '*');
  *rest = w;
  if (!star) return 0;
  if (star == w) return -1;
  for (const char *p = w; p < star; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  if (atol(w) < 1) return -1;
  *rest = star + 1;
  return 0;
}

/* Check one value token of a key and, for the entries the bench keeps,
 * convert it. Returns 0 (null value: *is_null = 1), or -1 with the message. */
static int check_value(const token *t, const nl_entry *e, const char *key, int first,
                       const char *prev, bench_nl_int *out, int *is_null, char *msg, size_t n) {
  *is_null = 0;
  if (t->kind == TK_STRING) {
    if (!e) return 0;
  } else {
    const char *c;
    long lv = 0;
    if (strip_repeat(t->text, &c) == 0 && *c == '\0' && c != t->text) {
      *is_null = 1; /* `3*`: leaves the values as they were, as Fortran does */
      return 0;
    }
    int ok = strip_repeat(t->text, &c) == 0;
    if (ok && !e) {
      if (is_integer(c) || is_real(c) || is_logical(c, &lv)) return 0;
    } else if (ok) {
      switch (e->type) {
      case NV_INT:
        if (is_integer(c)) {
          errno = 0;
          long v = strtol(c, NULL, 10);
          if (errno || v < INT_MIN || v > INT_MAX) {
            snprintf(msg, n, "'%s' = %s is out of range", key, c);
            return -1;
          }
          out->value = v;
          return 0;
        }
        break;
      case NV_REAL:
        if (is_real(c)) {
          char buf[64];
          snprintf(buf, sizeof buf, "%s", c);
          for (char *p = buf; *p; p++)
            if (*p == 'd' || *p == 'D') *p = 'e'; /* Fortran's double exponent */
          out->real = strtod(buf, NULL);
          return 0;
        }
        break;
      case NV_LOGICAL:
        if (is_logical(c, &lv)) {
          out->value = lv;
          return 0;
        }
        break;
      }
    }
  }
  static const char *const what[] = {"an integer", "a real", "a logical (.true. or .false.)"};
  const char *need = e ? what[e->type] : "a Fortran constant";
  if (first)
    snprintf(msg, n, "'%s' needs %s value, found '%s'", key, need, t->text);
  else
    snprintf(msg, n, "'%.100s': junk after the value '%.100s': '%.100s' is not %s", key, prev,
             t->text, need);
  return -1;
}

/* Tokenize everything first: the parser needs two tokens of lookahead to
 * tell the next `key =` from one more value of the current key. */
typedef struct {
  token *v;
  int n, cap;
} token_list;

/* After a group has closed: does another group start later in the text?
 * WRF reads its groups and never looks at what follows the last one (job
 * scripts append lines such as LSF_TIME=0:30), so that tail is ignored. */
static int group_follows(const char *p) {
  for (int bol = 1; *p; p++) {
    if (bol && (*p == '&' || *p == '$') && isalpha((unsigned char)p[1])) return 1;
    if (*p == '\n')
      bol = 1;
    else if (!isspace((unsigned char)*p))
      bol = 0;
  }
  return 0;
}

static int tokenize(const char *text, const char *name, token_list *tl, char *err, size_t errlen) {
  lexer lx = {text, 1, name, err, errlen};
  int inside = 0, closed = 0;
  for (;;) {
    if (tl->n == tl->cap) {
      int cap = tl->cap ? 2 * tl->cap : 256;
      token *v = realloc(tl->v, (size_t)cap * sizeof *v);
      if (!v) return fail(err, errlen, name, 0, "out of memory");
      tl->v = v;
      tl->cap = cap;
    }
    token *t = &tl->v[tl->n];
    if (!inside && closed && !group_follows(lx.p)) {
      t->kind = TK_EOF;
      t->line = lx.line;
      t->text[0] = '\0';
      tl->n++;
      return 0;
    }
    if (lex(&lx, t) != 0) return -1;
    tl->n++;
    if (t->kind == TK_EOF) return 0;
    if (t->kind == TK_GROUP) inside = 1;
    if (t->kind == TK_END && inside) inside = 0, closed++;
  }
}

static void lower(char *s) {
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

static void note_group(bench_namelist *nl, const char *group, int line) {
  if (strcmp(group, "time_control") == 0 && !nl->time_control_line) nl->time_control_line = line;
  if (strcmp(group, "domains") == 0 && !nl->domains_line) nl->domains_line = line;
  if (strcmp(group, "namelist_quilt") == 0 && !nl->namelist_quilt_line)
    nl->namelist_quilt_line = line;
}

/* One `key = values` entry starting at token i; returns the next index or -1. */
static int parse_entry(const token_list *tl, int i, const char *group, const char *name,
                       bench_namelist *nl, char *err, size_t errlen) {
  const token *t = &tl->v[i];
  char key[128];
  snprintf(key, sizeof key, "%s", t->text);
  lower(key);
  char *paren = strchr(key, '('); /* eta_levels(1:35) = ... */
  if (paren) *paren = '\0';
  int key_line = t->line;
  if (tl->v[i + 1].kind != TK_EQ)
    return fail(err, errlen, name, key_line, "expected '=' after '%s'", t->text);
  if (!bench_nl_key_known(group, key)) {
    const char *hint = bench_nl_key_suggest(group, key);
    if (hint)
      return fail(err, errlen, name, key_line, "unknown variable '%s' in '&%s' (did you mean '%s'?)",
                  key, group, hint);
    return fail(err, errlen, name, key_line, "unknown variable '%s' in '&%s'", key, group);
  }
  const nl_entry *e = find_entry(group, key);
  bench_nl_int *slot = e ? (bench_nl_int *)((char *)nl + e->offset) : NULL;
  i += 2;
  int nvalues = 0, column = 0; /* columns so far: a repeat `r*c` fills r */
  const char *prev = "";
  while (tl->v[i].kind == TK_WORD || tl->v[i].kind == TK_STRING || tl->v[i].kind == TK_COMMA) {
    const token *v = &tl->v[i];
    if (v->kind == TK_WORD && tl->v[i + 1].kind == TK_EQ) break; /* next key */
    i++;
    if (v->kind == TK_COMMA) continue;
    bench_nl_int got;
    memset(&got, 0, sizeof got);
    int is_null = 0;
    char msg[1024];
    if (check_value(v, e, key, nvalues == 0, prev, &got, &is_null, msg, sizeof msg) != 0)
      return fail(err, errlen, name, v->line, "%s", msg);
    if (nvalues == 0 && slot && !is_null) { /* domain 1 */
      slot->value = got.value;
      slot->real = got.real;
      slot->line = key_line;
    }
    long repeat = 1;
    if (v->kind == TK_WORD && strchr(v->text, '*')) repeat = atol(v->text); /* checked above */
    for (long r = 0; r < repeat && column < BENCH_NL_MAX_DOM; r++, column++)
      if (slot && !is_null) {
        slot->col[column] = got.value;
        slot->rcol[column] = got.real;
        slot->has[column] = 1;
      }
    prev = v->text;
    nvalues++;
  }
  if (nvalues == 0) return fail(err, errlen, name, key_line, "missing value for '%s'", key);
  return i;
}

int bench_namelist_parse(const char *text, const char *name, bench_namelist *nl, char *err,
                         size_t errlen) {
  memset(nl, 0, sizeof *nl);
  if (!name) name = "namelist";
  token_list tl = {NULL, 0, 0};
  int rc = tokenize(text ? text : "", name, &tl, err, errlen);
  char group[128] = "";
  int group_line = 0, last_line = 1;
  int i = 0;
  while (rc == 0) {
    token *t = &tl.v[i];
    last_line = t->line;
    if (group[0] == '\0') {
      if (t->kind == TK_EOF) break;
      if (t->kind != TK_GROUP) {
        rc = fail(err, errlen, name, t->line,
                  "expected a namelist group such as '&domains', found '%s'",
                  t->kind == TK_END ? "/" : t->kind == TK_EQ ? "=" : t->kind == TK_COMMA ? "," : t->text);
        break;
      }
      snprintf(group, sizeof group, "%s", t->text);
      group_line = t->line;
      note_group(nl, group, group_line);
      i++;
      continue;
    }
    if (t->kind == TK_EOF) {
      rc = fail(err, errlen, name, group_line, "group '&%s' is never closed with '/'", group);
      break;
    }
    if (t->kind == TK_END) {
      group[0] = '\0';
      i++;
      continue;
    }
    if (t->kind == TK_GROUP) {
      rc = fail(err, errlen, name, t->line, "group '&%s' starts before '&%s' (line %d) was closed with '/'",
                t->text, group, group_line);
      break;
    }
    if (t->kind == TK_COMMA) { /* stray separators between entries are harmless */
      i++;
      continue;
    }
    if (t->kind != TK_WORD) {
      rc = fail(err, errlen, name, t->line, "expected a variable name in '&%s', found '%s'", group,
                t->kind == TK_EQ ? "=" : t->text);
      break;
    }
    int next = parse_entry(&tl, i, group, name, nl, err, errlen);
    if (next < 0) {
      rc = -1;
      break;
    }
    i = next;
  }
  free(tl.v);
  /* WRF reads &time_control and &domains unconditionally and stops when
   * either is missing; the message points at the end of the text. */
  if (rc == 0 && !nl->time_control_line)
    rc = fail(err, errlen, name, last_line, "required group '&time_control' is missing");
  if (rc == 0 && !nl->domains_line)
    rc = fail(err, errlen, name, last_line, "required group '&domains' is missing");
  return rc;
}

void bench_namelist_pick_domain(bench_namelist *nl, int domain) {
  if (domain < 1 || domain > BENCH_NL_MAX_DOM) return;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    if (!entries[i].per_domain) continue;
    bench_nl_int *e = (bench_nl_int *)((char *)nl + entries[i].offset);
    if (!e->line) continue;
    if (!e->has[domain - 1]) {
      e->line = 0; /* the list stops before this domain: as if absent */
      continue;
    }
    e->value = e->col[domain - 1];
    e->real = e->rcol[domain - 1];
  }
}

int bench_namelist_read(const char *path, bench_namelist *nl, char *err, size_t errlen) {
  memset(nl, 0, sizeof *nl);
  char *text;
  size_t n;
  if (bench_text_read(path, "namelist", &text, &n, err, errlen) != 0) return -1;
  int rc = bench_namelist_parse(text, path, nl, err, errlen);
  free(text);
  return rc;
}

int bench_namelist_hints(const bench_namelist *nl, const char *name, char *hints, size_t n,
                         char *err, size_t errlen) {
  if (!name) name = "namelist";
  if (n) hints[0] = '\0';
  const bench_nl_int *io = &nl->io_form_history;
  int quilt = nl->nio_tasks_per_group.line && nl->nio_tasks_per_group.value > 0;
  if (nl->nio_tasks_per_group.line && nl->nio_tasks_per_group.value < 0)
    return fail(err, errlen, name, nl->nio_tasks_per_group.line,
                "nio_tasks_per_group = %ld must be 0 (no quilting) or more",
                nl->nio_tasks_per_group.value);
  if (quilt && nl->nio_groups.line && nl->nio_groups.value < 1)
    return fail(err, errlen, name, nl->nio_groups.line, "nio_groups = %ld must be 1 or more",
                nl->nio_groups.value);
  if (!io->line && !quilt) return 0;
  long form = io->line ? io->value : 2; /* WRF's default history format is NetCDF */
  const char *strategy = NULL;
  switch (form) {
  case 2: strategy = "serial"; break;
  /* WRF's io_grib2: one task writes GRIB2 edition 2 messages. */
  case 10: strategy = "serial:format=grib2"; break;
  case 11: strategy = "direct"; break;
  /* WRF's io_netcdfpar: every rank writes NetCDF-4 collectively through
   * parallel HDF5; compression (deflate=, quantize=) comes from the hints. */
  case 13: strategy = "direct:format=netcdf4"; break;
  case 12: strategy = "aggregate"; break;
  case 102: strategy = "split"; break;
  default:
    return fail(err, errlen, name, io->line,
                "io_form_history = %ld is not supported: use 2 (NetCDF, serial), 10 (GRIB2, "
                "serial), 11 (PnetCDF, direct), 12 (PIO-like, aggregate), 13 (parallel "
                "NetCDF-4, direct) or 102 (split files)",
                form);
  }
  if (!quilt) {
    snprintf(hints, n, "strategy=%s", strategy);
    return 0;
  }
  if (form != 2 && form != 11)
    return fail(err, errlen, name, io->line,
                "io_form_history = %ld cannot be quilted (nio_tasks_per_group = %ld, line %d): "
                "quilt servers write io_form 2 or 11",
                form, nl->nio_tasks_per_group.value, nl->nio_tasks_per_group.line);
  long groups = nl->nio_groups.line ? nl->nio_groups.value : 1;
  snprintf(hints, n, "strategy=servers:io_groups=%ld:io_tasks=%ld:backend=%s", groups,
           nl->nio_tasks_per_group.value, form == 2 ? "netcdf" : "pnetcdf");
  return 0;
}
