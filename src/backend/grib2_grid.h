/* The grid of GRIB2 messages (grib2.c): WRF's map projection, from the
 * global attributes every wrfout carries (MAP_PROJ, TRUELAT1, TRUELAT2,
 * STAND_LON, CEN_LAT, CEN_LON, DX, DY, POLE_LAT), as GRIB2 grid templates
 * 3.30 (Lambert conformal), 3.20 (polar stereographic), 3.10 (Mercator) and
 * 3.0 (regular lat/lon) on WRF's sphere of radius 6370 km.
 *
 * wrfout holds no corner: the first grid point (south-west, where the
 * messages start, rows south to north) comes from the centre, which is the
 * middle of every grid of the domain, mass and staggered alike, as WRF's
 * module_llxy places it: project the centre, step (N - 1) / 2 grid lengths
 * back along each axis, and project back. A field on west_east_stag thus
 * gets a grid one point wider whose first point lies half a cell west of the
 * mass grid's. Variables whose horizontal dimensions are not WRF's, and
 * files without the attributes (a non-WRF schema), keep a placeholder
 * grid: 0.01-degree regular lat/lon from 0N 0E (TESSERA_VERBOSE says why). */
#ifndef TSR_BACKEND_GRIB2_GRID_H
#define TSR_BACKEND_GRIB2_GRID_H

#include <eccodes.h>

#include "core/schema.h"

enum {
  TSR__GRIB_GRID_NONE,     /* placeholder */
  TSR__GRIB_GRID_LAMBERT,  /* MAP_PROJ 1 */
  TSR__GRIB_GRID_POLAR,    /* MAP_PROJ 2 */
  TSR__GRIB_GRID_MERCATOR, /* MAP_PROJ 3 */
  TSR__GRIB_GRID_LATLON    /* MAP_PROJ 6, unrotated */
};

typedef struct {
  int kind;
  double truelat1, truelat2, stand_lon, cen_lat, cen_lon;
  double dx, dy;     /* metres; degrees for lat/lon */
  double hemi, cone; /* Lambert and polar stereographic */
  double xc, yc;     /* the centre in projection coordinates */
  char why[192];     /* kind NONE: why (for the log) */
} tsr__grib_proj;

/* The projection of the file from its global attributes. */
void tsr__grib_proj_init(tsr__grib_proj *p, const tsr__schema *s);
/* 1 when variable @p varid's last two dimensions are WRF's horizontal ones
 * (south_north[_stag], west_east[_stag]): it lies on the projection. */
int tsr__grib_on_projection(const tsr__schema *s, int varid);
/* Latitude and longitude (degrees) of the point @p i, @p j (0-based, j
 * northwards) of a grid of @p ni x @p nj points centred on the domain. */
void tsr__grib_proj_point(const tsr__grib_proj *p, long ni, long nj, double i, double j,
                          double *lat, double *lon);
/* Set the grid of a message of @p ni x @p nj points, rows south to north:
 * the projection's (p NULL or kind NONE: the placeholder). Returns 0 or
 * ecCodes' error, *key naming the key it failed on. */
int tsr__grib_set_grid(codes_handle *h, const tsr__grib_proj *p, long ni, long nj,
                       const char **key);

#endif
