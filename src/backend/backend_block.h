/* Block geometry shared by the file backends: a compact per-variable layout
 * copied from the schema at create (the schema need not outlive the file),
 * block validation, and packing a block out of (or unpacking it into) a larger
 * memory array. */
#ifndef TSR_BACKEND_BLOCK_H
#define TSR_BACKEND_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

typedef struct {
  char name[TSR_MAX_NAME];
  int fid;                     /* id in the file: the schema's id for files Tessera
                                  created; differs when open left variables out */
  tsr_type type;
  size_t esize;                /* bytes per element */
  int is_record;               /* first file dimension is the record dimension */
  int nd;                      /* non-record dimensions */
  int64_t shape[TSR_MAX_DIMS]; /* their lengths, slowest first */
} tsr__bvar;

/* Copy the layout of every variable of @p s into a malloc'd array (*out,
 * s->nvars entries; NULL when there are none). Returns 0 or TSR_ENOMEM. */
int tsr__bvars_from_schema(const tsr__schema *s, tsr__bvar **out);
/* The table of a file opened for reading: as tsr__bvars_from_schema, with
 * each variable's id in the file (fid[v]; the schema leaves out variables
 * Tessera cannot describe, so ids may differ). */
int tsr__bvars_from_file(const tsr__schema *s, const int *fid, tsr__bvar **out);

/* Building a schema from a file's header (backend open). Each returns 0 or a
 * TSR_E* code (TSR_EFORMAT for a header Tessera cannot describe). */
/* Add dimension @p name (len TSR_UNLIMITED for the record dimension); its id
 * is the number of dimensions added before, so dims must come in file order. */
int tsr__bschema_add_dim(tsr__schema *s, const char *name, int64_t len);
/* Add a variable of NetCDF type @p xtype; *varid is its schema id, or -1 when
 * Tessera cannot represent it (no tsr_type, more than TSR_MAX_DIMS dims, the
 * record dimension not first) and it is left out. */
int tsr__bschema_add_var(tsr__schema *s, const char *name, int xtype, int ndims,
                         const int dimids[], int *varid);
/* 1 when an attribute of NetCDF type @p xtype named @p name can be kept. */
int tsr__bschema_att_ok(const char *name, int xtype);
/* Add an attribute read from the header; one the schema refuses (a
 * _FillValue of another type than its variable) is left out. */
int tsr__bschema_put_att(tsr__schema *s, int varid, const char *name, int xtype, size_t n,
                         const void *values);

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
/* Grow a backend's scratch buffer *buf (of *cap bytes) to hold @p bytes;
 * TSR_ENOMEM naming variable @p var of library @p lib when it cannot. */
int tsr__block_scratch_fit(void **buf, size_t *cap, size_t bytes, const char *lib,
                           const char *var, tsr__berr *err);
/* The block's elements, contiguous: @p buf itself when it is (no memory
 * view), else packed into the scratch buffer (grown to fit, as above).
 * NULL with the error in @p err when the scratch cannot grow. */
const void *tsr__block_contiguous(const void *buf, size_t esize, int nd, const int64_t count[],
                                  tsr__memview mem, void **scratch, size_t *cap,
                                  const char *lib, const char *var, tsr__berr *err);
/* The reverse, for reads: copy the contiguous block @p src into its place at
 * mem.moffset inside the C-ordered array @p dst of shape mem.mshape; the
 * array's other elements (halos) are not touched. */
void tsr__block_unpack(void *dst, const void *src, size_t esize, int nd, const int64_t count[],
                       tsr__memview mem);

#endif
