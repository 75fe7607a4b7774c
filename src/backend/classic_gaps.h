/* The bytes of a classic NetCDF file (CDF-2, CDF-5) that belong to no
 * variable: the padding after a variable whose size is not a multiple of
 * four (a `char Times(Time, DateStrLen=19)` leaves one byte in every
 * record), and the alignment gap between the fixed and the record section.
 *
 * Nobody writes them, and a file that is written in one piece never
 * notices: a hole reads as zeros. But a collective MPI-IO write whose range
 * spans such a hole beyond the current end of the file (two-phase I/O over
 * PnetCDF's combined nonblocking requests) fills it from its collective
 * buffer, which holds whatever memory held: the file then differs from run
 * to run. Serial NetCDF writes zeros there; so does Tessera, after the last
 * write (tsr__classic_zero_gaps), so that identical runs give identical
 * bytes whatever the strategy. */
#ifndef TSR_BACKEND_CLASSIC_GAPS_H
#define TSR_BACKEND_CLASSIC_GAPS_H

#include <stdint.h>

typedef struct {
  int64_t begin;  /* file offset of the variable's data (of record 0) */
  int64_t bytes;  /* bytes of its data (per record for a record variable) */
  int is_record;
} tsr__classic_var;

/* Write zeros over every gap between the variables' data in the file open
 * for writing on @p fd, whose size is @p size (nothing past it is written:
 * the file keeps its size), for @p nrecs records of @p recsize bytes each.
 * @p vars is reordered. Returns 0, or the errno of the failed write. */
int tsr__classic_zero_gaps(int fd, int64_t size, tsr__classic_var *vars, int nvars,
                           int64_t recsize, int64_t nrecs);

#endif
