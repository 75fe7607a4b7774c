/* I/O servers, server side: what a server holds (its place, its transport,
 * its open files) and the writer's interface that the server loop calls.
 * Direction: server_loop.c -> server_writer.c -> server_assemble.c ->
 * server_transport.c and the sink; nothing here knows struct tsr_file. */
#ifndef TSR_SERVER_STATE_H
#define TSR_SERVER_STATE_H

#include "backend/sink.h"
#include "core/hints.h"
#include "core/reduce_msg.h"
#include "core/schema.h"
#include "core/stats.h"
#include "server/server_layout.h"
#include "server/server_slabs.h"
#include "server/server_transport.h"
#include "server/server_wire.h"

/* A file a server writes: it owns the schema, hints, statistics, error slot
 * and the sink through which every backend request goes. */
typedef struct tsr__srv_file {
  int id, parallel;
  int levels; /* whole-levels backend (GRIB2): this task assembles its own levels */
  int status; /* sticky: the file failed (agreed in the group for parallel files) */
  int lerr;   /* parallel: a local error not yet agreed in the group */
  char *path;
  tsr__hints hints;
  tsr__schema schema;
  tsr__fstats st;
  tsr__berr berr;
  tsr__sink sink;
  tsr__srv_slabs slabs; /* serial, levels: the slab layout of each variable */
  double first_put;     /* MPI_Wtime when the file's first data arrived, 0 before */
  struct tsr__srv_file *next;
} tsr__srv_file;

/* The runs of a flat decomposition one client sent (server_runs.c): kept
 * for the life of the server, so that they travel once. pos[r]: packed
 * position of run r's first element. */
typedef struct tsr__srv_runs {
  int src;    /* the client's wcomm rank */
  int64_t id; /* the decomposition's id on that client */
  int64_t nruns, cap, *runs, *pos;
  struct tsr__srv_runs *next;
} tsr__srv_runs;

typedef struct {
  tsr__srv_layout L;
  tsr__transport tp;
  int g, t, index; /* group, task, server index g*T+t */
  int comm_rank;   /* this server's rank in tsr_init's communicator (statistics) */
  MPI_Comm gcomm;  /* the group */
  int c0;          /* wcomm rank of the first client (the op stream) */
  int blo, bhi;    /* model indices of this task's clients */
  tsr__srv_file *files; /* open files, in the order opened */
  tsr__srv_buf in;      /* the message taken last (the op that is running) */
  tsr__srv_buf slab;    /* serial assembly: one slab box */
  tsr__wire_hdr *hdrs;  /* serial PUT round: one header per model rank */
  double writer_s;      /* writer time of the files closed so far */
  /* server_buffer_bytes: the bound on memory for data in flight (0 = none);
   * no message is larger than chunk = tsr__srv_chunk (bound/4, or bound/8
   * less a bundle's framing with concentrators), slabs neither, the bundles
   * held (concentrators) stay under the rest (server_conc.c), and the
   * backend's buffer of each file is held to bound/2. */
  int64_t bound, chunk;
  int64_t peak; /* most memory held in the server's buffers for data in flight */
  int64_t msgs; /* messages received from model ranks (concentrators: bundles) */
  int nopen;                   /* files opened (outputs), for the sizing report */
  double t_first_open, t_last_open;
  tsr__outbox out;      /* replies in flight */
  tsr__srv_runs *kept;  /* flat decompositions' runs, per client */
  /* reduce= (server_reduce.h): the servers' communicator (server 0 holds
   * the accumulators), the state, and a failure to save a period, which
   * this server's FINAL reports. */
  MPI_Comm scomm;
  struct tsr__srv_reduce *red;
  int red_err;
  char red_msg[256];
} tsr__srv_server;

/* ---- server_writer.c: one handler per message kind. Each consumes every
 * message of its op (s->in holds the op's first one) and returns the file's
 * status; FLUSH and CLOSE fill the reply the loop sends. ---- */
typedef int (*tsr__srv_handler)(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_open(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_put(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_putg(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_flush(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_close(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
/* reduce= (server_reduce.h): a derived variable from the accumulators; a
 * stream's definition and an incomplete period's save (server 0). */
int tsr__srv_putr(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_rdef(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
int tsr__srv_rsave(tsr__srv_server *s, const tsr__wire_hdr *h, tsr__wire_reply *r);
/* Record the memory this server holds now for data in flight (its receive
 * and slab buffers; backend buffers are held to bound/2 apart) in s->peak.
 * Defined in server_assemble.c, below its three callers. */
void tsr__srv_note_memory(tsr__srv_server *s);
/* The oldest file still open on this server, or -1. */
int tsr__srv_first_open(const tsr__srv_server *s);
/* Writer time of this server since tsr_init (closed and open files). */
double tsr__srv_writer_total(const tsr__srv_server *s);
/* Abort (close and delete) a failed file; collective for parallel files,
 * which only fail at agreed points. */
void tsr__srv_fail(tsr__srv_file *sf, int code);

/* ---- server_assemble.c: a PUT round of a serial file on the group root,
 * or of a whole-levels file on every task. ---- */
/* Receive every client's header (the first client's is in s->in) and pieces
 * of the round and write the variable slab box by slab box through @p sf's
 * sink; when the file already failed, or a client could not hand its tile
 * over, the pieces are received and dropped. Returns the first error. */
int tsr__srv_assemble(tsr__srv_server *s, tsr__srv_file *sf);

/* ---- server_runs.c: flat tiles (PUT with flat set). ---- */
/* The runs kept for client @p src's decomposition of @p h: with flat 1 the
 * @p p runs that follow the header are added first (a new decomposition, or
 * the first part at = 0, starts afresh). NULL when there are none
 * (*rc: TSR_EINVAL, TSR_ENOMEM). Whatever the file's status, so that the
 * client's record of what was sent stays true. */
tsr__srv_runs *tsr__srv_runs_keep(tsr__srv_server *s, int src, const tsr__wire_hdr *h,
                                  const char *p, int *rc);
/* Parallel: write @p avail bytes of data packed in run order, from packed
 * position h->at of kept runs @p k, through @p sink, each run as the few
 * boxes it is (and to reduce=, server_reduce.h). */
int tsr__srv_write_runs(tsr__srv_server *s, tsr__sink *sink, const tsr__wire_hdr *h, const tsr__srv_runs *k,
                        char *data, int64_t avail);
/* Free every kept decomposition. */
void tsr__srv_runs_free(tsr__srv_server *s);
/* Serial: the elements of @p runs in [lo, hi) and (*first) the first run
 * that meets the range. */
int64_t tsr__srv_runs_in(const int64_t *runs, int64_t nruns, int64_t lo, int64_t hi,
                         int64_t *first);
/* Serial: place a piece (those elements, packed in run order at @p src) into
 * @p slab, which holds [lo, hi). */
void tsr__srv_runs_place(const int64_t *runs, int64_t nruns, int64_t first, int64_t lo, int64_t hi,
                         const char *src, size_t es, char *slab);

/* ---- server_loop.c ---- */
/* Serve until the model's FINAL; then close what is left open and free. */
int tsr__srv_serve(tsr__srv_server *s);

#endif
