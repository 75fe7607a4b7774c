/* reduce= and reduce_prefix= values (docs/reductions.md): the codecs of
 * core/hints_values.h. The hint grammar reserves ',' and ':', so items are
 * joined by '+', a variable and its op by '/', and the period follows '@'. */
#include "core/reduce_spec.h"

#include <stdio.h>
#include <string.h>

#include "core/hints.h"
#include "core/hints_values.h"

static const struct {
  const char *name, *suffix, *cf;
} ops[TSR__RED_NOPS] = {
    [TSR__RED_MEAN] = {"mean", "MEAN", "mean"},
    [TSR__RED_MIN] = {"min", "MIN", "minimum"},
    [TSR__RED_MAX] = {"max", "MAX", "maximum"},
    [TSR__RED_SUM] = {"sum", "SUM", "sum"},
    [TSR__RED_COUNT] = {"count", "COUNT", "point"},
    [TSR__RED_STD] = {"std", "STD", "standard_deviation"},
};

const char *tsr__reduce_op_name(int op) { return ops[op].name; }
const char *tsr__reduce_op_suffix(int op) { return ops[op].suffix; }
const char *tsr__reduce_op_cf(int op) { return ops[op].cf; }

/* A period: digits only (no sign, no blanks), 1 .. 2^31-1. */
static int parse_period(const char *s, size_t n, int *out) {
  if (n == 0 || n > 10) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v < 1 || v > INT32_MAX) return -1;
  *out = (int)v;
  return 0;
}

/* One item VAR/OP[@N] of @p n bytes at @p s; @p period is -1 until the
 * first item sets it, then every item must repeat it: one derived file per
 * period, so periods of different lengths would need files of their own
 * with the same name. */
static int parse_item(const char *s, size_t n, tsr__reduce *r) {
  const char *slash = memchr(s, '/', n);
  if (!slash || slash == s || (size_t)(slash - s) >= TSR__REDUCE_VAR) return -1;
  const char *op = slash + 1, *end = s + n;
  const char *at = memchr(op, '@', (size_t)(end - op));
  size_t opn = (size_t)((at ? at : end) - op);
  int period = 0;
  if (at && parse_period(at + 1, (size_t)(end - at - 1), &period)) return -1;
  if (r->n > 0 && period != r->period) return -1;
  r->period = period;
  tsr__reduce_item *it = &r->item[r->n];
  memcpy(it->var, s, (size_t)(slash - s));
  it->var[slash - s] = '\0';
  for (const char *c = it->var; *c; c++)
    if (*c == '@' || *c == '/') return -1;
  it->op = -1;
  for (int k = 0; k < TSR__RED_NOPS; k++)
    if (strlen(ops[k].name) == opn && strncmp(op, ops[k].name, opn) == 0) it->op = k;
  if (it->op < 0) return -1;
  for (int i = 0; i < r->n; i++) /* the same statistic twice would define one name twice */
    if (r->item[i].op == it->op && strcmp(r->item[i].var, it->var) == 0) return -1;
  r->n++;
  return 0;
}

static int reduce_parse(const char *text, void *field) {
  tsr__reduce *r = field;
  if (strcmp(text, "none") == 0) return 0;
  for (const char *p = text;;) {
    const char *plus = strchr(p, '+');
    size_t n = plus ? (size_t)(plus - p) : strlen(p);
    if (r->n == TSR__REDUCE_MAX || parse_item(p, n, r)) return -1;
    if (!plus) return 0;
    p = plus + 1;
  }
}

static void reduce_format(const void *field, char *buf, size_t cap) {
  const tsr__reduce *r = field;
  size_t o = 0;
  buf[0] = '\0';
  if (r->n == 0) snprintf(buf, cap, "none");
  for (int i = 0; i < r->n && o < cap; i++) {
    o += (size_t)snprintf(buf + o, cap - o, "%s%s/%s", i ? "+" : "", r->item[i].var,
                          ops[r->item[i].op].name);
    if (r->period && o < cap) o += (size_t)snprintf(buf + o, cap - o, "@%d", r->period);
  }
}

const tsr__hint_codec tsr__hint_reduce = {
    reduce_parse, reduce_format,
    /* At most ~150 characters: hints.c quotes it in a 160-byte buffer. */
    "none or items VAR/OP[@N] joined by '+' (OP mean, min, max, sum, count or std; N >= 1, "
    "the same for all; at most 16, none twice)",
    0};

/* The derived stream's name: it replaces the first '_'-token of a base
 * name, so it is one token of letters, digits, '-' and '.'. */
static int prefix_parse(const char *text, void *field) {
  size_t n = strlen(text);
  if (n == 0 || n >= TSR__NAME_MAX) return -1;
  for (const char *c = text; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '-' || *c == '.'))
      return -1;
  memcpy(field, text, n + 1);
  return 0;
}

static void prefix_format(const void *field, char *buf, size_t cap) {
  snprintf(buf, cap, "%s", (const char *)field);
}

const tsr__hint_codec tsr__hint_reduce_prefix = {
    prefix_parse, prefix_format,
    "a name of 1 to 15 letters, digits, '-' or '.' (no '_', '/')", 0};
