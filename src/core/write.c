/* The one path from strategies to backends: every request is timed and
 * counted here, so the statistics see what reached the file system whatever
 * strategy sent it. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

double tsr__now(void) { return MPI_Wtime(); }

static int note(tsr_file *f, int rc) {
  if (rc) f->last_err = rc;
  return rc;
}

int tsr__backend_create(tsr_file *f, MPI_Comm comm, const char *path, const tsr__schema *s,
                        tsr__bfile **bf) {
  double t0 = tsr__now();
  int rc = f->backend->create(comm, path, s, &f->hints, bf, &f->berr);
  f->st.writer_s += tsr__now() - t0;
  f->st.is_writer = 1;
  return note(f, rc);
}

int tsr__write_block(tsr_file *f, tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                     const int64_t count[], const void *buf, tsr__memview mem) {
  const tsr__schema *bs = f->backend_schema ? f->backend_schema : &f->schema;
  const tsr__var *v = &bs->vars[varid];
  int nd = v->ndims - (v->is_record ? 1 : 0);
  int64_t elems = 1;
  for (int i = 0; i < nd; i++) elems *= count[i];
  if (elems == 0) return 0;
  int64_t off = f->backend->block_offset ? f->backend->block_offset(bf, varid, frame, start) : -1;
  double t0 = tsr__now();
  int rc = f->backend->write_block(bf, varid, frame, start, count, buf, mem, &f->berr);
  f->st.writer_s += tsr__now() - t0;
  /* A block that is not contiguous in the file still counts as one request:
   * that is what Tessera asked of the backend. */
  tsr__fstats_request(&f->st, elems * (int64_t)tsr__type_size(v->type), off);
  if (f->backend->pending_bytes) tsr__fstats_buffer(&f->st, f->backend->pending_bytes(bf));
  return note(f, rc);
}

int tsr__backend_flush(tsr_file *f, tsr__bfile *bf) {
  double t0 = tsr__now();
  int rc = f->backend->flush(bf, &f->berr);
  f->st.writer_s += tsr__now() - t0;
  return note(f, rc);
}

int tsr__backend_close(tsr_file *f, tsr__bfile *bf) {
  double t0 = tsr__now();
  int rc = f->backend->close(bf, &f->berr);
  f->st.writer_s += tsr__now() - t0;
  return note(f, rc);
}

int tsr__write_holes(tsr_file *f, tsr__bfile *bf, int varid, int64_t frame, const tsr_decomp *d) {
  size_t es = tsr__type_size(f->schema.vars[varid].type);
  char fill[8];
  tsr__var_fill(&f->schema, varid, fill);
  int rc = 0;
  for (int h = 0; h < d->nholes && !rc; h++) {
    int64_t n = tsr__box_elems(d->ndims, &d->holes[h]);
    void *buf = malloc((size_t)n * es);
    if (!buf) return TSR_ENOMEM;
    tsr__fill_elems(buf, fill, es, n);
    rc = tsr__write_block(f, bf, varid, frame, d->holes[h].start, d->holes[h].count, buf,
                          (tsr__memview){NULL, NULL});
    free(buf); /* backends copy or finish with the buffer before returning */
  }
  return rc;
}

int tsr__grow(void **buf, int64_t *cap, int64_t need) {
  if (need <= *cap) return 0;
  /* Buffers are kept for the life of the file and only grow: first-touch
   * page faults on fresh memory cost more than the copy itself. */
  void *nb = realloc(*buf, (size_t)need);
  if (!nb) return TSR_ENOMEM;
  *buf = nb;
  *cap = need;
  return 0;
}
