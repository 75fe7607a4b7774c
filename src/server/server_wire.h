/* The wire format between model ranks and I/O servers: tags, message kinds,
 * the op header and the servers' replies. Both sides include it; neither
 * side's state is here (the model side's is in server_client.h, the
 * servers' in server_state.h; roles are in server_layout.h).
 *
 * Every server reads its op stream from its first client (for the group
 * root, model rank 0). A data op (PUT) is followed by one message from every
 * participating client. MPI's non-overtaking rule per (source,
 * communicator) keeps every client's messages in the order of the model's
 * collective calls, so the wire carries no sequence numbers. Messages are raw
 * bytes of these structs: both sides run the same build. */
#ifndef TSR_SERVER_WIRE_H
#define TSR_SERVER_WIRE_H

#include <stdint.h>

#include "backend/backend.h" /* tsr__berr */
#include "core/stats.h"      /* TSR__NBUCKETS, TSR__NMPIIO */
#include "tessera.h"         /* TSR_MAX_DIMS */

/* Tags on the private model<->server communicator. */
enum {
  TSR__WIRE_TAG_HDR = 7101,  /* client -> server: an op header (+ payload) */
  TSR__WIRE_TAG_DATA = 7102, /* client -> root: one piece of a tile (serial backends) */
  TSR__WIRE_TAG_ACK = 7103,  /* server -> first client: flush / finalize done */
  TSR__WIRE_TAG_NOTE = 7104, /* server -> model rank 0: a file is finished */
  TSR__WIRE_TAG_BUNDLE = 7105 /* concentrator -> server: members' messages (server_conc.c) */
};

/* Message kinds (tsr__wire_hdr.op); the server loop dispatches on them. */
enum {
  TSR__WIRE_OPEN = 1, /* payload: tsr__hints, path, packed schema */
  TSR__WIRE_PUT,      /* a tile: parallel: payload = [hole boxes] + [runs] + data; serial:
                         [runs], pieces follow */
  TSR__WIRE_PUTG,     /* a replicated variable, from model rank 0 to the root */
  TSR__WIRE_FLUSH,
  TSR__WIRE_CLOSE,
  TSR__WIRE_FINAL,
  TSR__WIRE_PUTR,     /* reduce=: a derived variable from the accumulators (server_reduce.c) */
  TSR__WIRE_RDEF,     /* reduce=: a stream's definition (tsr__rdef), to the accumulators' server */
  TSR__WIRE_RSAVE,    /* reduce=: save an incomplete period (tsr__rsave), to the same */
  TSR__WIRE_NKINDS
};

typedef struct {
  int32_t op, file, varid, nd;
  int32_t err;      /* PUT/PUTG: the client failed to hand its data over (ENOMEM, ETOOBIG);
                     * CLOSE: the file failed on the model side, or was abandoned
                     * (tsr_abort): the servers delete it */
  int32_t nholes;   /* PUT (parallel): hole boxes after the header (model rank 0; flat: each its share) */
  int32_t npieces;  /* PUT (serial): DATA messages that follow from this client */
  int32_t parallel; /* OPEN: 1 the file's backend is parallel (every server writes);
                     * 2 also whole levels: every server assembles its own levels */
  int32_t nparts;   /* PUT (parallel): messages of this client's tile in this round (0 = 1) */
  int32_t wire_f64; /* PUT: the data are doubles of a float variable; the server converts */
  /* PUT of a flat tile (index maps, box lists: the decomposition's runs,
   * plan/runs.h; start is 0 and count the global shape), data packed in run
   * order. flat 1: nruns runs (lo, hi pairs of row-major indices, ascending)
   * follow the holes (parallel) or the header as DATA messages
   * (serial, tsr__wire_runs_per_msg), and the server keeps
   * them for (this client, decomposition `decomp`); flat 2: the server has
   * them already, none follow. Parallel: this part's data start at packed
   * position `at` (its runs, with flat 1, are appended to the kept ones). */
  int32_t flat, pad_;
  int64_t nruns, decomp, at;
  /* reduce= (server_reduce.c). PUT of a reduced variable: rvar its index
   * + 1 in stream rstream, rseq its frames put in the stream before this
   * one (this job), rframe the frames of its period before this one.
   * PUTR: rvar the item + 1, rseq the variable's frames put so far (all
   * folded before it is written), rframe the period's frames. */
  int32_t rstream, rvar;
  int64_t rseq, rframe;
  int64_t frame;
  int64_t start[TSR_MAX_DIMS], count[TSR_MAX_DIMS]; /* PUT: the sender's tile */
  int64_t len_path, len_schema;                     /* OPEN */
  char backend[16];                                 /* OPEN: the backend's registry name */
} tsr__wire_hdr;

/* One server's figures for one file, sent with its close note: what the
 * server's sink counted, so that model rank 0 can fill the file's
 * writer-side statistics (tsr__io_fstats) from the servers that wrote it. */
typedef struct {
  int32_t wrote;          /* 1: this server created the file (it is a writer) */
  int32_t rank;           /* the server's rank in tsr_init's communicator */
  double writer_s;        /* time in the backend for this file */
  double first_put_to_close_s; /* first data of the file received -> file closed */
  int64_t writes, bytes_written, size_hist[TSR__NBUCKETS];
  int64_t not_aligned, consec, offsets_known, alignment;
  int64_t peak_buffer;        /* bytes this server held for the file's data */
  int64_t mpiio[TSR__NMPIIO]; /* reported by MPI-IO on the group root, -1 unknown */
  uint32_t mpiio_not_taken;   /* the group root's: hints its MPI-IO did not take */
  uint32_t pad;
} tsr__wire_fstats;

/* Acknowledgements (kind FLUSH / FINAL, to the first client) and notes
 * (kind CLOSE, to model rank 0). */
typedef struct {
  int32_t kind;
  int32_t file;
  int32_t status;  /* the file's status on that server (0 or TSR_E*) */
  int32_t server;  /* server index g*T + t */
  double writer_s; /* the server's writer time since tsr_init */
  int64_t peak_bytes; /* the most memory the server held for data in flight since tsr_init */
  int64_t msgs;       /* messages the server received from model ranks since tsr_init */
  int64_t reduce_bytes; /* reduce=: the accumulators this server holds now */
  /* For the sizing report (FINAL): files opened, seconds from the first to
   * the last OPEN, and from the first OPEN to now. */
  int32_t outputs, pad_;
  double span_s, life_s;
  tsr__berr berr;
  /* FINAL: the server's drains of staged files (stage_dir), for the
   * model's `TESSERA stage:` statistics. */
  int64_t drain_files, drain_bytes, drain_failed;
  double drain_busy_s, drain_wait_s;
  tsr__wire_fstats fs; /* notes only */
} tsr__wire_reply;

/* Serial backends: a flat tile's runs (flat 1) follow its header as DATA
 * messages of at most this many runs each, so that no message is larger
 * than the servers' bound @p chunk (tsr__srv_chunk; 0 = none). */
static inline int64_t tsr__wire_runs_per_msg(int64_t chunk) {
  int64_t n = chunk / (2 * (int64_t)sizeof(int64_t));
  return chunk <= 0 ? (int64_t)1 << 26 : n > 0 ? n : 1;
}

/* Round a message part up so that the next part starts aligned. */
static inline int64_t tsr__wire_align(int64_t n) { return (n + 15) & ~(int64_t)15; }

#endif
