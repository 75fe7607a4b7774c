/* Shared-memory slots for node concentrators (contract in
 * server_conc_shm.h).
 *
 * Synchronisation: one passive-target epoch for the life of the window
 * (MPI_Win_lock_all with MPI_MODE_NOCHECK), MPI_Win_sync as the memory
 * barrier of the unified model. A member copies its staging area into its
 * slot and then joins the group's MPI_Gather of staging lengths (the
 * commit's collective), so the concentrator, which syncs after the gather,
 * sees the bytes. The concentrator writes the commit number into the
 * slot's `freed` word once it forwarded the bytes; a member waits for the
 * last commit it placed to be freed before it writes the next one's bytes, which happens only when it
 * reaches its next op before the concentrator finished this one (the slot
 * is full): the model never waits otherwise. */
#include "server/server_conc_shm.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/agree.h"
#include "tessera.h"

enum { HEAD = 64 }; /* a slot's header: freed (int64), padded to a cache line */

static volatile int64_t *freed_of(char *slot) { return (volatile int64_t *)slot; }

int tsr__conc_shm_open(tsr__conc_shm *w, MPI_Comm ccomm, int64_t room) {
  *w = (tsr__conc_shm){.win = MPI_WIN_NULL, .room = room};
  MPI_Comm_rank(ccomm, &w->me);
  MPI_Comm_size(ccomm, &w->n);
  char *base = NULL;
  MPI_Aint size = w->me == 0 ? 0 : (MPI_Aint)(HEAD + room);
  int rc = MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, ccomm, &base, &w->win) == MPI_SUCCESS
               ? 0
               : TSR_EMPI;
  if (!rc) {
    w->slot = calloc((size_t)w->n, sizeof *w->slot);
    if (!w->slot) rc = TSR_ENOMEM;
    for (int i = 1; i < w->n && !rc; i++) {
      MPI_Aint sz;
      int du;
      if (MPI_Win_shared_query(w->win, i, &sz, &du, &w->slot[i]) != MPI_SUCCESS) rc = TSR_EMPI;
    }
    if (w->me != 0) {
      *freed_of(base) = 0; /* commit 0 is done: slot free for commit 1 */
      w->slot[w->me] = base;
    }
    if (!rc && MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win) != MPI_SUCCESS) rc = TSR_EMPI;
  }
  rc = tsr__agree(ccomm, rc);
  if (rc) {
    if (w->win != MPI_WIN_NULL) MPI_Win_free(&w->win);
    free(w->slot);
    *w = (tsr__conc_shm){.win = MPI_WIN_NULL};
    return 0; /* the group sends instead */
  }
  MPI_Win_sync(w->win);
  MPI_Barrier(ccomm); /* every freed word is set before anyone reads it */
  return 0;
}

int tsr__conc_shm_put(tsr__conc_shm *w, const void *p, int64_t len, int64_t seq) {
  if (w->win == MPI_WIN_NULL || len > w->room) return 0;
  char *slot = w->slot[w->me];
  /* The slot is full while the concentrator still forwards the last commit
   * placed in it (commits whose area was sent leave it alone). */
  for (long nap = 1000;;) {
    MPI_Win_sync(w->win);
    if (*freed_of(slot) >= w->last) break;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 100000) nap *= 2;
  }
  if (len) memcpy(slot + HEAD, p, (size_t)len);
  MPI_Win_sync(w->win);
  w->last = seq;
  return 1;
}

const char *tsr__conc_shm_data(tsr__conc_shm *w, int i) {
  MPI_Win_sync(w->win);
  return w->slot[i] + HEAD;
}

void tsr__conc_shm_release(tsr__conc_shm *w, int i, int64_t seq) {
  MPI_Win_sync(w->win);
  *freed_of(w->slot[i]) = seq;
  MPI_Win_sync(w->win);
}

void tsr__conc_shm_close(tsr__conc_shm *w) {
  if (w->win == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(w->win);
  MPI_Win_free(&w->win);
  free(w->slot);
  w->slot = NULL;
}
