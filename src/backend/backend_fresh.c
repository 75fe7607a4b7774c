/* A fresh name before every create (contract in backend/backend_fresh.h). */
#include "backend/backend_fresh.h"

#include <errno.h>
#include <string.h>

#include "backend/backend_errors.h"
#include "tessera.h"
#include "tier/safe_names.h"

int tsr__backend_fresh_name(MPI_Comm comm, const char *path, const char *lib, tsr__berr *err) {
  /* The converter (apps/convert) creates without MPI: one process alone. */
  int me = 0, e = 0, mpi = 0;
  MPI_Initialized(&mpi);
  int alone = !mpi || comm == MPI_COMM_NULL || comm == MPI_COMM_SELF;
  if (!alone) MPI_Comm_rank(comm, &me);
  if (me == 0 && tsr__name_clear(path) != 0) e = errno ? errno : EEXIST;
  /* The others open only after the name is free: their open is part of the
   * same collective create, which starts after this broadcast. */
  if (!alone && MPI_Bcast(&e, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return tsr__berr_plain(err, TSR_EMPI, lib, "cannot agree on the name %s", path);
  if (!e) return 0;
  int rc = tsr__berr_plain(err, e == EEXIST ? TSR_EACCES : tsr__berr_from_errno(e), lib, "cannot replace %s: %s", path,
                           strerror(e));
  if (err) err->code = e;
  return rc;
}
