/* The bench's latitudes and longitudes (XLAT, XLONG and their staggered
 * twins) from the schema's WRF projection attributes, as WRF computes them
 * (module_llxy), so that readers that rebuild the grid from the attributes
 * (wrf-python, the grib2 backend, cfgrib on its messages) find the same
 * points as the file's XLAT/XLONG. */
#ifndef BENCH_PROJECTION_H
#define BENCH_PROJECTION_H

#include "bench.h"

typedef struct {
  int kind; /* WRF's MAP_PROJ: 1, 2, 3, 6; 0 without one (a flat patch around the centre) */
  double truelat1, truelat2, stand_lon, cen_lat, cen_lon, dx, dy;
  double hemi, cone, xc, yc;
  int nx, ny; /* the mass grid */
} bench_proj;

/* From the schema's global attributes (MAP_PROJ, TRUELAT1, TRUELAT2,
 * STAND_LON, CEN_LAT, CEN_LON, DX, DY) for a mass grid of nx x ny points. */
void bench_proj_init(bench_proj *p, const bench_schema *s, int nx, int ny);
/* Latitude and longitude (degrees) at mass-grid position (x, y), 0-based;
 * staggered points sit at -0.5. The centre of the domain is CEN_LAT,
 * CEN_LON, in the middle of the mass grid. */
void bench_proj_latlon(const bench_proj *p, double x, double y, double *lat, double *lon);

#endif
