/* Backend errors: one place that turns a backend library's native error code
 * (NetCDF, PnetCDF, or a POSIX errno they pass through) into a TSR_E* code
 * and fills tsr__berr, so every backend maps failures the same way. */
#ifndef TSR_BACKEND_ERRORS_H
#define TSR_BACKEND_ERRORS_H

#include <stddef.h>

#include "backend/backend.h"

/* One native code a backend knows how to classify. Codes that a library uses
 * for "some I/O failed" set use_errno: the errno left by the failing call then
 * decides (EFBIG behind PnetCDF's NC_EFILE is a full disk, not a broken file). */
typedef struct {
  int native;    /* the library's code, e.g. NC_ENO_SPACE */
  int tsr;       /* TSR_E* it means */
  int use_errno; /* a classifiable errno overrides tsr */
} tsr__berr_class;

/* Map a POSIX errno: ENOENT/EACCES/EPERM/EISDIR/ENOTDIR/EROFS/ENAMETOOLONG ->
 * TSR_EACCES, ENOSPC/EFBIG/EDQUOT -> TSR_ENOSPC, ENOMEM -> TSR_ENOMEM,
 * anything else (0 included) -> TSR_EIO. */
int tsr__berr_from_errno(int e);

/*
 * Record a native failure in @p err (may be NULL) and return its TSR_E* code.
 * @p native > 0 is taken as an errno (NetCDF returns errno values from its
 * POSIX layer); otherwise it is looked up in @p table (unknown codes are
 * TSR_EIO). @p sys_errno is errno as the failing call left it (0 if unknown).
 * The message reads "<lib>: <native_msg> (<context>)", where a "NetCDF: "
 * prefix already in @p native_msg is not repeated.
 */
int tsr__berr_native(tsr__berr *err, const char *lib, int native, int sys_errno,
                     const char *native_msg, const tsr__berr_class *table, size_t ntable,
                     const char *context_fmt, ...) __attribute__((format(printf, 8, 9)));

/* Record a failure Tessera found itself (bad block, malloc, MPI): code 0 in
 * err->code, message "<lib>: <text>". Returns @p tsr_code. */
int tsr__berr_plain(tsr__berr *err, int tsr_code, const char *lib, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
