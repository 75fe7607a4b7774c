/* WRF namelist.input reader: a tokenizer and a small parser of Fortran
 * namelist groups (`&name ... /`). See namelist.h. */
#include "namelist.h"

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

typedef struct {
  const char *group;
  const char *key;
  size_t offset;
} nl_entry;

#define E(g, k) {#g, #k, offsetof(bench_namelist, k)}
static const nl_entry entries[] = {
    E(time_control, run_days),       E(time_control, run_hours),
    E(time_control, run_minutes),    E(time_control, run_seconds),
    E(time_control, start_year),     E(time_control, start_month),
    E(time_control, start_day),      E(time_control, start_hour),
    E(time_control, start_minute),   E(time_control, start_second),
    E(time_control, history_interval), E(time_control, frames_per_outfile),
    E(time_control, io_form_history), E(domains, e_we),
    E(domains, e_sn),                E(domains, e_vert),
    E(domains, time_step),           E(domains, nproc_x),
    E(domains, nproc_y),             E(namelist_quilt, nio_groups),
    E(namelist_quilt, nio_tasks_per_group),
};
#undef E

static const nl_entry *find_entry(const char *group, const char *key) {
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (strcmp(entries[i].group, group) == 0 && strcmp(entries[i].key, key) == 0) return &entries[i];
  return NULL;
}

/* Integer value of a namelist word: accepts `r*value` repeats. */
static int parse_long(const char *w, long *out) {
  const char *star = strchr(w, '*');
  if (star) w = star + 1;
  if (*w == '\0') return -1;
  errno = 0;
  char *end = NULL;
  long v = strtol(w, &end, 10);
  if (errno || end == w || *end != '\0') return -1;
  *out = v;
  return 0;
}

/* Tokenize everything first: the parser needs two tokens of lookahead to
 * tell the next `key =` from one more value of the current key. */
typedef struct {
  token *v;
  int n, cap;
} token_list;

static int tokenize(const char *text, const char *name, token_list *tl, char *err, size_t errlen) {
  lexer lx = {text, 1, name, err, errlen};
  for (;;) {
    if (tl->n == tl->cap) {
      int cap = tl->cap ? 2 * tl->cap : 256;
      token *v = realloc(tl->v, (size_t)cap * sizeof *v);
      if (!v) return fail(err, errlen, name, 0, "out of memory");
      tl->v = v;
      tl->cap = cap;
    }
    token *t = &tl->v[tl->n];
    if (lex(&lx, t) != 0) return -1;
    tl->n++;
    if (t->kind == TK_EOF) return 0;
  }
}

static void lower(char *s) {
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

int bench_namelist_parse(const char *text, const char *name, bench_namelist *nl, char *err,
                         size_t errlen) {
  memset(nl, 0, sizeof *nl);
  if (!name) name = "namelist";
  token_list tl = {NULL, 0, 0};
  int rc = tokenize(text ? text : "", name, &tl, err, errlen);
  char group[128] = "";
  int group_line = 0;
  int i = 0;
  while (rc == 0) {
    token *t = &tl.v[i];
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
    char key[128];
    snprintf(key, sizeof key, "%s", t->text);
    lower(key);
    char *paren = strchr(key, '('); /* history_interval(1) = ... */
    if (paren) *paren = '\0';
    int key_line = t->line;
    if (tl.v[i + 1].kind != TK_EQ) {
      rc = fail(err, errlen, name, key_line, "expected '=' after '%s'", t->text);
      break;
    }
    i += 2;
    const token *first = NULL;
    while (tl.v[i].kind == TK_WORD || tl.v[i].kind == TK_STRING || tl.v[i].kind == TK_COMMA) {
      if (tl.v[i].kind == TK_WORD && tl.v[i + 1].kind == TK_EQ) break; /* next key */
      if (tl.v[i].kind != TK_COMMA && !first) first = &tl.v[i];
      i++;
    }
    if (!first) {
      rc = fail(err, errlen, name, key_line, "missing value for '%s'", key);
      break;
    }
    const nl_entry *e = find_entry(group, key);
    if (!e) continue;
    long v = 0;
    if (first->kind != TK_WORD || parse_long(first->text, &v) != 0) {
      rc = fail(err, errlen, name, first->line, "'%s' needs an integer value, found '%s'", key,
                first->text);
      break;
    }
    bench_nl_int *slot = (bench_nl_int *)((char *)nl + e->offset);
    slot->value = v;
    slot->line = key_line;
  }
  free(tl.v);
  return rc;
}

int bench_namelist_read(const char *path, bench_namelist *nl, char *err, size_t errlen) {
  memset(nl, 0, sizeof *nl);
  FILE *fp = fopen(path, "rb");
  if (!fp) return fail(err, errlen, path, 0, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  if (!text) {
    fclose(fp);
    return fail(err, errlen, path, 0, "out of memory");
  }
  size_t got;
  while ((got = fread(text + n, 1, cap - n - 1, fp)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *bigger = realloc(text, cap * 2);
      if (!bigger) {
        free(text);
        fclose(fp);
        return fail(err, errlen, path, 0, "out of memory");
      }
      text = bigger;
      cap *= 2;
    }
  }
  int bad = ferror(fp);
  fclose(fp);
  if (bad) {
    free(text);
    return fail(err, errlen, path, 0, "read error");
  }
  text[n] = '\0';
  if (strlen(text) != n) {
    free(text);
    return fail(err, errlen, path, 0, "not a text file (contains NUL bytes)");
  }
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
  case 11: strategy = "direct"; break;
  case 12: strategy = "aggregate"; break;
  case 102: strategy = "split"; break;
  default:
    return fail(err, errlen, name, io->line,
                "io_form_history = %ld is not supported: use 2 (NetCDF, serial), 11 (PnetCDF, "
                "direct), 12 (PIO-like, aggregate) or 102 (split files)",
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
