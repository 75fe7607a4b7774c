/* Block geometry shared by the file backends: a compact per-variable layout
 * copied from the schema at create (the schema need not outlive the file),
 * block validation, and packing a block out of a larger memory array. */
#ifndef TSR_BACKEND_BLOCK_H
#define TSR_BACKEND_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  size_t esize;                /* bytes per element */
  int is_record;               /* first file dimension is the record dimension */
  int nd;                      /* non-record dimensions */
  int64_t shape[TSR_MAX_DIMS]; /* their lengths, slowest first */
} tsr__bvar;

/* Copy the layout of every variable of @p s into a malloc'd array (*out,
 * s->nvars entries; NULL when there are none). Returns 0 or TSR_ENOMEM. */
int tsr__bvars_from_schema(const tsr__schema *s, tsr__bvar **out);

/* Elements in a block of @p nd dimensions (1 for nd == 0). */
int64_t tsr__block_elems(int nd, const int64_t count[]);

/* Look up variable @p varid among @p nvars and check a block request against
 * it (frame, bounds, memory view, buffer); *out is the variable on success.
 * Both backends start every write with it, so a bad request is described the
 * same way whichever backend receives it. */
int tsr__block_check(const tsr__bvar *vars, int nvars, int varid, int64_t frame,
                     const int64_t start[], const int64_t count[], const void *buf,
                     tsr__memview mem, const char *lib, const char *path, const tsr__bvar **out,
                     tsr__berr *err);

/* Copy the block of @p count elements that sits at mem.moffset inside the
 * C-ordered array @p src of shape mem.mshape into contiguous @p dst. */
void tsr__block_pack(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                     tsr__memview mem);

#endif
