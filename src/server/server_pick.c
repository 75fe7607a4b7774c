/* Which group writes a new file (decided at tsr_enddef). A file is the unit:
 * all its frames go to one group, since a NetCDF file has one writer group.
 *
 * - round-robin over the files of the context (default), or with
 *   server_pick=idle the first group (after the last one used) with no
 *   unfinished file;
 * - frames_per_outfile=N > 1: the files of one *stream* stay with the group
 *   that took the stream's first file until that group took N frames of the
 *   stream, then the stream moves to the next pick: a model that writes one
 *   frame per file gets WRF's pattern (a group takes N consecutive frames of
 *   a stream before the next group does).
 *
 * A stream is the set of files whose paths are equal once every run of
 * digits that does not follow a letter is masked: wrfout_d01_2000-01-24_12:00:00
 * and wrfout_d01_2000-01-24_18:00:00 are one stream (the date differs),
 * wrfout_d02_... is another (d01/d02 follow a letter), out_0001.nc and
 * out_0002.nc are one stream. Frames counted are the record frames put.
 *
 * Only model rank 0 hears from the servers and keeps the streams: when the
 * pick depends on either, it decides and broadcasts; plain round-robin needs
 * no message at all. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_client.h"

struct tsr__srv_stream {
  char *key;
  int group;      /* the group taking the stream's files now */
  int64_t frames; /* frames of the stream that group took */
};

/* The path with each run of digits that does not follow a letter made '#'. */
static char *stream_key(const char *path) {
  size_t n = strlen(path), j = 0;
  char *k = malloc(n + 1);
  if (!k) return NULL;
  for (size_t i = 0; i < n;) {
    if (!isdigit((unsigned char)path[i])) {
      k[j++] = path[i++];
      continue;
    }
    int after_letter = i > 0 && isalpha((unsigned char)path[i - 1]);
    size_t e = i;
    while (e < n && isdigit((unsigned char)path[e])) e++;
    if (after_letter) {
      memcpy(k + j, path + i, e - i);
      j += e - i;
    } else {
      k[j++] = '#';
    }
    i = e;
  }
  k[j] = '\0';
  return k;
}

/* The stream of @p path (added when new), or -1 without memory. */
static int stream_of(tsr__srv_client *cl, const char *path) {
  char *key = stream_key(path);
  if (!key) return -1;
  for (int i = 0; i < cl->nstreams; i++)
    if (strcmp(cl->streams[i].key, key) == 0) {
      free(key);
      return i;
    }
  tsr__srv_stream *s = realloc(cl->streams, (size_t)(cl->nstreams + 1) * sizeof *s);
  if (!s) {
    free(key);
    return -1;
  }
  cl->streams = s;
  s[cl->nstreams] = (tsr__srv_stream){key, -1, 0};
  return cl->nstreams++;
}

static int pick_idle(tsr__srv_client *cl) {
  int G = cl->L.G, best = cl->rr % G, best_busy = -1;
  tsr__srv_poll_notes(cl, TSR__NOTES_NOW);
  for (int k = 0; k < G; k++) {
    int g = (cl->rr + k) % G, busy = tsr__srv_group_busy(cl, g);
    if (busy == 0) return g; /* the first idle group after the last one used */
    if (best_busy < 0 || busy < best_busy) best = g, best_busy = busy;
  }
  return best;
}

int tsr__srv_pick_group(tsr__srv_client *cl, const char *path, const tsr__hints *h, MPI_Comm comm,
                        int *stream) {
  int fpo = h->frames_per_outfile, g = cl->rr % cl->L.G;
  *stream = -1;
  if (h->server_pick_idle || fpo > 1) {
    if (cl->m == 0) {
      int si = fpo > 1 ? stream_of(cl, path) : -1;
      tsr__srv_stream *st = si >= 0 ? &cl->streams[si] : NULL;
      if (st && st->group >= 0 && st->frames < fpo) {
        g = st->group; /* the stream stays where it is */
      } else {
        if (h->server_pick_idle) g = pick_idle(cl);
        if (st) *st = (tsr__srv_stream){st->key, g, 0};
      }
      *stream = si;
    }
    if (MPI_Bcast(&g, 1, MPI_INT, 0, comm) != MPI_SUCCESS) return -1;
  }
  cl->rr = g + 1;
  return g;
}

void tsr__srv_stream_add(tsr__srv_client *cl, int stream, int64_t frames) {
  if (stream >= 0 && stream < cl->nstreams) cl->streams[stream].frames += frames;
}

void tsr__srv_streams_free(tsr__srv_client *cl) {
  for (int i = 0; i < cl->nstreams; i++) free(cl->streams[i].key);
  free(cl->streams);
  cl->streams = NULL;
  cl->nstreams = 0;
}
