/* strategy=auto's state file: one line per stream and one per candidate,
 * plain text so that a person can read (and delete) what a job learned.
 *
 *   tessera_auto_state 1
 *   stream RANKS FRAME_BYTES COMPUTE_REF INCUMBENT KEY
 *   cand FAILED NWIN S1 S2 S3 S4 PREDICTED HINTS[ WHY]
 *
 * The samples are written oldest first; the next job's windows start from
 * them, so it keeps the incumbent until its own figures say otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auto_state.h"
#include "core/text_bcast.h"
#include "core/verbose.h"
#include "core/stats_format.h"

static const char header[] = "tessera_auto_state 1\n";

char *tsr__auto_state_text(const tsr__auto_stream *list) {
  tsr__sbuf b = {0};
  tsr__sbuf_printf(&b, "%s", header);
  for (const tsr__auto_stream *s = list; s; s = s->next) {
    tsr__sbuf_printf(&b, "stream %d %lld %.9g %d %s\n", s->ranks, (long long)s->frame_bytes,
                     s->compute_ref, s->incumbent, s->key);
    for (int i = 0; i < s->ncand; i++) {
      const tsr__auto_cand *c = &s->c[i];
      tsr__sbuf_printf(&b, "cand %d %d", c->failed, c->nwin);
      for (int j = 0; j < TSR__AUTO_WIN; j++) {
        int at = (c->head - c->nwin + j + 2 * TSR__AUTO_WIN) % TSR__AUTO_WIN;
        tsr__sbuf_printf(&b, " %.9g", j < c->nwin ? c->win[at] : 0.0);
      }
      tsr__sbuf_printf(&b, " %.9g %s%s%s\n", c->predicted_s, c->hints, c->why[0] ? " " : "",
                       c->why);
    }
  }
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

/* One "cand" line into @p s; 0 or -1. */
static int parse_cand(const char *line, tsr__auto_stream *s) {
  tsr__auto_cand c;
  memset(&c, 0, sizeof c);
  double w[TSR__AUTO_WIN];
  int used = 0;
  if (sscanf(line, "cand %d %d %lg %lg %lg %lg %lg %95s %n", &c.failed, &c.nwin, &w[0], &w[1],
             &w[2], &w[3], &c.predicted_s, c.hints, &used) < 8 || used == 0)
    return -1;
  if (c.nwin < 0 || c.nwin > TSR__AUTO_WIN || s->ncand >= TSR__AUTO_MAXC) return -1;
  snprintf(c.why, sizeof c.why, "%s", line + used);
  memcpy(c.win, w, sizeof w);
  c.head = c.nwin % TSR__AUTO_WIN;
  c.last_try = -1;
  s->c[s->ncand++] = c;
  return 0;
}

int tsr__auto_state_parse(const char *text, tsr__auto_stream **list) {
  if (strncmp(text, header, sizeof header - 1) != 0) return -1;
  tsr__auto_stream **tail = list;
  while (*tail) tail = &(*tail)->next;
  tsr__auto_stream *s = NULL;
  for (const char *p = text + sizeof header - 1; *p;) {
    const char *end = strchr(p, '\n');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char line[512];
    if (n >= sizeof line) return -1;
    memcpy(line, p, n);
    line[n] = '\0';
    p += n + (end != NULL);
    if (strncmp(line, "stream ", 7) == 0) {
      s = calloc(1, sizeof *s);
      if (!s) return -1;
      long long fb = 0;
      int used = 0;
      if (sscanf(line, "stream %d %lld %lg %d %n", &s->ranks, &fb, &s->compute_ref,
                 &s->incumbent, &used) < 4 || used == 0) {
        free(s);
        return -1;
      }
      s->frame_bytes = fb;
      snprintf(s->key, sizeof s->key, "%s", line + used);
      *tail = s;
      tail = &s->next;
    } else if (strncmp(line, "cand ", 5) == 0) {
      if (!s || parse_cand(line, s)) return -1;
    } else if (line[0]) {
      return -1;
    }
  }
  for (s = *list; s; s = s->next)
    if (s->incumbent >= s->ncand) s->incumbent = -1;
  return 0;
}

void tsr__auto_state_load(MPI_Comm comm, const char *path, tsr__auto_stream **list) {
  char *text = NULL, why[200];
  int missing = 0;
  /* A missing or unreadable file is a first job: nothing learned yet. */
  if (tsr__text_bcast(comm, path, 1L << 24, &text, &missing, why, sizeof why)) return;
  if (tsr__auto_state_parse(text, list)) TSR_LOG("TESSERA_AUTO_STATE '%s': not a state file; parts skipped", path);
  free(text);
}

void tsr__auto_state_save(int rank, const char *path, const tsr__auto_stream *list) {
  if (rank != 0) return;
  char *text = tsr__auto_state_text(list);
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", path);
  FILE *fp = text ? fopen(tmp, "w") : NULL;
  int ok = fp && fputs(text, fp) >= 0;
  if (fp && fclose(fp)) ok = 0;
  if (!ok || rename(tmp, path)) {
    TSR_LOG("TESSERA_AUTO_STATE '%s': cannot write", path);
    remove(tmp);
  }
  free(text);
}

void tsr__auto_streams_free(tsr__auto_stream **list) {
  while (*list) {
    tsr__auto_stream *s = *list;
    *list = s->next;
    free(s);
  }
}
