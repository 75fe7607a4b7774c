/* The file handle itself (contract in api/api.h): made with its hints
 * resolved, freed, and whether a decomposition fits one of its variables. Shared by writing (file.c) and reading (read.c); in a file
 * of their own so that file.c, which asks read.c about a reader, and read.c
 * call this file and never each other. */
#include <stdlib.h>
#include <string.h>

#include "api/auto.h"
#include "api/api.h"

int tsr__file_new(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **out) {
  *out = NULL;
  if (!path || !path[0]) return TSR_EINVAL;
  tsr_file *f = calloc(1, sizeof *f);
  if (!f) return TSR_ENOMEM;
  f->ctx = ctx;
  f->lock_fd = -1;
  tsr__schema_init(&f->schema);
  tsr__hints_defaults(&f->hints);
  tsr__fstats_init(&f->st, 1 << 20);
  *out = f;
  f->path = strdup(path);
  if (!f->path) return TSR_ENOMEM;
  int rc = tsr__hints_resolve(ctx->init_hints, hints, path, &f->hints, f->berr.message,
                              sizeof f->berr.message);
  if (rc) f->berr.code = rc;
  return rc;
}

void tsr__file_free(tsr_file *f) {
  if (!f) return;
  tsr__deflog_free(&f->deflog);
  tsr__auto_file_free(f);
  tsr__lock_release(f->path, &f->lock_fd);
  tsr__schema_free(&f->schema);
  free(f->reader);
  free(f->pack);
  free(f->path);
  free(f);
}

int tsr__shape_matches(const tsr_file *f, int varid, const tsr_decomp *d) {
  int64_t shape[TSR_MAX_DIMS];
  int nd = tsr__var_shape(&f->schema, varid, shape);
  if (d->ctx != f->ctx || d->ndims != nd) return 0;
  for (int i = 0; i < nd; i++)
    if (d->gsize[i] != shape[i]) return 0;
  return 1;
}
