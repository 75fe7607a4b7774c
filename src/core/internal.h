/* The internal shape of contexts, decompositions and files, shared by the API
 * layer (src/core), the strategies (src/strategy) and the servers (src/server). */
#ifndef TSR_CORE_INTERNAL_H
#define TSR_CORE_INTERNAL_H

#include "backend/backend.h"
#include "core/hints.h"
#include "core/log.h"
#include "core/schema.h"
#include "core/stats.h"
#include "plan/box.h"
#include "plan/exchange.h"
#include "plan/layout.h"
#include "tessera.h"

struct tsr__server_client; /* model side of the I/O servers (src/server) */
struct tsr__reader;        /* a file opened for reading (src/core/read.c) */

struct tsr_ctx {
  MPI_Comm comm; /* model communicator (private duplicate, MPI_ERRORS_RETURN) */
  int rank, size;
  char *init_hints;    /* tsr_init's hint text, re-resolved for every file */
  tsr__hints hints;    /* tsr_init's hints resolved without a path */
  tsr_stats stats;     /* this rank's running totals */
  uint64_t next_id;    /* ids of decompositions, for plan caches */
  struct tsr__server_client *servers; /* NULL without I/O servers */
  int nopen;           /* files open on this context */
};

/* A cached write plan of one decomposition: a layout and the exchanges that
 * feed its pieces (one per phase). */
typedef struct tsr__plan {
  int kind;           /* strategy kind that built it */
  int64_t key1, key2; /* strategy parameters it depends on */
  size_t esize;
  tsr__layout layout;
  int nphases;
  tsr__exchange *phases;
  int64_t max_region_elems, max_send_bytes, max_stage_bytes;
  struct tsr__plan *next;
} tsr__plan;

struct tsr_decomp {
  tsr_ctx *ctx;
  uint64_t id;
  int ndims;
  int64_t gsize[TSR_MAX_DIMS];
  tsr__box tile; /* this rank's tile */
  tsr__box mem;  /* this rank's memory box (contains tile) */
  int64_t *all;  /* every rank's tile: size * 2 * ndims (start then count) */
  int64_t my_elems, owned_elems, total_elems;
  int nholes;     /* boxes no rank owns (filled with the fill value) */
  tsr__box *holes;
  tsr__plan *plans;
};

/* Rank r's tile as a box. */
void tsr__decomp_tile_of(const struct tsr_decomp *d, int r, tsr__box *out);

/* Strategies: what a file does between the API checks and the backend. Every
 * op is called on every model rank, after the API layer has agreed that the
 * arguments are valid everywhere; it returns this rank's status, which the
 * API layer agrees on afterwards. */
typedef struct tsr__strategy_ops {
  const char *name;
  int (*enddef)(tsr_file *f);
  int (*put)(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf);
  int (*put_global)(tsr_file *f, int varid, int64_t frame, const void *buf);
  int (*flush)(tsr_file *f);
  int (*close)(tsr_file *f); /* frees f->sdata; f itself is freed by the API */
  void (*abort)(tsr_file *f); /* after a failed enddef/close: release, delete */
} tsr__strategy_ops;

extern const tsr__strategy_ops tsr__strategy_serial;
extern const tsr__strategy_ops tsr__strategy_direct;
extern const tsr__strategy_ops tsr__strategy_aggregate;
extern const tsr__strategy_ops tsr__strategy_split;
extern const tsr__strategy_ops tsr__strategy_servers;

struct tsr_file {
  tsr_ctx *ctx;
  char *path;
  tsr__hints hints;
  const tsr__strategy_ops *strategy;
  const tsr__backend_ops *backend;
  tsr__schema schema;
  /* The schema the backend file was created with, when a strategy lays the
   * file out differently (split pieces); NULL = schema. Backend variable ids
   * passed to tsr__write_block refer to it. */
  const tsr__schema *backend_schema;
  int in_define; /* 1 in define mode */
  void *sdata;   /* strategy-private state */
  int last_err;
  tsr__berr berr;
  tsr__fstats st;
  /* Non-NULL for a file opened by tsr_open (src/core/read.c): read-only, in
   * data mode, with no strategy (strategy stays NULL). */
  struct tsr__reader *reader;
};

/* Does decomposition @p d describe the non-record shape of variable @p varid
 * (and belong to the file's context)? The one shape check of tsr_put/tsr_get. */
int tsr__shape_matches(const tsr_file *f, int varid, const tsr_decomp *d);
/* A new file handle for tsr_create / tsr_open: path copied, schema empty,
 * hints resolved (tsr_init's, then @p hints, then TESSERA_HINTS for @p path).
 * *out is set whenever the handle could be allocated, also when the status is
 * an error, so the caller can agree on it through the handle; the message goes
 * into f->berr. Frees nothing on error: see tsr__file_free. */
int tsr__file_new(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **out);
/* Free a handle and what it owns (schema, path, reader); accepts NULL. */
void tsr__file_free(tsr_file *f);

/* Close the backend file of a file opened for reading and free the reader
 * (collective for parallel backends); tsr_close frees the rest. */
int tsr__reader_close(tsr_file *f);

/* Agreement: every rank learns the most negative status (MPI_MIN). */
int tsr__agree(MPI_Comm comm, int err);
/* Agree on a status and on "any rank raised flag" in one reduction. */
int tsr__agree_flag(MPI_Comm comm, int err, int *flag);
/* Agree on a file's status; the backend message of the lowest failing rank
 * is copied to every rank's handle. */
int tsr__file_agree(tsr_file *f, int err);

/* Write one block through the file's backend, counting it in the statistics. */
int tsr__write_block(tsr_file *f, tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                     const int64_t count[], const void *buf, tsr__memview mem);
/* Timed backend flush / close for the statistics. */
int tsr__backend_flush(tsr_file *f, tsr__bfile *bf);
int tsr__backend_close(tsr_file *f, tsr__bfile *bf);
int tsr__backend_create(tsr_file *f, MPI_Comm comm, const char *path, const tsr__schema *s,
                        tsr__bfile **bf);

/* The plan of a decomposition for a layout, built on first use and cached.
 * kind/key1/key2 identify the layout; make_layout builds it when missing. */
typedef int (*tsr__layout_fn)(const tsr_decomp *d, const void *arg, tsr__layout *out);
int tsr__plan_get(tsr_decomp *d, int kind, int64_t key1, int64_t key2, size_t esize,
                  int phased, tsr__layout_fn make_layout, const void *arg, tsr__plan **out);
void tsr__plans_free(tsr__plan *p);

/* Write the fill value over the boxes no rank owns (for strategies where each
 * writer writes only what it owns). Called by the writer given. */
int tsr__write_holes(tsr_file *f, tsr__bfile *bf, int varid, int64_t frame, const tsr_decomp *d);

double tsr__now(void);
/* Grow a reusable buffer to at least @p need bytes (never shrinks). */
int tsr__grow(void **buf, int64_t *cap, int64_t need);

#endif
