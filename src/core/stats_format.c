/* The printed forms of a file's statistics: one JSON line per file
 * (docs/stats-format.md) and a compact text block in the spirit of
 * MPICH_MPIIO_STATS (docs/statistics.md). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats_format.h"

static const char *const bucket_names[TSR__NBUCKETS] = {
    "0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G",
    "1G_PLUS"};

void tsr__sbuf_printf(tsr__sbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = 1;
      return;
    }
    if (b->s && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->failed = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
}

void tsr__sbuf_json_string(tsr__sbuf *b, const char *t) {
  tsr__sbuf_printf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p; p++) {
    if (*p == '"' || *p == '\\') tsr__sbuf_printf(b, "\\%c", *p);
    else if (*p == '\n') tsr__sbuf_printf(b, "\\n");
    else if (*p == '\t') tsr__sbuf_printf(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f) tsr__sbuf_printf(b, "\\u%04x", *p);
    else tsr__sbuf_printf(b, "%c", *p); /* UTF-8 bytes pass through */
  }
  tsr__sbuf_printf(b, "\"");
}

/* JSON has no inf or nan. */
static double fin(double v) { return isfinite(v) ? v : 0.0; }

static void json_mmm(tsr__sbuf *b, const char *name, const double v[3], int integral) {
  if (integral)
    tsr__sbuf_printf(b, "\"%s\": {\"min\": %.0f, \"max\": %.0f, \"mean\": %.0f}, ", name,
                     fin(v[0]), fin(v[1]), fin(v[2]));
  else
    tsr__sbuf_printf(b, "\"%s\": {\"min\": %.6f, \"max\": %.6f, \"mean\": %.6f}, ", name,
                     fin(v[0]), fin(v[1]), fin(v[2]));
}

/* strategy=auto's decision: what it chose for this file and why, the
 * figures behind it, and what it chose for the next file. */
static void json_auto(tsr__sbuf *b, const tsr__auto_record *a) {
  tsr__sbuf_printf(b, "\"auto\": {\"index\": %d, \"choice\": ", a->index);
  tsr__sbuf_json_string(b, a->choice);
  tsr__sbuf_printf(b, ", \"why\": ");
  tsr__sbuf_json_string(b, a->why);
  tsr__sbuf_printf(b, ", \"fallback\": ");
  tsr__sbuf_json_string(b, a->fallback);
  tsr__sbuf_printf(b, ", \"predicted_s\": %.6f, \"measured_s\": %.6f, \"compute_s\": %.6f, "
                   "\"next\": ", fin(a->predicted_s), fin(a->measured_s), fin(a->compute_s));
  tsr__sbuf_json_string(b, a->next);
  tsr__sbuf_printf(b, ", \"next_why\": ");
  tsr__sbuf_json_string(b, a->next_why);
  tsr__sbuf_printf(b, ", \"switched\": %s}, ", a->switched ? "true" : "false");
}

char *tsr__stats_json(const tsr__stats_summary *s) {
  tsr__sbuf b = {0};
  tsr__sbuf_printf(&b, "{\"tessera_stats\": 1, \"file\": ");
  tsr__sbuf_json_string(&b, s->file);
  tsr__sbuf_printf(&b, ", \"strategy\": ");
  tsr__sbuf_json_string(&b, s->strategy);
  tsr__sbuf_printf(&b, ", \"backend\": ");
  tsr__sbuf_json_string(&b, s->backend);
  tsr__sbuf_printf(&b, ", \"hints\": ");
  tsr__sbuf_json_string(&b, s->hints);
  tsr__sbuf_printf(&b, ", \"model_ranks\": %d, \"io_ranks\": %d, \"writers\": %d, \"writer_ranks\": [",
                   s->model_ranks, s->io_ranks, s->writers);
  for (int i = 0; s->writer_ranks && i < s->writers; i++)
    tsr__sbuf_printf(&b, "%s%d", i ? ", " : "", s->writer_ranks[i]);
  tsr__sbuf_printf(&b, "], \"writers_on\": \"%s\", ", s->io_valid ? "io_servers" : "model_ranks");
  if (s->mpiio[TSR__MPIIO_CB_NODES] >= 0)
    tsr__sbuf_printf(&b, "\"mpiio_cb_nodes\": %lld, ", (long long)s->mpiio[TSR__MPIIO_CB_NODES]);
  else
    tsr__sbuf_printf(&b, "\"mpiio_cb_nodes\": null, ");
  tsr__sbuf_printf(&b, "\"mpiio_hints\": {");
  int first = 1;
  for (int i = 0; i < TSR__NMPIIO; i++) {
    if (s->mpiio[i] < 0) continue;
    tsr__sbuf_printf(&b, "%s\"%s\": %lld", first ? "" : ", ", tsr__mpiio_keys[i],
                     (long long)s->mpiio[i]);
    first = 0;
  }
  tsr__sbuf_printf(&b, "}, \"mpiio_hints_not_taken\": ");
  tsr__sbuf_json_string(&b, s->not_taken ? s->not_taken : "");
  tsr__sbuf_printf(&b, ", \"bytes\": %lld, \"frames\": %lld, \"variables\": %lld, ",
                   (long long)s->bytes, (long long)s->frames, (long long)s->variables);
  json_mmm(&b, "blocked_s", s->blocked, 0);
  json_mmm(&b, "writer_s", s->writer, 0);
  if (s->autor) json_auto(&b, s->autor);
  tsr__sbuf_printf(&b, "\"first_put_to_close_s\": %.6f, \"rearranged_bytes\": %lld, ",
                   fin(s->first_put_to_close), (long long)s->rearranged);
  json_mmm(&b, "peak_buffer_bytes", s->peak, 1);
  if (s->io_valid) json_mmm(&b, "io_peak_buffer_bytes", s->io_peak, 1);
  if (s->reduce_valid) json_mmm(&b, "reduce_bytes", s->reduce, 1);
  tsr__sbuf_printf(&b, "\"stripe_size\": %lld, \"counters\": {", (long long)s->alignment);
  tsr__sbuf_printf(&b, "\"TSR_WRITES\": %lld, \"TSR_BYTES_WRITTEN\": %lld", (long long)s->writes,
                   (long long)s->bytes_written);
  for (int i = 0; i < TSR__NBUCKETS; i++)
    tsr__sbuf_printf(&b, ", \"TSR_SIZE_WRITE_%s\": %lld", bucket_names[i], (long long)s->hist[i]);
  tsr__sbuf_printf(&b,
                   ", \"TSR_FILE_ALIGNMENT\": %lld, \"TSR_FILE_NOT_ALIGNED\": %lld, "
                   "\"TSR_CONSEC_WRITES\": %lld, \"TSR_WRITES_WITH_OFFSET\": %lld}}\n",
                   (long long)s->alignment, (long long)s->not_aligned, (long long)s->consec,
                   (long long)s->offsets_known);
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

/* 1536 -> "1.5K", in powers of 1024 like the hint sizes. */
static const char *human(double v, char *out, size_t len) {
  const char *units = " KMGTP";
  int u = 0;
  while (fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(out, len, "%.0f", v);
  else snprintf(out, len, "%.1f%c", v, units[u]);
  return out;
}

void tsr__stats_text(const tsr__stats_summary *s, FILE *out) {
  tsr__sbuf b = {0};
  char h1[32], h2[32], h3[32], h4[32];
  const char *p = "TESSERA_STATS:";
  tsr__sbuf_printf(&b, "%s file %s\n", p, s->file);
  tsr__sbuf_printf(&b, "%s   strategy %s, backend %s, hints \"%s\"\n", p, s->strategy, s->backend,
                   s->hints);
  tsr__sbuf_printf(&b, "%s   ranks: %d model, %d io; writers %d%s:", p, s->model_ranks, s->io_ranks,
                   s->writers, s->io_valid ? " (I/O servers)" : "");
  for (int i = 0; s->writer_ranks && i < s->writers && i < 16; i++)
    tsr__sbuf_printf(&b, " %d", s->writer_ranks[i]);
  if (s->writer_ranks && s->writers > 16) tsr__sbuf_printf(&b, " ...");
  if (s->mpiio[TSR__MPIIO_CB_NODES] >= 0)
    tsr__sbuf_printf(&b, "; MPI-IO cb_nodes %lld", (long long)s->mpiio[TSR__MPIIO_CB_NODES]);
  else if (s->uses_mpiio)
    tsr__sbuf_printf(&b, "; MPI-IO cb_nodes not reported");
  if (s->not_taken && s->not_taken[0])
    tsr__sbuf_printf(&b, "\n%s   warning: the MPI-IO layer did not take the hints %s", p,
                     s->not_taken);
  tsr__sbuf_printf(&b, "\n%s   data: %lld bytes (%s), %lld frames, %lld variables\n", p,
                   (long long)s->bytes, human((double)s->bytes, h1, sizeof h1),
                   (long long)s->frames, (long long)s->variables);
  tsr__sbuf_printf(&b, "%s   time s: model blocked min %.4f max %.4f mean %.4f; first put to close %.4f\n",
                   p, s->blocked[0], s->blocked[1], s->blocked[2], s->first_put_to_close);
  tsr__sbuf_printf(&b, "%s   time s: writers min %.4f max %.4f mean %.4f\n", p, s->writer[0],
                   s->writer[1], s->writer[2]);
  tsr__sbuf_printf(&b, "%s   write requests: %lld, %lld bytes (mean %s); ", p,
                   (long long)s->writes, (long long)s->bytes_written,
                   human(s->writes ? (double)s->bytes_written / (double)s->writes : 0, h1, sizeof h1));
  if (s->offsets_known > 0)
    tsr__sbuf_printf(&b, "consecutive %lld, not aligned to %s: %lld (of %lld with offsets)\n",
                     (long long)s->consec, human((double)s->alignment, h2, sizeof h2),
                     (long long)s->not_aligned, (long long)s->offsets_known);
  else
    tsr__sbuf_printf(&b, "offsets not reported by backend %s\n", s->backend);
  tsr__sbuf_printf(&b, "%s   request sizes:", p);
  int any = 0;
  for (int i = 0; i < TSR__NBUCKETS; i++) {
    if (!s->hist[i]) continue;
    tsr__sbuf_printf(&b, " %s:%lld", bucket_names[i], (long long)s->hist[i]);
    any = 1;
  }
  tsr__sbuf_printf(&b, "%s\n", any ? "" : " none");
  tsr__sbuf_printf(&b, "%s   rearranged %s bytes; peak buffer per rank: min %s max %s mean %s\n", p,
                   human((double)s->rearranged, h1, sizeof h1), human(s->peak[0], h2, sizeof h2),
                   human(s->peak[1], h3, sizeof h3), human(s->peak[2], h4, sizeof h4));
  if (s->autor)
    tsr__sbuf_printf(&b, "%s   auto: file %d %s (%s)%s%s; predicted %.4f s, measured %.4f s, "
                     "compute %.4f s; next %s (%s)%s\n", p, s->autor->index, s->autor->choice,
                     s->autor->why, s->autor->fallback[0] ? "; " : "", s->autor->fallback,
                     s->autor->predicted_s, s->autor->measured_s, s->autor->compute_s,
                     s->autor->next, s->autor->next_why, s->autor->switched ? " [switch]" : "");
  if (s->reduce_valid)
    tsr__sbuf_printf(&b, "%s   reduce accumulators per rank: min %s max %s mean %s\n", p,
                     human(s->reduce[0], h2, sizeof h2), human(s->reduce[1], h3, sizeof h3),
                     human(s->reduce[2], h4, sizeof h4));
  if (b.failed) {
    fprintf(out, "%s file %s: out of memory\n", p, s->file);
  } else if (b.s) {
    fputs(b.s, out); /* one call: lines of one file stay together */
  }
  free(b.s);
}
