/* The rearrangement engine: moves the parts of every rank's tile that fall in
 * a set of writer pieces to those writers. Built once per (decomposition,
 * layout, element size) and cached on the decomposition; run once per put.
 * The same engine serves serial (one writer, a sequence of slabs), aggregate
 * (N writers, one slab each) and the I/O servers. */
#ifndef TSR_PLAN_EXCHANGE_H
#define TSR_PLAN_EXCHANGE_H

#include <mpi.h>

#include "plan/layout.h"
#include "plan/tiles.h"

typedef struct {
  int peer;
  int nseg, seg0; /* segments segs[seg0 .. seg0+nseg) */
  int64_t bytes;  /* message size; offset of the message in the send/stage buffer: */
  int64_t offset;
} tsr__peer;

typedef struct {
  tsr__box box;   /* the intersection, global indices */
  int target;     /* receiver side: index into mybox[] */
} tsr__seg;

typedef struct tsr__exchange {
  int nd;
  int flat; /* built by plan/runs.c: segments are flat index ranges, one memcpy each */
  size_t esize;
  int nsend, nrecv;
  tsr__peer *send, *recv;
  tsr__seg *send_segs, *recv_segs;
  /* Flat exchanges (plan/runs.c) list segments as (offset, length) element
   * pairs instead: offset in the sender's packed buffer or the writer's
   * region. 16 bytes a segment, where scattered maps have one per element. */
  int64_t *send_fl, *recv_fl;
  int64_t send_bytes, stage_bytes; /* excluding data a rank sends itself */
  /* The writer's region: my boxes of the pieces, stored one after the other. */
  int nmybox;
  tsr__box *mybox;
  int64_t *mybox_off; /* element offset of each box in the region buffer */
  int64_t region_elems;
} tsr__exchange;

/* Build the exchange of tiles @p d onto pieces [p0, p1) of @p L. */
int tsr__exchange_build(const tsr__tiles *d, const tsr__layout *L, int p0, int p1,
                        size_t esize, tsr__exchange *ex);
void tsr__exchange_free(tsr__exchange *ex);

/* Run it. Collective over @p comm (the decomposition's communicator). src is
 * the caller's memory (over the tiles' memory box); sendbuf holds
 * send_bytes, stage holds stage_bytes, region holds region_elems elements
 * (writers only; may be NULL elsewhere). When @p fill is non-NULL the region
 * is first set to it, so points no rank owns carry the fill value.
 * @p alltoall selects MPI_Alltoallv instead of point-to-point messages. */
int tsr__exchange_run(MPI_Comm comm, const tsr__exchange *ex, const tsr__tiles *d,
                      const void *src, void *sendbuf, void *stage, void *region,
                      const void *fill, int alltoall);

/* Run it backwards, for reading (plan/exchange_reverse.c): each writer's
 * region (read from the file) goes back to the ranks whose tiles hold it.
 * stage holds ex->stage_bytes (writers), recvbuf ex->send_bytes; dst is the
 * caller's memory over the tiles' memory box (box tiles) or the runs packed
 * in index order (flat tiles, ex->flat). Collective over @p comm
 * (point-to-point). */
int tsr__exchange_run_reverse(MPI_Comm comm, const tsr__exchange *ex, const tsr__tiles *d,
                              const void *region, void *stage, void *recvbuf, void *dst);

#endif
