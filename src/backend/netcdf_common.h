/* What the two NetCDF-C backends share (netcdf.c: classic files through the
 * serial API; netcdf4.c: netCDF-4 files over HDF5, serial or parallel):
 * error mapping, defining a schema, describing an opened file's header, and
 * NetCDF's corners of a block. */
#ifndef TSR_BACKEND_NETCDF_COMMON_H
#define TSR_BACKEND_NETCDF_COMMON_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/backend_block.h"

/* Record NetCDF status @p status of @p call (on variable @p var, may be
 * NULL) in @p err and return its TSR_E* code. */
/* Room for a block in a backend's scratch buffer, which packs (writes) or
 * receives (reads) blocks that sit inside a larger memory array. Grown, never
 * shrunk: a model moves the same block shapes every frame, so the largest one
 * is allocated once. */
int tsr__nc_scratch_fit(void **buf, size_t *cap, size_t bytes, const char *var, tsr__berr *err);

int tsr__nc_fail(tsr__berr *err, int status, int sys_errno, const char *call, const char *path,
                 const char *var);

/* Called right after each variable is defined (netCDF-4: chunks, filters). */
typedef int (*tsr__nc_var_hook)(int ncid, int varid, const tsr__schema *s, int v, void *arg,
                                tsr__berr *err);

/* Define the whole schema in the open file @p ncid (in define mode): no
 * pre-fill, dims, global attributes, variables with their attributes, the
 * hook after each variable. NetCDF numbers dims and vars in definition
 * order, so the schema's ids are the file's. Does not leave define mode. */
int tsr__nc_define(int ncid, const char *path, const tsr__schema *s, tsr__nc_var_hook hook,
                   void *arg, tsr__berr *err);

/* The header of open file @p ncid as a schema (backend.h: open): *fid maps
 * schema variable ids to the file's (malloc'd), *nrecs the records. */
int tsr__nc_describe(int ncid, const char *path, tsr__schema *s, int **fid, int64_t *nrecs,
                     tsr__berr *err);

/* NetCDF's start/count of a block: the frame first for record variables. */
void tsr__nc_corners(const tsr__bvar *v, int64_t frame, const int64_t start[],
                     const int64_t count[], size_t st[], size_t ct[]);

#endif
