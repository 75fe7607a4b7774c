/* Flat decompositions: a rank's elements as runs of contiguous row-major
 * indices. Index maps (PIO's compdof, MPAS cells) and several boxes per rank
 * are sorted and merged into runs once, so a map that happens to be a box
 * has as few runs as the box has rows, and the exchanges that feed writers
 * move whole runs with memcpy.
 *
 * Two layers: spans remember where each stretch of elements sits in the
 * caller's buffer (its order may be anything); runs are what the plan
 * engine sees, with the elements packed in index order. Exchanges over runs
 * are built through a directory: every rank cuts its runs by the writers'
 * pieces and tells each writer which ranges it will send (one Alltoall of
 * counts and one Alltoallv of ranges), so no rank ever holds another rank's
 * whole map and the cost is O(runs + pieces + P) per rank. */
#ifndef TSR_PLAN_RUNS_H
#define TSR_PLAN_RUNS_H

#include "plan/exchange.h"
#include "plan/layout.h"
#include "plan/tiles.h"

/* Elements [lo, lo+len) of the index space sit at buffer positions
 * [src, src+len). */
typedef struct {
  int64_t lo, len, src;
} tsr__span;

/* A map's spans, sorted by index and merged where both the index and the
 * buffer position continue. idx[k] is the global flat index of buffer
 * position k; -1 skips the position. Any other index outside [0, total), or
 * an index listed twice, is TSR_EDECOMP. *nelems: indices not skipped. */
int tsr__spans_from_map(const int64_t *idx, int64_t n, int64_t total, tsr__span **out,
                        int64_t *nout, int64_t *nelems);
/* The spans of @p nboxes boxes held one after the other in the buffer, each
 * C-ordered over its own count. TSR_EDECOMP when boxes leave gsize or
 * overlap each other. */
int tsr__spans_from_boxes(int nd, const int64_t gsize[], int nboxes, const tsr__box *boxes,
                          tsr__span **out, int64_t *nout, int64_t *nelems);
/* 1 when the buffer already holds the elements in index order, one after the
 * other: packing would be a plain copy and can be skipped. */
int tsr__spans_identity(const tsr__span *s, int64_t n);
/* Runs (lo, hi pairs) from sorted spans: merged where the index continues. */
int tsr__runs_from_spans(const tsr__span *s, int64_t n, int64_t **runs, int64_t *nruns);
/* The smallest box holding every run (start and count all zero when there is
 * none). Returns 1 when the runs fill it exactly: then the map is that box in
 * index order and the box engine can take it. */
int tsr__runs_cover(int nd, const int64_t gsize[], const int64_t *runs, int64_t nruns,
                    tsr__box *out);
/* Caller's buffer -> index order (put), and back (get). */
void tsr__spans_pack(const tsr__span *s, int64_t n, size_t esize, const void *buf, void *packed);
void tsr__spans_unpack(const tsr__span *s, int64_t n, size_t esize, const void *packed, void *buf);

/* One piece of a run sent to a writer: [lo, hi) at element offset off of the
 * sender's packed buffer, for piece `piece`. */
typedef struct {
  int64_t lo, hi, off;
  int piece;
} tsr__rseg;

/* Flat index ranges of the layout's pieces (lo[p], hi[p]); pieces are
 * contiguous and ascending, empty pieces have lo == hi. */
int tsr__layout_flat(int nd, const int64_t gsize[], const tsr__layout *L, int64_t *lo,
                     int64_t *hi);
/* Sender side (pure): my runs cut by ascending, disjoint ranges [plo, phi),
 * in range order. O(nruns + npieces). */
int tsr__runs_cut(const int64_t *runs, int64_t nruns, int npieces, const int64_t *plo,
                  const int64_t *phi, tsr__rseg **out, int64_t *n);
/* Receiver side and message lists (pure): the exchanges of every phase from
 * this rank's cut (@p send, with each piece's writer in L) and the ranges
 * each source announced to this rank (rcount[s] ranges from source s,
 * concatenated in rlohi as lo, hi pairs, in the source's cut order). */
int tsr__runs_assemble(int me, int nd, const tsr__layout *L, const int64_t *plo,
                       const int64_t *phi, const tsr__rseg *send, int64_t nsend, int nranks,
                       const int64_t *rcount, const int64_t *rlohi, size_t esize, int phased,
                       tsr__exchange *phases);
/* Collective over t->comm: cut, announce, assemble. */
int tsr__runs_build_phases(const tsr__tiles *t, const tsr__layout *L, size_t esize, int phased,
                           tsr__exchange *phases);
/* Collective over t->comm: check that no two ranks' runs share an index and
 * find the indices nobody owns, through a directory of P equal slabs of the
 * index space. *overlap is set on the rank whose slab saw one (the caller
 * agrees); *holes lists this rank's slab's unowned runs (lo, hi pairs). */
int tsr__runs_check(const tsr__tiles *t, int *overlap, int64_t **holes, int64_t *nholes);

#endif
