/* Concentrators per node (concentrators=per_node): the members' hand-off to
 * their concentrator as a copy into a shared-memory window
 * (MPI_Win_allocate_shared over the node's model ranks) instead of an MPI
 * message. Each member owns one slot: a small header (the commit it holds,
 * the last commit the concentrator finished with) and room for one op's
 * staging area. Used by server_conc.c only. */
#ifndef TSR_SERVER_CONC_SHM_H
#define TSR_SERVER_CONC_SHM_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
  MPI_Win win;     /* MPI_WIN_NULL: no window (the members send instead) */
  int64_t room;    /* bytes of data a slot holds */
  char **slot;     /* per member of the group: its slot (header, then data) */
  int me, n;
  int64_t last; /* member: the last commit it placed in its slot */
} tsr__conc_shm;

/* Collective over the node's group @p ccomm (rank 0 the concentrator):
 * slots of @p room bytes for every member. On failure (the window cannot
 * be had) w->win stays MPI_WIN_NULL and the group sends; returns 0 either
 * way, agreed over the group. */
int tsr__conc_shm_open(tsr__conc_shm *w, MPI_Comm ccomm, int64_t room);
/* Member: copy @p len bytes of @p p into the slot for commit @p seq,
 * waiting only while the concentrator still reads the last commit placed
 * there (the slot is full). 1 when placed, 0 when it does not fit (send it instead). */
int tsr__conc_shm_put(tsr__conc_shm *w, const void *p, int64_t len, int64_t seq);
/* Concentrator: member @p i's data placed for this commit (after the
 * group's gather, which orders the members' copies before it). */
const char *tsr__conc_shm_data(tsr__conc_shm *w, int i);
/* Concentrator: done with member @p i's slot of commit @p seq. */
void tsr__conc_shm_release(tsr__conc_shm *w, int i, int64_t seq);
/* Collective over the group: free the window. */
void tsr__conc_shm_close(tsr__conc_shm *w);

#endif
