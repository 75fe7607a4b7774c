/* Structured hint values (contract in core/hints_values.h; keys in the table
 * of hints.c; user reference in docs/hints.md "Compression"). */
#include "core/hints_values.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hints.h"

/* Digits only, no sign, no blanks, at most @p max: strtol's leniency
 * ("+12", " 12") would hide typos. */
static int parse_count(const char *s, const char **end, int64_t max, int64_t *out) {
  if (*s < '0' || *s > '9') return -1;
  int64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    v = v * 10 + (*s - '0');
    if (v > max) return -1;
  }
  *end = s;
  *out = v;
  return 0;
}

/* Modes in NetCDF's words; the significant-digit modes allow 1..15 (double
 * precision's limit; NetCDF checks the tighter float bound per variable),
 * bitround 1..52 bits. */
static const struct {
  const char *name;
  int mode, max;
} quantize_modes[] = {
    {"bitround", TSR__QUANTIZE_BITROUND, 52},
    {"granularbr", TSR__QUANTIZE_GRANULARBR, 15},
    {"bitgroom", TSR__QUANTIZE_BITGROOM, 15},
};
#define NMODES (sizeof quantize_modes / sizeof quantize_modes[0])

static int quantize_parse(const char *text, void *field) {
  tsr__quantize *q = field;
  if (strcmp(text, "none") == 0) return 0;
  const char *colon = strchr(text, ':');
  if (!colon) return -1;
  for (size_t i = 0; i < NMODES; i++) {
    size_t n = strlen(quantize_modes[i].name);
    if ((size_t)(colon - text) != n || strncmp(text, quantize_modes[i].name, n) != 0) continue;
    const char *end;
    int64_t v;
    if (parse_count(colon + 1, &end, quantize_modes[i].max, &v) || *end || v < 1) return -1;
    q->mode = quantize_modes[i].mode;
    q->nsd = (int)v;
    return 0;
  }
  return -1;
}

static void quantize_format(const void *field, char *buf, size_t cap) {
  const tsr__quantize *q = field;
  for (size_t i = 0; i < NMODES; i++)
    if (quantize_modes[i].mode == q->mode) {
      snprintf(buf, cap, "%s:%d", quantize_modes[i].name, q->nsd);
      return;
    }
  snprintf(buf, cap, "none");
}

const tsr__hint_codec tsr__hint_quantize = {
    quantize_parse, quantize_format,
    "none, bitround:N (N = 1..52 significant bits), granularbr:N or bitgroom:N (N = 1..15 "
    "significant digits)",
    1};

static int chunks_parse(const char *text, void *field) {
  tsr__chunks *c = field;
  if (strcmp(text, "auto") == 0) return 0;
  if (strcmp(text, "contiguous") == 0) {
    c->n = TSR__CHUNKS_CONTIGUOUS;
    return 0;
  }
  const char *p = text;
  for (;;) {
    int64_t v;
    /* HDF5 chunks hold fewer than 2^32 elements; a bound per dimension keeps
     * the product's check in the backend free of overflow. */
    if (c->n == TSR__CHUNKS_MAX || parse_count(p, &p, (int64_t)1 << 32, &v) || v < 1) return -1;
    c->len[c->n++] = v;
    if (*p == '\0') return 0;
    if (*p++ != 'x') return -1;
  }
}

static void chunks_format(const void *field, char *buf, size_t cap) {
  const tsr__chunks *c = field;
  if (c->n == 0) {
    snprintf(buf, cap, "auto");
    return;
  }
  if (c->n < 0) {
    snprintf(buf, cap, "contiguous");
    return;
  }
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "x" : "", (long long)c->len[i]);
}

const tsr__hint_codec tsr__hint_chunks = {
    chunks_parse, chunks_format,
    "auto, contiguous or chunk lengths of the last dimensions such as 1x64x64 (up to 8, each >= 1)",
    0};

/* shards= (format=zarr) takes chunks='s form, as zarr-python's
 * create_array(shards=) mirrors its chunks=: auto is no sharding. */
const tsr__hint_codec tsr__hint_shards = {
    chunks_parse, chunks_format,
    "auto (no shards), contiguous (one shard per frame) or shard lengths of the last dimensions "
    "such as 4x64x64 (up to 8, each >= 1, multiples of the chunk lengths)",
    0};

/* concentrators=per_node | N (N >= 1 model ranks per concentrator); 0 and
 * anything else are errors (no concentrators is the hint left out). */
static int conc_parse(const char *text, void *field) {
  int *c = field;
  int64_t v;
  const char *end;
  if (strcmp(text, "per_node") == 0) {
    *c = -1;
    return 0;
  }
  if (parse_count(text, &end, INT32_MAX, &v) || *end != '\0' || v < 1) return -1;
  *c = (int)v;
  return 0;
}

static void conc_format(const void *field, char *buf, size_t cap) {
  int c = *(const int *)field;
  if (c < 0) snprintf(buf, cap, "per_node");
  else snprintf(buf, cap, "%d", c);
}

const tsr__hint_codec tsr__hint_concentrators = {
    conc_parse, conc_format, "per_node or a number of model ranks per concentrator (>= 1)", 0};
