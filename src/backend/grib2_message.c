/* One GRIB2 message: see grib2_message.h. Starts from ecCodes' GRIB2 sample
 * and sets what the sample's defaults would get wrong. */
#include "backend/grib2_message.h"

#include "tessera.h"

int tsr__grib_encode(const tsr__grib_coding *c, const tsr__grib_var *g, int64_t frame,
                     int64_t level, double *vals, codes_handle **out, const char **key,
                     int *ecode) {
  *out = NULL;
  *ecode = 0;
  codes_handle *h = codes_grib_handle_new_from_samples(NULL, "GRIB2");
  if (!h) return TSR_ENOTBUILT;
  size_t n = (size_t)(g->nx * g->ny), len = 10;
  long lev = g->p.level >= 0 ? g->p.level : (long)level + 1;
  /* The grid first: a new gridType replaces section 3. */
  int e = tsr__grib_set_grid(h, g->on_proj ? c->proj : NULL, (long)g->nx, (long)g->ny, key);
  if (!e) e = tsr__grib_clock_set(c->clock, h, frame, c->path, key);
  const struct {
    const char *k;
    long v;
  } keys[] = {{"discipline", g->p.discipline},
              {"parameterCategory", g->p.category},
              {"parameterNumber", g->p.number},
              {"typeOfFirstFixedSurface", g->p.surface},
              {"scaleFactorOfFirstFixedSurface", 0},
              {"scaledValueOfFirstFixedSurface", lev}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !e; i++)
    if ((e = codes_set_long(h, keys[i].k, keys[i].v))) *key = keys[i].k;
  if (!e && c->ccsds && (e = codes_set_string(h, "packingType", "grid_ccsds", &len)))
    *key = "packingType";
  if (!e && (e = codes_set_long(h, "bitsPerValue", c->bits))) *key = "bitsPerValue";
  if (!e && g->p.offset != 0)
    for (size_t i = 0; i < n; i++) vals[i] += g->p.offset;
  if (!e && (e = codes_set_double_array(h, "values", vals, n))) *key = "values";
  if (e) {
    codes_handle_delete(h);
    *ecode = e;
    return TSR_EIO;
  }
  *out = h;
  return 0;
}
