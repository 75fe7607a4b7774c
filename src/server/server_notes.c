/* Model rank 0's record of what the servers reported: every server that
 * writes a file sends one note when it finished it (status, backend message,
 * its figures for the file). Only model rank 0 hears them; the API layer's
 * agreement gives every model rank the codes it reports. A failure is often
 * reported at a call on another file, so the record keeps each file's path
 * to name it in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_client.h"

struct tsr__srv_track {
  int group, expected, received, status, closed, reported;
  int figures; /* 1: sum the notes' figures into io */
  tsr__berr berr;
  char *path; /* the model's path, for the message (NULL without memory) */
  tsr__io_fstats io; /* writer_s[2] and peak_buffer[2] hold sums until moved out */
};

int tsr__srv_track_open(tsr__srv_client *cl, int file, int group, int expected, int figures,
                        const char *path) {
  if (file >= cl->ntracks) {
    int n = cl->ntracks ? 2 * cl->ntracks : 16;
    while (n <= file) n *= 2;
    tsr__srv_track *t = realloc(cl->tracks, (size_t)n * sizeof *t);
    if (!t) return TSR_ENOMEM;
    memset(t + cl->ntracks, 0, (size_t)(n - cl->ntracks) * sizeof *t);
    cl->tracks = t;
    cl->ntracks = n;
  }
  tsr__srv_track *t = &cl->tracks[file];
  free(t->io.writer_ranks); /* a failed enddef may open the same id twice */
  free(t->path);
  *t = (tsr__srv_track){.group = group, .expected = expected, .figures = figures};
  t->path = path ? strdup(path) : NULL; /* without memory the message names no path */
  for (int i = 0; i < TSR__NMPIIO; i++) t->io.mpiio[i] = -1;
  return 0;
}

void tsr__srv_track_close(tsr__srv_client *cl, int file) {
  if (file < cl->ntracks) cl->tracks[file].closed = 1;
}

void tsr__srv_track_reported(tsr__srv_client *cl, int file) {
  if (file < cl->ntracks) cl->tracks[file].reported = 1;
}

static int unfinished(const tsr__srv_track *t) { return t->received < t->expected; }

/* Add one writer's figures; writer ranks are kept sorted, so the record does
 * not depend on the order the notes arrived in. */
static void add_figures(tsr__io_fstats *io, const tsr__wire_fstats *fs) {
  if (!fs->wrote) return;
  int *r = realloc(io->writer_ranks, (size_t)(io->writers + 1) * sizeof *r);
  if (!r) return; /* statistics are best effort: the file itself is fine */
  io->writer_ranks = r;
  int k = io->writers++;
  while (k > 0 && r[k - 1] > fs->rank) {
    r[k] = r[k - 1];
    k--;
  }
  r[k] = fs->rank;
  int first = io->writers == 1;
  if (first || fs->writer_s < io->writer_s[0]) io->writer_s[0] = fs->writer_s;
  if (first || fs->writer_s > io->writer_s[1]) io->writer_s[1] = fs->writer_s;
  io->writer_s[2] += fs->writer_s;
  if (fs->first_put_to_close_s > io->first_put_to_close_s)
    io->first_put_to_close_s = fs->first_put_to_close_s;
  io->writes += fs->writes;
  io->bytes_written += fs->bytes_written;
  for (int i = 0; i < TSR__NBUCKETS; i++) io->size_hist[i] += fs->size_hist[i];
  io->not_aligned += fs->not_aligned;
  io->consec += fs->consec;
  io->offsets_known += fs->offsets_known;
  io->alignment = fs->alignment;
  if (first || fs->peak_buffer < io->peak_buffer[0]) io->peak_buffer[0] = fs->peak_buffer;
  if (first || fs->peak_buffer > io->peak_buffer[1]) io->peak_buffer[1] = fs->peak_buffer;
  io->peak_buffer[2] += fs->peak_buffer;
  for (int i = 0; i < TSR__NMPIIO; i++)
    if (fs->mpiio[i] >= 0) io->mpiio[i] = fs->mpiio[i];
  io->mpiio_not_taken |= fs->mpiio_not_taken;
}

/* Receive one note (waiting for it when @p block); 1 when one came. */
static int take_note(tsr__srv_client *cl, int block, int *rc) {
  tsr__msg_info info;
  int flag = 1;
  *rc = block ? tsr__tp_wait(&cl->tp, MPI_ANY_SOURCE, TSR__WIRE_TAG_NOTE, 0, &info)
              : tsr__tp_poll(&cl->tp, MPI_ANY_SOURCE, TSR__WIRE_TAG_NOTE, &flag, &info);
  if (*rc || !flag) return 0;
  tsr__wire_reply r;
  if ((*rc = tsr__tp_recv(&cl->tp, info.src, TSR__WIRE_TAG_NOTE, &r, sizeof r))) return 0;
  if (r.writer_s > cl->server_writer_s) cl->server_writer_s = r.writer_s;
  if (r.peak_bytes > cl->server_peak) cl->server_peak = r.peak_bytes;
  if (r.msgs > cl->server_msgs) cl->server_msgs = r.msgs;
  if (r.reduce_bytes > cl->server_reduce) cl->server_reduce = r.reduce_bytes;
  if (r.file < 0 || r.file >= cl->ntracks) return 1;
  tsr__srv_track *t = &cl->tracks[r.file];
  t->received++;
  if (r.status && !t->status) {
    t->status = r.status;
    t->berr = r.berr;
  }
  if (t->figures) add_figures(&t->io, &r.fs);
  return 1;
}

static int waiting_for(const tsr__srv_client *cl, int upto) {
  for (int i = 0; upto != TSR__NOTES_NOW && i < cl->ntracks; i++)
    if (unfinished(&cl->tracks[i]) && (upto == TSR__NOTES_ALL || cl->tracks[i].closed)) return 1;
  return 0;
}

int tsr__srv_poll_notes(tsr__srv_client *cl, int upto) {
  int rc = 0;
  for (;;) {
    if (take_note(cl, 0, &rc)) continue;
    if (rc || !waiting_for(cl, upto)) return rc;
    take_note(cl, 1, &rc);
    if (rc) return rc;
  }
}

int tsr__srv_wait_file(tsr__srv_client *cl, int file) {
  int rc = 0;
  while (!rc && file < cl->ntracks && unfinished(&cl->tracks[file])) take_note(cl, 1, &rc);
  return rc;
}

void tsr__srv_berr_name(tsr__berr *b, const char *path) {
  /* Backends may name the temporary (<path>.tessera-tmp) or nothing at all:
   * the message starts with the path the program gave. */
  size_t lp = path ? strlen(path) : 0;
  if (!lp || (!strncmp(b->message, path, lp) && b->message[lp] == ':')) return;
  char msg[2 * sizeof b->message + 64]; /* cut to the message's size below */
  snprintf(msg, sizeof msg, "%s: %s", path,
           b->message[0] ? b->message : "the I/O servers failed writing it");
  size_t n = strlen(msg);
  if (n >= sizeof b->message) n = sizeof b->message - 1;
  memcpy(b->message, msg, n);
  b->message[n] = '\0';
}

int tsr__srv_take_error(tsr__srv_client *cl, int file, tsr__berr *berr) {
  int lo = file >= 0 ? file : 0, hi = file >= 0 ? file + 1 : cl->ntracks;
  if (hi > cl->ntracks) hi = cl->ntracks;
  for (int i = lo; i < hi; i++) {
    tsr__srv_track *t = &cl->tracks[i];
    if (t->expected == 0 || unfinished(t) || !t->status || t->reported) continue;
    t->reported = 1;
    if (berr) {
      *berr = t->berr;
      tsr__srv_berr_name(berr, t->path);
    }
    return t->status;
  }
  return 0;
}

int tsr__srv_group_busy(const tsr__srv_client *cl, int group) {
  int busy = 0;
  for (int i = 0; i < cl->ntracks; i++)
    busy += cl->tracks[i].group == group && unfinished(&cl->tracks[i]);
  return busy;
}

void tsr__srv_file_figures(tsr__srv_client *cl, int file, tsr__io_fstats *io) {
  if (file >= cl->ntracks || !cl->tracks[file].figures) return;
  tsr__io_fstats *t = &cl->tracks[file].io;
  if (t->writers > 0) {
    t->writer_s[2] /= t->writers;
    t->peak_buffer[2] /= t->writers;
  }
  free(io->writer_ranks);
  *io = *t;
  io->valid = 1;
  io->io_ranks = cl->L.S;
  memset(t, 0, sizeof *t); /* the ranks now belong to io (freed by the statistics) */
  cl->tracks[file].figures = 0;
}

void tsr__srv_tracks_free(tsr__srv_client *cl) {
  for (int i = 0; i < cl->ntracks; i++) {
    free(cl->tracks[i].io.writer_ranks);
    free(cl->tracks[i].path);
  }
  free(cl->tracks);
  cl->tracks = NULL;
  cl->ntracks = 0;
}
