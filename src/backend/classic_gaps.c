/* Zeros over the bytes of a classic file that no variable owns (contract
 * and the reason in backend/classic_gaps.h). */
#include "backend/classic_gaps.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* Fixed variables first, then record variables, each by offset. */
static int by_section_then_offset(const void *a, const void *b) {
  const tsr__classic_var *x = a, *y = b;
  if (x->is_record != y->is_record) return x->is_record - y->is_record;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Zeros over [from, to), cut at @p size. */
static int zero(int fd, int64_t size, int64_t from, int64_t to) {
  static const char zeros[4096];
  if (to > size) to = size;
  while (from < to) {
    size_t n = to - from < (int64_t)sizeof zeros ? (size_t)(to - from) : sizeof zeros;
    ssize_t w = pwrite(fd, zeros, n, (off_t)from);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    from += w;
  }
  return 0;
}

int tsr__classic_zero_gaps(int fd, int64_t size, tsr__classic_var *vars, int nvars,
                           int64_t recsize, int64_t nrecs) {
  if (nvars <= 0) return 0;
  qsort(vars, (size_t)nvars, sizeof *vars, by_section_then_offset);
  int first_rec = 0;
  while (first_rec < nvars && !vars[first_rec].is_record) first_rec++;
  int e = 0;
  /* Fixed section: up to the next variable, the last one up to the record
   * section (a file without record variables ends with its last variable). */
  for (int i = 0; i < first_rec && !e; i++) {
    int64_t end = vars[i].begin + vars[i].bytes;
    int64_t next = i + 1 < nvars ? vars[i + 1].begin : end;
    e = zero(fd, size, end, next);
  }
  /* Record section: the same gaps in every record; the last variable's
   * runs up to the start of the next record. */
  for (int64_t r = 0; r < nrecs && !e; r++)
    for (int i = first_rec; i < nvars && !e; i++) {
      int64_t end = vars[i].begin + vars[i].bytes;
      int64_t next = i + 1 < nvars ? vars[i + 1].begin : vars[first_rec].begin + recsize;
      e = zero(fd, size, end + r * recsize, next + r * recsize);
    }
  return e;
}
