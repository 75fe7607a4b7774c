/* The sink: the one object through which anything writes (or reads) a backend
 * file. Whoever writes owns one: a strategy on its writer ranks, a split
 * piece, an I/O server. It holds the backend's ops, the open backend file,
 * the schema the file was created with, the hints, the statistics it counts
 * into and the slot the backend's message lands in; and it has the one rule
 * for draining buffered bytes. Nothing but this file calls backend ops for
 * writing (read.c calls the read ops through tsr__sink_read). */
#ifndef TSR_BACKEND_SINK_H
#define TSR_BACKEND_SINK_H

#include <mpi.h>

#include "backend/backend.h"
#include "core/stats.h"

typedef struct tsr__sink {
  const tsr__backend_ops *ops;
  tsr__bfile *bf;            /* NULL until created/opened (and on ranks that never write) */
  const tsr__schema *schema; /* the schema the backend file has; variable ids refer to it */
  const tsr__hints *hints;
  tsr__fstats *st; /* counted into: requests, writer time, buffer */
  tsr__berr *berr; /* the backend's own code and message */
  char *path;      /* the final path (owned), set by create/open */
  char *tmp_path;  /* create: where the backend writes until commit (owned) */
  int renamer;     /* create: 1 on the rank that renames at commit */
  char *staged;    /* create with stage_dir: the file's name in the stage (owned;
                      tmp_path is `<staged>.tessera-tmp`), NULL when written in place */
  /* The file's backend, whose capabilities strategies see. ops is the same
   * or, once a staged file is created, a layout stacked over it (the log of
   * stage_format=log: tsr__backend_stack), through which the writers go. */
  const tsr__backend_ops *below;
  /* checksum= (backend/sink_checksum.h): the runs this writer summed, the
   * communicator of the file's writers (create's), and on the renamer the
   * manifest lines that close made and commit writes. */
  struct tsr__sums *sums;
  MPI_Comm comm;
  char *manifest;
} tsr__sink;

/* Files appear atomically: a created file is written under
 * `<path>.tessera-tmp` in its destination directory and renamed to @p path by
 * tsr__sink_commit once its status is agreed good; a failed file's temporary
 * is removed. A killed job leaves only `*.tessera-tmp` files, recognisable
 * and overwritten by the next run. */
#define TSR__TMP_SUFFIX ".tessera-tmp"

/* Bind a sink to a backend; opens nothing. @p st and @p berr must outlive it. */
void tsr__sink_init(tsr__sink *s, const tsr__backend_ops *ops, const tsr__hints *h,
                    tsr__fstats *st, tsr__berr *berr);
/* Create @p path with the whole @p schema (kept by reference: it must outlive
 * the sink). Collective over @p comm for parallel backends; serial backends
 * get MPI_COMM_SELF. Timed as writer time; marks the rank a writer. */
int tsr__sink_create(tsr__sink *s, MPI_Comm comm, const char *path, const tsr__schema *schema);
/* Open @p path read-only, describing it in @p schema_out (see backend.h). */
int tsr__sink_open(tsr__sink *s, MPI_Comm comm, const char *path, tsr__schema *schema_out);
int tsr__sink_is_open(const tsr__sink *s);
/* 1 when every rank of the create communicator calls every operation. */
int tsr__sink_parallel(const tsr__sink *s);
/* The backend's whole_levels (backend.h): writers hold whole levels and
 * flush after every put. */
int tsr__sink_whole_levels(const tsr__sink *s);

/* Write a block of variable @p varid (an id of the sink's schema) at @p frame;
 * start/count cover the non-record dimensions. Counted as one request. */
int tsr__sink_write(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                    const int64_t count[], const void *buf, tsr__memview mem);
/* The whole frame of a variable (replicated data, e.g. WRF's Times).
 * @p lent: buf is the caller's own array under put_mode=deferred (as
 * tsr__memview.deferred), which the backend may write from later. */
int tsr__sink_write_whole(tsr__sink *s, int varid, int64_t frame, const void *buf, int lent);
/* A block of the variable's fill value (points no rank owns). */
int tsr__sink_write_fill(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                         const int64_t count[]);
/* The one drain rule. A backend that buffers (PnetCDF bput) is drained before
 * @p incoming more bytes would take this rank's pending bytes past the
 * buffer_bytes hint. Draining is collective for parallel backends, so the
 * decision is agreed over @p comm in the same reduction as @p status; every
 * rank of @p comm calls this, with s NULL on ranks that hold no file.
 * Returns the agreed status; a failed drain is stored in *drain_err (0
 * otherwise), so the caller can still take part in an exchange in progress. */
int tsr__sink_drain_if_needed(tsr__sink *s, MPI_Comm comm, int64_t incoming, int status,
                              int *drain_err);
int tsr__sink_flush(tsr__sink *s);
/* Flush and close the backend file; the names are kept for commit. A sink
 * that holds no file returns 0. */
int tsr__sink_close(tsr__sink *s);
/* After tsr__sink_close, once every rank agreed the file is good: rename the
 * temporary to the final path (on the renamer), and free the names. A staged
 * sink (stage_dir hint, src/tier) renames the temporary to its staged name
 * instead, next to a marker naming the final path, and hands it to the drain,
 * which copies it to `<path>.tessera-tmp` and renames that into place. */
int tsr__sink_commit(tsr__sink *s);
/* After tsr__sink_close, when the file failed somewhere: remove the
 * temporary (on the renamer), free the names. */
void tsr__sink_discard(tsr__sink *s);
/* tsr__sink_commit when @p ok, else tsr__sink_discard (returning 0). */
int tsr__sink_finish(tsr__sink *s, int ok);
/* After a failure while open: close and delete the temporary, free the names. */
void tsr__sink_abort(tsr__sink *s);

/* Reading. */
int tsr__sink_read(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                   const int64_t count[], void *buf, tsr__memview mem);
int64_t tsr__sink_num_records(const tsr__sink *s);

/* The MPI_Info the MPI library reports for the open file, or MPI_INFO_NULL
 * (caller frees). */
MPI_Info tsr__sink_file_info(const tsr__sink *s);

#endif
