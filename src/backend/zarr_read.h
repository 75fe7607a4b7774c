/* Reading Zarr v3 stores (format=zarr, tsr_open): backend/zarr_read.c. The
 * backend (zarr.c) keeps one of these on a file opened for reading. */
#ifndef TSR_BACKEND_ZARR_READ_H
#define TSR_BACKEND_ZARR_READ_H

#include "backend/backend.h"

typedef struct tsr__zreader tsr__zreader;

/* Describe the store at @p path in @p s (initialised here; the caller frees
 * it): the layout attribute's dimensions, record dimension and array order
 * when the root group has it (Tessera's stores), else the arrays in name
 * order with the dimensions their dimension_names give and no record
 * dimension. Arrays of a type or codec this reader lacks are left out. */
int tsr__zarr_read_open(const char *path, tsr__schema *s, tsr__zreader **out, tsr__berr *err);
/* backend.h's read_block: chunks decoded one at a time (the last one kept). */
int tsr__zarr_read_block(tsr__zreader *r, int varid, int64_t frame, const int64_t start[],
                         const int64_t count[], void *buf, tsr__memview mem, tsr__berr *err);
int64_t tsr__zarr_read_records(const tsr__zreader *r);
void tsr__zarr_read_free(tsr__zreader *r);

#endif
