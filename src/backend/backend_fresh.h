/* Every backend's create starts with a fresh name: whatever has the name
 * (a temporary a killed job left, a link someone planted) is removed on
 * rank 0 of the create communicator, never followed (tier/safe_names.h), and
 * every rank learns the outcome. The backend then creates the file
 * exclusively (NC_NOCLOBBER, H5F_ACC_EXCL through NetCDF, O_EXCL |
 * O_NOFOLLOW), so a link planted again in between makes the create fail: the
 * output never lands in a link's target. */
#ifndef TSR_BACKEND_FRESH_H
#define TSR_BACKEND_FRESH_H

#include <mpi.h>

#include "backend/backend.h"

/* Collective over @p comm. 0, or a TSR_E* with "<lib>: cannot replace
 * <path>: <reason>" in @p err on every rank. */
int tsr__backend_fresh_name(MPI_Comm comm, const char *path, const char *lib, tsr__berr *err);

#endif
