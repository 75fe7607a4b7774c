/* I/O servers: roles, the model<->server message format, and the internal
 * interfaces the server files share (docs/servers.md has the whole design).
 *
 * Every model rank is a client of one server per group: model index m talks
 * to task m*T/M (balanced contiguous blocks). For a file written with a
 * parallel backend (pnetcdf) each client sends its tiles to that server;
 * with a serial backend (netcdf) every client sends to the group root, which
 * assembles slab by slab. Control messages (open, close, flush, finalize) go
 * from each server's *first* client only. Every server processes "ops" in
 * the order its first client sent them (model rank 0 for the root), and for a
 * data op receives one message from each participating client: MPI's
 * non-overtaking rule per (source, communicator) keeps every client's stream
 * in that same order, so no sequence numbers are needed. */
#ifndef TSR_SERVER_PROTO_H
#define TSR_SERVER_PROTO_H

#include "core/internal.h"

/* Tags on the private model<->server communicator. */
enum {
  TSR__SRV_TAG_HDR = 7101,  /* client -> server: an op header (+ payload) */
  TSR__SRV_TAG_DATA = 7102, /* client -> root: one piece of a tile (serial backends) */
  TSR__SRV_TAG_ACK = 7103,  /* server -> first client: flush / finalize done */
  TSR__SRV_TAG_NOTE = 7104  /* server -> model rank 0: a file is finished */
};

/* Ops. */
enum {
  TSR__SRV_OPEN = 1, /* payload: tsr__hints, path, packed schema */
  TSR__SRV_PUT,      /* a tile: parallel: payload = [holes] + data; serial: pieces follow */
  TSR__SRV_PUTG,     /* a replicated variable from model rank 0 to the root */
  TSR__SRV_FLUSH,
  TSR__SRV_CLOSE,
  TSR__SRV_FINAL
};

typedef struct {
  int32_t op, file, varid, nd;
  int32_t err;     /* PUT: the client failed to hand its tile over (ENOMEM, ETOOBIG) */
  int32_t nholes;  /* PUT (parallel) from model rank 0: hole boxes after the header */
  int32_t npieces; /* PUT (serial): DATA messages that follow from this client */
  int32_t parallel; /* OPEN: the file's backend is parallel (every server writes) */
  int64_t frame;
  int64_t start[TSR_MAX_DIMS], count[TSR_MAX_DIMS]; /* PUT: the sender's tile */
  int64_t len_path, len_schema;                     /* OPEN */
  char backend[16];                                 /* OPEN */
} tsr__srv_hdr;

typedef struct {
  int32_t kind;   /* TSR__SRV_FLUSH / TSR__SRV_FINAL (acks), TSR__SRV_CLOSE (notes) */
  int32_t file;
  int32_t status; /* the file's status on that server (0 or TSR_E*) */
  int32_t server; /* server index g*T + t */
  double writer_s; /* the server's writer time since tsr_init */
  tsr__berr berr;
} tsr__srv_reply;

/* Where everybody is. Ranks are ranks of wcomm (a duplicate of tsr_init's comm). */
typedef struct {
  MPI_Comm wcomm;
  int G, T, M, S; /* groups, tasks per group, model ranks, servers */
  int first;      /* 1: the servers are the first S ranks */
} tsr__srv_layout;

static inline int tsr__srv_server_rank(const tsr__srv_layout *L, int g, int t) {
  return (L->first ? 0 : L->M) + g * L->T + t;
}
static inline int tsr__srv_model_rank(const tsr__srv_layout *L, int m) {
  return L->first ? L->S + m : m;
}
/* The task of the group that model index m is a client of. */
static inline int tsr__srv_task_of(const tsr__srv_layout *L, int m) {
  return (int)((int64_t)m * L->T / L->M);
}
/* Model indices [lo, hi) that are clients of task t: m*T/M == t. */
static inline int tsr__srv_block_lo(const tsr__srv_layout *L, int t) {
  return (int)(((int64_t)t * L->M + L->T - 1) / L->T);
}

/* Round a message part up so that the next part starts aligned. */
static inline int64_t tsr__srv_align(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* ---- model side (server_client.c) ---- */
typedef struct tsr__srv_track tsr__srv_track;
struct tsr__server_client {
  tsr__srv_layout L;
  int m;         /* this rank's model index (its rank in the model communicator) */
  int next_file; /* file ids, the same on every model rank */
  int rr;        /* round-robin position */
  int64_t want;  /* the ring's size: tsr_init's buffer_bytes */
  /* The hand-off ring: messages are packed here and sent with MPI_Isend. */
  char *ring;
  int64_t cap, head, tail, peak;
  int64_t touched; /* high-water mark: pages below it are warm */
  int nreg, reg0, regcap; /* FIFO of regions: [start, end) and their open requests */
  struct tsr__srv_region *regs;
  int nreq, req0, reqcap; /* FIFO of requests, oldest first */
  MPI_Request *reqs;
  /* Model rank 0: what the servers told about every file. */
  tsr__srv_track *tracks;
  int ntracks;
  double server_writer_s; /* max over the replies this rank received */
};

/* Reserve @p n contiguous bytes, waiting for old sends while the ring is
 * full (blocked output time). Returns the offset in cl->ring, or -1 on ENOMEM. */
int64_t tsr__srv_ring_reserve(struct tsr__server_client *cl, int64_t n);
/* Send part of the newest reservation. */
int tsr__srv_ring_send(struct tsr__server_client *cl, int64_t off, int64_t len, int dest, int tag);
/* Give back the newest reservation unsent. */
void tsr__srv_ring_cancel(struct tsr__server_client *cl);
/* Complete finished sends without waiting (all = 1: wait for every send). */
int tsr__srv_ring_progress(struct tsr__server_client *cl, int all);
int64_t tsr__srv_ring_used(const struct tsr__server_client *cl);
void tsr__srv_client_free(struct tsr__server_client *cl);

/* Model rank 0's file tracking: a file opened in a group expects one note per
 * server that writes it. */
int tsr__srv_track_open(struct tsr__server_client *cl, int file, int group, int expected);
void tsr__srv_track_close(struct tsr__server_client *cl, int file);
void tsr__srv_track_reported(struct tsr__server_client *cl, int file);
/* Receive notes: without blocking (upto = 0), until every closed file is
 * finished (1), or until every file is finished (2). */
int tsr__srv_poll_notes(struct tsr__server_client *cl, int upto);
/* The first error of a finished file not reported yet (marked reported now). */
int tsr__srv_take_error(struct tsr__server_client *cl, tsr__berr *berr);
/* Groups with unfinished files: the idle pick. */
int tsr__srv_pick_idle(struct tsr__server_client *cl);

/* ---- server side (server_loop.c, server_writer.c) ---- */
typedef struct tsr__srv_file tsr__srv_file;
typedef struct {
  tsr__srv_layout L;
  int g, t, index;   /* group, task, server index g*T+t */
  MPI_Comm gcomm;    /* the group */
  int c0;            /* wcomm rank of the first client (the op stream) */
  int blo, bhi;      /* model indices of this task's clients */
  tsr__srv_file *files;
  void *msg, *slab, *stage;
  int64_t msg_cap, slab_cap, stage_cap;
  tsr__srv_hdr *hdrs; /* one per model rank: the headers of a serial PUT round */
  double writer_s;    /* writer time of the files closed so far */
  int nout, outcap;   /* replies in flight */
  MPI_Request *outreq;
  tsr__srv_reply **outbuf;
} tsr__srv_server;

/* Receive the next message from @p src with @p tag into s->msg; *len bytes. */
int tsr__srv_recv(tsr__srv_server *s, int src, int tag, int64_t *len);
int tsr__srv_serve(tsr__srv_server *s);
double tsr__srv_writer_total(const tsr__srv_server *s);
/* server_writer.c: one handler per op; each consumes every message of the op. */
int tsr__srv_open(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len);
void tsr__srv_put(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len);
void tsr__srv_putg(tsr__srv_server *s, const tsr__srv_hdr *h, int64_t len);
int tsr__srv_flush(tsr__srv_server *s, int file, tsr__berr *berr);
int tsr__srv_close(tsr__srv_server *s, int file, tsr__berr *berr);
/* The oldest file still open on this server, or -1. */
int tsr__srv_first_open(const tsr__srv_server *s);

#endif
