/* One GRIB2 message (grib2.c): what it says about a whole horizontal level,
 * its parameter and level (grib2_params.h), grid (grib2_grid.h), times
 * (grib2_time.h), packing and values. */
#ifndef TSR_BACKEND_GRIB2_MESSAGE_H
#define TSR_BACKEND_GRIB2_MESSAGE_H

#include <eccodes.h>

#include "backend/grib2_grid.h"
#include "backend/grib2_params.h"
#include "backend/grib2_time.h"

typedef struct {
  const tsr__grib_proj *proj;
  tsr__grib_clock *clock;
  int bits, ccsds;
  const char *path; /* for the log */
} tsr__grib_coding;

/* Encode level @p level of variable @p g at @p frame, whose values are
 * @p vals (nx * ny, rows south to north; the parameter's offset is added in
 * place), as a new handle *out (the caller deletes it). Returns 0, or
 * TSR_ENOTBUILT (no GRIB2 sample), or TSR_EIO with ecCodes' error in *ecode
 * and the key it failed on in *key. */
int tsr__grib_encode(const tsr__grib_coding *c, const tsr__grib_var *g, int64_t frame,
                     int64_t level, double *vals, codes_handle **out, const char **key,
                     int *ecode);

#endif
