/* tessera-bench --plain METHOD: the shared state of plain.c (gather, split:
 * NetCDF) and plain_pnetcdf.c (PnetCDF). Two files because netcdf.h and
 * pnetcdf.h define the same NC_* macros and cannot meet in one unit. */
#ifndef TSR_BENCH_PLAIN_H
#define TSR_BENCH_PLAIN_H

#include "bench.h"

enum { PLAIN_GATHER = 1, PLAIN_SPLIT, PLAIN_PNC_IPUT, PLAIN_PNC_BPUT, PLAIN_PNC_VARA };

/* The define calls of one library, with one signature for both. */
typedef struct {
  const char *lib; /* "NetCDF", "PnetCDF": for messages */
  int (*def_dim)(int ncid, const char *name, int64_t len, int *id);
  int (*def_var)(int ncid, const char *name, int type, int nd, const int dimids[], int *id);
  int (*put_att)(int ncid, int varid, const char *name, int type, size_t n, const void *v);
  const char *(*strerror)(int status);
} plain_api;

struct bench_plain {
  int method;
  int ncid, open;  /* open: this rank holds the file */
  int *varid;      /* per schema variable; -1 when left out (split pieces) */
  int failed;      /* first local failure, agreed on at the end of a frame */
  /* gather: every rank's tile of every shape ([rank][2 * ndims]: start, count) */
  int64_t **tiles;
  int *counts, *displs; /* bytes, per rank (MPI_Gatherv) */
  void *pack, *gathered, *whole;
  size_t pack_cap, gathered_cap, whole_cap;
  /* PnetCDF */
  MPI_Datatype *mtype; /* per schema variable: its tile inside the halo'd array */
  int *reqs, nreq, reqcap;
};

/* Define the run's schema through @p api (a split piece when piece is set:
 * tile extents and the tessera_* attributes of strategy=split). 0 or the
 * library's status; the failing call named in run->err. */
int plain_define(bench_run *run, const plain_api *api, int ncid, int piece);
/* Copy the count box at soff inside an array of shape sshape to doff inside
 * an array of shape dshape (C order, nd dimensions, es bytes an element). */
void plain_copy_box(char *dst, const int64_t dshape[], const int64_t doff[], const char *src,
                    const int64_t sshape[], const int64_t soff[], const int64_t count[], int nd,
                    size_t es);
/* Grow *buf to at least n bytes. 0 or -1. */
int plain_fit(void **buf, size_t *cap, size_t n);
/* 1 when the shape's tile is its whole memory box (--halo 0): the model's
 * array is then the contiguous buffer a library call takes as it is. */
int plain_tile_contiguous(const bench_shape *sh);
MPI_Datatype plain_mpi_type(tsr_type t);
/* Collective: TSR_EIO on every rank when any failed, with the first failing
 * rank's message in run->err; else 0. */
int plain_agree(bench_run *run);
int plain_fail(bench_run *run, const char *lib, const char *call, const char *what,
               const char *msg);

/* plain_pnetcdf.c; TSR_ENOTBUILT without PnetCDF. */
int plain_pnc_create(bench_run *run, const char *path);
int plain_pnc_put(bench_run *run, int v, int frame);
int plain_pnc_frame_done(bench_run *run);
int plain_pnc_close(bench_run *run);

#endif
