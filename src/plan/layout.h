/* Writer layouts: which writer owns which part of a variable in the file.
 * A layout is a list of pieces; piece p belongs to rank writers[p] and is a
 * contiguous range of the variable's row-major index space, held as boxes
 * boxes[first[p] .. first[p+1]). Pieces are balanced and cut on row
 * boundaries of the slowest dimensions where the shape allows, so each
 * writer's requests are large and contiguous in the file. */
#ifndef TSR_PLAN_LAYOUT_H
#define TSR_PLAN_LAYOUT_H

#include "plan/box.h"

typedef struct {
  int npieces;
  int *writers;    /* npieces ranks (in the model communicator) */
  int *first;      /* npieces + 1 offsets into boxes */
  tsr__box *boxes; /* first[npieces] boxes */
  int64_t max_piece_elems;
} tsr__layout;

/* Split an array of @p shape into @p npieces balanced contiguous pieces owned
 * by writers[0..npieces). */
int tsr__layout_slabs(int nd, const int64_t shape[], int npieces, const int writers[],
                      tsr__layout *out);
/* The same, but never cutting the last @p keep dimensions (whole horizontal
 * levels for GRIB2 with keep = 2): pieces are cut between rows of the first
 * nd - keep dimensions only, so with fewer such rows than pieces some pieces
 * are empty; with none (nd <= keep) the last piece holds everything. */
int tsr__layout_slabs_keep(int nd, const int64_t shape[], int keep, int npieces,
                           const int writers[], tsr__layout *out);
/* Pieces of at most @p max_elems elements each (at least one element), all
 * owned by @p writer: the serial writer's slabs. */
int tsr__layout_chunks(int nd, const int64_t shape[], int64_t max_elems, int writer,
                       tsr__layout *out);
void tsr__layout_free(tsr__layout *l);

#endif
