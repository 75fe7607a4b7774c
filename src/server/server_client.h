/* I/O servers, model side: what a model rank holds (its place, transport and
 * hand-off ring; on model rank 0 the record of what the servers reported),
 * the per-file state of strategy=servers, and the interfaces of the model
 * side's files. Direction: strategy/servers.c -> server_handoff.c ->
 * server_ring.c -> server_transport.c; strategy/servers.c -> server_pick.c
 * -> server_notes.c -> server_transport.c. */
#ifndef TSR_SERVER_CLIENT_H
#define TSR_SERVER_CLIENT_H

#include "core/hints.h"
#include "core/stats.h"
#include "server/server_layout.h"
#include "server/server_ring.h"
#include "server/server_slabs.h"
#include "server/server_transport.h"
#include "server/server_wire.h"

typedef struct tsr__srv_track tsr__srv_track;   /* server_notes.c */
typedef struct tsr__srv_stream tsr__srv_stream; /* server_pick.c */
typedef struct tsr__srv_sizing tsr__srv_sizing; /* server_sizing.c */

/* One per model rank and context (tsr_ctx.servers). */
struct tsr__server_client {
  tsr__srv_layout L;
  tsr__transport tp;
  int m;         /* this rank's model index (its rank in the model communicator) */
  int next_file; /* file ids, the same on every model rank */
  int rr;        /* round-robin position */
  tsr__srv_ring ring;
  /* Model rank 0: what the servers told about every file. */
  tsr__srv_track *tracks;
  int ntracks;
  /* Every model rank: the streams of frames_per_outfile (server_pick.c). */
  tsr__srv_stream *streams;
  int nstreams;
  double server_writer_s; /* max over the replies this rank received */
  int64_t server_peak;    /* the servers' peak memory, max over the replies received */
  int64_t server_msgs;    /* messages a server received, max over the replies received */
  int64_t server_reduce;  /* reduce=: bytes of accumulators server 0 holds, the latest heard */
  int64_t chunk; /* tsr__srv_chunk: the largest message a server accepts (0 = any) */
  double t_init;            /* MPI_Wtime at tsr_init */
  tsr__srv_sizing *sizing;  /* tsr_finalize with statistics on: the FINAL figures */
  /* Flat decompositions whose runs a server keeps: (decomposition id,
   * server's wcomm rank) pairs (server_handoff_runs.c). */
  int64_t *sent;
  int64_t nsent, capsent;
};
typedef struct tsr__server_client tsr__srv_client;

/* A file written through the servers, on a model rank (tsr_file.sdata). */
typedef struct {
  int id, group, parallel;
  int levels; /* whole-levels backend (GRIB2): every task writes whole levels */
  int server; /* wcomm rank this rank sends the file's data to */
  int first;  /* 1: this rank sends the file's control messages to it */
  tsr__srv_slabs slabs; /* serial and whole-levels: the slab layouts, per variable */
  int stream;           /* frames_per_outfile stream, or -1 */
  int64_t frames;       /* record frames put so far (highest + 1) */
  int opened;           /* 1 once enddef handed the file to the servers */
} tsr__srv_cfile;

/* A model rank's state: index @p m, a ring of @p ring_bytes (allocated at the
 * first hand-off), the transport @p tp over L->wcomm (both owned from now on:
 * tsr__srv_client_free frees them, collectively over L->wcomm). */
int tsr__srv_client_new(const tsr__srv_layout *L, int m, int64_t ring_bytes,
                        const tsr__transport *tp, tsr__srv_client **out);
void tsr__srv_client_free(tsr__srv_client *cl);

/* ---- server_handoff.c: pack a tile (or replicated data) into the ring and
 * start its sends; returns at once. @p esize: the variable's element size;
 * @p f64: buf holds doubles of a float variable (tsr_put_typed). ---- */
int tsr__srv_handoff_put(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                         const tsr__wire_hdr *h, const struct tsr_decomp *d, const void *buf,
                         size_t esize, int f64);
/* The error header that completes a round this rank could not hand over
 * (server_handoff_header.c, with tsr__srv_send_control). */
int tsr__srv_send_failed(tsr__srv_client *cl, const tsr__wire_hdr *h0, int err, int dest);
/* How a tile's values go on the wire (tsr_put_typed: double memory, float
 * variable): as they are, converted to float here, or as doubles that the
 * server converts. */
enum { TSR__HOW_AS_IS, TSR__HOW_TO_FLOAT, TSR__HOW_DOUBLES };
/* Bytes of one element on the wire. */
static inline size_t tsr__srv_wire_size(size_t es, int how) {
  return how == TSR__HOW_DOUBLES ? sizeof(double) : es;
}
/* ---- server_handoff_runs.c: a flat tile (index map, box list: d->tiles.flat,
 * its buffer packed in run order) goes with its runs the first time, to a
 * parallel backend's server in parts of at most the servers' message bound,
 * or to a serial root (whole levels: every task) as [runs] plus one piece per
 * slab box. ---- */
int tsr__srv_handoff_runs(tsr__srv_client *cl, const tsr__srv_cfile *cf, tsr__wire_hdr *h,
                          const struct tsr_decomp *d, const void *buf, size_t es, int how);
/* Serial (and whole levels: task @p t of the group, wcomm rank @p dest). */
int tsr__srv_handoff_run_pieces(tsr__srv_client *cl, tsr__srv_cfile *cf, const tsr__hints *hints,
                                const tsr__wire_hdr *h0, const struct tsr_decomp *d,
                                const void *buf, size_t es, int how, int t, int dest);
int tsr__srv_handoff_global(tsr__srv_client *cl, const tsr__srv_cfile *cf, const tsr__wire_hdr *h,
                            const void *buf, int64_t bytes);
/* A header-only control message (OPEN without payload, FLUSH, CLOSE, FINAL);
 * @p err travels in the header (CLOSE: the file failed on the model side or
 * was abandoned, and the servers delete it; 0 otherwise). */
int tsr__srv_send_control(tsr__srv_client *cl, int op, int file, int err, int dest);

/* ---- server_pick.c: which group writes a new file. ---- */
/* Round-robin over files, or with server_pick=idle the first group with no
 * unfinished file (decided on model rank 0 and broadcast over @p comm); with
 * frames_per_outfile = N > 1 the files of one stream stay with a group until
 * it took N frames of it. *stream is the file's stream (or -1). Collective
 * over the model communicator @p comm. Returns the group, or -1 (TSR_EMPI). */
int tsr__srv_pick_group(tsr__srv_client *cl, const char *path, const tsr__hints *h, MPI_Comm comm,
                        int *stream);
/* Count @p frames more frames of @p stream (-1: none). */
void tsr__srv_stream_add(tsr__srv_client *cl, int stream, int64_t frames);
void tsr__srv_streams_free(tsr__srv_client *cl);

/* ---- server_notes.c: model rank 0's record of the servers' notes. ---- */
/* A file opened in @p group expects one note per server that writes it;
 * @p figures: keep the notes' figures for the file's statistics; @p path
 * names the file in the message of its error. */
int tsr__srv_track_open(tsr__srv_client *cl, int file, int group, int expected, int figures,
                        const char *path);
void tsr__srv_track_close(tsr__srv_client *cl, int file);
void tsr__srv_track_reported(tsr__srv_client *cl, int file);
enum { TSR__NOTES_NOW, TSR__NOTES_CLOSED, TSR__NOTES_ALL };
/* Receive notes: without blocking (NOW), until every closed file is finished
 * (CLOSED), or until every file is finished (ALL). */
int tsr__srv_poll_notes(tsr__srv_client *cl, int upto);
/* Receive notes until every note of @p file is in. */
int tsr__srv_wait_file(tsr__srv_client *cl, int file);
/* Start @p b's message with "@p path: " unless it does already: an error
 * reported at a call on another file must say which file failed. */
void tsr__srv_berr_name(tsr__berr *b, const char *path);
/* The first error of a finished file not reported yet (marked reported now);
 * its message names the file. @p file >= 0: that file's error only. */
int tsr__srv_take_error(tsr__srv_client *cl, int file, tsr__berr *berr);
/* Number of unfinished files of @p group. */
int tsr__srv_group_busy(const tsr__srv_client *cl, int group);
/* Move the servers' figures of a finished @p file into @p io (valid = 1). */
void tsr__srv_file_figures(tsr__srv_client *cl, int file, tsr__io_fstats *io);
void tsr__srv_tracks_free(tsr__srv_client *cl);

/* ---- server_sizing.c: the sizing report at tsr_finalize (TESSERA_STATS). ---- */
int tsr__srv_sizing_new(tsr__srv_client *cl);
/* Keep the figures of group @p g's FINAL acknowledgement @p r. */
void tsr__srv_sizing_add(tsr__srv_client *cl, int g, const tsr__wire_reply *r);
/* Collective over the model communicator; model rank 0 prints how busy each
 * group was, how long the model waited, and "add a group" / "fewer servers
 * would do" with the numbers. */
void tsr__srv_sizing_report(tsr__srv_client *cl, MPI_Comm comm, double blocked_s, double wall_s);
void tsr__srv_sizing_free(tsr__srv_client *cl);

#endif
