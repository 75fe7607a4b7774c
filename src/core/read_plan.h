/* Read strategies: who opens a file read by tsr_open and how the values
 * reach every rank's tile, chosen by strategy= in tsr_open's own hints.
 *
 *   (none), direct  every rank reads its own tile (collectively through a
 *                   parallel backend; else every rank opens the file itself)
 *   serial          one reader (writer=) opens the file and reads it in
 *                   slabs of at most slab_bytes, each scattered to the tiles
 *   aggregate       `aggregators` readers (stride=) each read one contiguous
 *                   share, rearranged to the tiles
 *   split           the pieces `<path>.NNNN` of strategy=split, read as the
 *                   one file by any number of ranks (read_split.c); each
 *                   rank reads its tile as with direct
 *
 * serial and aggregate run the write plans backwards (plan/exchange.h
 * tsr__exchange_run_reverse); only their readers open the file, and the
 * first reader broadcasts the schema, so the metadata is read by as many
 * ranks as read data, not by every rank. */
#ifndef TSR_CORE_READ_PLAN_H
#define TSR_CORE_READ_PLAN_H

#include "core/internal.h"

typedef enum { TSR__READ_EACH, TSR__READ_SERIAL, TSR__READ_AGGREGATE, TSR__READ_SPLIT } tsr__read_kind;

/* The pieces of a split file behind the backend interface (read_split.c). */
extern const tsr__backend_ops tsr__split_reader;

typedef struct tsr__readers {
  tsr__read_kind kind;
  const char *name; /* what tsr_file_strategy answers: "" without strategy= */
  int n, *ranks;    /* the reader ranks (EACH: unused) */
  int mine;         /* 1 on a rank that opens the file */
  MPI_Comm comm;    /* the communicator the file is opened on (readers only) */
  MPI_Comm own;     /* the readers' communicator made here, freed by tsr__readers_free */
} tsr__readers;

/* The read strategy of tsr_open's own hints @p open_hints (only those: the
 * strategy in tsr_init's hints or TESSERA_HINTS names how files are
 * written). Local; TSR_EHINT with a message for a name that cannot read. */
int tsr__readers_choose(tsr_file *f, const char *open_hints, tsr__readers *r, char *msg,
                        size_t msglen);
/* Pick the reader ranks and their communicator for a backend that is
 * @p parallel. Collective over the file's context; returns an agreed code. */
int tsr__readers_setup(tsr_file *f, int parallel, tsr__readers *r);
/* After the readers opened the file: the first reader's schema and record
 * count to every rank. Collective; an agreed code. */
int tsr__readers_share(tsr_file *f, const tsr__readers *r, int64_t *nrecs);
/* @p root's schema @p s (and @p *extra, when given) to every rank of @p comm,
 * unpacked into @p s on the others. @p rc is the root's status: when it is
 * not 0 nothing more is sent and every rank returns it. Collective; an
 * agreed code. */
int tsr__schema_share(tsr__schema *s, int rc, int root, MPI_Comm comm, int64_t *extra);
/* tsr_get through a read plan (serial, aggregate): this rank's status. The
 * arguments are already agreed valid. Collective. */
int tsr__readers_get(tsr_file *f, tsr__sink *sk, const tsr__readers *r, int varid, int64_t frame,
                     const tsr_decomp *d, void *buf);
void tsr__readers_free(tsr__readers *r);
/* A reader's boxes of one phase of a read plan (ex->mybox) into @p region,
 * then empty reads up to @p nreads (a collective backend's agreed count).
 * Every read is made whatever failed before; the first error is returned. */
int tsr__read_region(tsr__sink *sk, const tsr__exchange *ex, int varid, int64_t frame,
                     void *region, int nreads);

#endif
