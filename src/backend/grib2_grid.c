/* The grid of GRIB2 messages from WRF's projection: see grib2_grid.h. The
 * formulas are those of WRF's module_llxy (set_lc/llij_lc, set_ps/llij_ps,
 * set_merc/llij_merc), written in metres from the pole (or the equator)
 * instead of grid indices; ecCodes then computes every point from the first
 * one with its own iterators, so a reader's latitudes are ecCodes', not ours. */
#include "backend/grib2_grid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EARTH_RADIUS 6370000.0 /* WRF's sphere (module_llxy, share/module_model_constants) */
#define PI 3.14159265358979323846
#define RAD (PI / 180.0)

static int num_att(const tsr__schema *s, const char *name, double *out) {
  const tsr__att *a = tsr__att_find(s->gatts, s->ngatts, name);
  if (!a || a->n < 1) return 0;
  switch (a->type) {
  case TSR_FLOAT: *out = *(const float *)a->values; return 1;
  case TSR_DOUBLE: *out = *(const double *)a->values; return 1;
  case TSR_INT: *out = *(const int32_t *)a->values; return 1;
  case TSR_SHORT: *out = *(const int16_t *)a->values; return 1;
  default: return 0;
  }
}

/* Longitude in [-180, 180). */
static double wrap180(double lon) {
  lon = fmod(lon + 180.0, 360.0);
  return (lon < 0 ? lon + 360.0 : lon) - 180.0;
}

/* Longitude in [0, 360): GRIB2 codes longitudes unsigned. */
static double wrap360(double lon) {
  lon = fmod(lon, 360.0);
  return lon < 0 ? lon + 360.0 : lon;
}

/* (lat, lon) -> projection coordinates (metres; degrees for lat/lon). */
static void forward(const tsr__grib_proj *p, double lat, double lon, double *x, double *y) {
  double dlon = wrap180(lon - p->stand_lon), h = p->hemi;
  switch (p->kind) {
  case TSR__GRIB_GRID_LAMBERT: {
    double rho = EARTH_RADIUS * cos(p->truelat1 * RAD) / p->cone *
                 pow(tan((90.0 * h - lat) * RAD / 2) / tan((90.0 * h - p->truelat1) * RAD / 2),
                     p->cone);
    *x = h * rho * sin(p->cone * dlon * RAD);
    *y = -h * rho * cos(p->cone * dlon * RAD);
    return;
  }
  case TSR__GRIB_GRID_POLAR: {
    double rm = EARTH_RADIUS * cos(lat * RAD) * (1 + h * sin(p->truelat1 * RAD)) /
                (1 + h * sin(lat * RAD));
    *x = rm * sin(dlon * RAD);
    *y = -h * rm * cos(dlon * RAD);
    return;
  }
  case TSR__GRIB_GRID_MERCATOR: {
    double r = EARTH_RADIUS * cos(p->truelat1 * RAD);
    *x = r * dlon * RAD;
    *y = r * log(tan((45.0 + lat / 2) * RAD));
    return;
  }
  default:
    *x = dlon;
    *y = lat;
  }
}

/* Projection coordinates -> (lat, lon), longitude in [-180, 180). */
static void inverse(const tsr__grib_proj *p, double x, double y, double *lat, double *lon) {
  double h = p->hemi, dlon;
  switch (p->kind) {
  case TSR__GRIB_GRID_LAMBERT: {
    double rho = hypot(x, y), k = rho * p->cone / (EARTH_RADIUS * cos(p->truelat1 * RAD));
    dlon = atan2(h * x, -h * y) / p->cone / RAD;
    *lat = 90.0 * h -
           2 * atan(tan((90.0 * h - p->truelat1) * RAD / 2) * pow(k, 1 / p->cone)) / RAD;
    break;
  }
  case TSR__GRIB_GRID_POLAR: {
    double k = hypot(x, y) / (EARTH_RADIUS * (1 + h * sin(p->truelat1 * RAD)));
    dlon = atan2(x, -h * y) / RAD;
    *lat = h * (90.0 - 2 * atan(k) / RAD);
    break;
  }
  case TSR__GRIB_GRID_MERCATOR: {
    double r = EARTH_RADIUS * cos(p->truelat1 * RAD);
    dlon = x / r / RAD;
    *lat = 2 * atan(exp(y / r)) / RAD - 90.0;
    break;
  }
  default:
    dlon = x;
    *lat = y;
  }
  *lon = wrap180(p->stand_lon + dlon);
}

/* The projection from the attributes; NULL, or why there is none. */
static const char *setup(tsr__grib_proj *p, const tsr__schema *s, char *why, size_t n) {
  double mp = 0, pole_lat = 90;
  if (!num_att(s, "MAP_PROJ", &mp)) return "no MAP_PROJ attribute (not a WRF schema)";
  if (!num_att(s, "CEN_LAT", &p->cen_lat) || !num_att(s, "CEN_LON", &p->cen_lon) ||
      !num_att(s, "DX", &p->dx) || !num_att(s, "DY", &p->dy) || p->dx <= 0 || p->dy <= 0)
    return "CEN_LAT, CEN_LON, DX or DY missing";
  num_att(s, "TRUELAT1", &p->truelat1);
  if (!num_att(s, "TRUELAT2", &p->truelat2)) p->truelat2 = p->truelat1;
  if (!num_att(s, "STAND_LON", &p->stand_lon)) p->stand_lon = p->cen_lon;
  num_att(s, "POLE_LAT", &pole_lat);
  p->hemi = p->truelat1 < 0 ? -1.0 : 1.0;
  switch ((int)mp) {
  case 1:
    if (fabs(p->truelat1) < 1e-6 || fabs(p->truelat1) > 90 - 1e-6)
      return "MAP_PROJ=1 with TRUELAT1 at the equator or a pole";
    p->kind = TSR__GRIB_GRID_LAMBERT;
    /* WRF's cone constant (set_lc): secant through both true latitudes,
     * tangent at TRUELAT1 when they (nearly) coincide. */
    if (fabs(p->truelat1 - p->truelat2) > 0.1)
      p->cone = (log(cos(p->truelat1 * RAD)) - log(cos(p->truelat2 * RAD))) /
                (log(tan((45.0 - fabs(p->truelat1) / 2) * RAD)) -
                 log(tan((45.0 - fabs(p->truelat2) / 2) * RAD)));
    else
      p->cone = sin(fabs(p->truelat1) * RAD);
    return NULL;
  case 2:
    if (fabs(p->truelat1) < 1e-6) return "MAP_PROJ=2 with TRUELAT1 at the equator";
    p->kind = TSR__GRIB_GRID_POLAR;
    return NULL;
  case 3:
    if (fabs(p->truelat1) > 89) return "MAP_PROJ=3 with TRUELAT1 at a pole";
    p->kind = TSR__GRIB_GRID_MERCATOR;
    p->stand_lon = p->cen_lon; /* x counts from the centre: no wrap inside the domain */
    return NULL;
  case 6:
    /* A rotated lat/lon domain (POLE_LAT != 90) needs template 3.1, which
     * is not done: placeholder. */
    if (fabs(pole_lat - 90.0) > 1e-6) return "MAP_PROJ=6 rotated (POLE_LAT != 90) is not coded";
    p->kind = TSR__GRIB_GRID_LATLON;
    p->stand_lon = p->cen_lon;
    /* WRF keeps lat/lon grid lengths in metres along the equator of its
     * sphere (module_llxy's latinc/loninc = d * 360 / (2 pi R)). */
    p->dx = p->dx * 360.0 / (2 * PI * EARTH_RADIUS);
    p->dy = p->dy * 360.0 / (2 * PI * EARTH_RADIUS);
    return NULL;
  default:
    snprintf(why, n, "MAP_PROJ=%g is not coded", mp);
    return why;
  }
}

void tsr__grib_proj_init(tsr__grib_proj *p, const tsr__schema *s) {
  memset(p, 0, sizeof *p);
  char buf[64];
  const char *why = setup(p, s, buf, sizeof buf);
  if (why) {
    p->kind = TSR__GRIB_GRID_NONE;
    snprintf(p->why, sizeof p->why, "%s", why);
    return;
  }
  forward(p, p->cen_lat, p->cen_lon, &p->xc, &p->yc);
}

int tsr__grib_on_projection(const tsr__schema *s, int varid) {
  const tsr__var *v = &s->vars[varid];
  if (v->ndims < 2) return 0;
  const char *y = s->dims[v->dimids[v->ndims - 2]].name, *x = s->dims[v->dimids[v->ndims - 1]].name;
  return (strcmp(y, "south_north") == 0 || strcmp(y, "south_north_stag") == 0) &&
         (strcmp(x, "west_east") == 0 || strcmp(x, "west_east_stag") == 0);
}

void tsr__grib_proj_point(const tsr__grib_proj *p, long ni, long nj, double i, double j,
                          double *lat, double *lon) {
  inverse(p, p->xc + (i - (double)(ni - 1) / 2) * p->dx, p->yc + (j - (double)(nj - 1) / 2) * p->dy,
          lat, lon);
}

typedef struct {
  const char *k;
  double v;
  int is_long;
} key_val;

static int set_all(codes_handle *h, const key_val *kv, size_t n, const char **key) {
  for (size_t i = 0; i < n; i++) {
    int e = kv[i].is_long ? codes_set_long(h, kv[i].k, (long)kv[i].v)
                          : codes_set_double(h, kv[i].k, kv[i].v);
    if (e) return *key = kv[i].k, e;
  }
  return 0;
}

int tsr__grib_set_grid(codes_handle *h, const tsr__grib_proj *p, long ni, long nj,
                       const char **key) {
  static const char *const types[] = {"regular_ll", "lambert", "polar_stereographic",
                                      "mercator", "regular_ll"};
  int kind = p ? p->kind : TSR__GRIB_GRID_NONE;
  size_t len = strlen(types[kind]);
  int e = codes_set_string(h, "gridType", types[kind], &len);
  if (e) return *key = "gridType", e;
  if (kind == TSR__GRIB_GRID_NONE) {
    const key_val kv[] = {{"Ni", (double)ni, 1},
                          {"Nj", (double)nj, 1},
                          {"jScansPositively", 1, 1},
                          {"latitudeOfFirstGridPointInDegrees", 0, 0},
                          {"longitudeOfFirstGridPointInDegrees", 0, 0},
                          {"latitudeOfLastGridPointInDegrees", 0.01 * (double)(nj - 1), 0},
                          {"longitudeOfLastGridPointInDegrees", 0.01 * (double)(ni - 1), 0},
                          {"iDirectionIncrementInDegrees", 0.01, 0},
                          {"jDirectionIncrementInDegrees", 0.01, 0}};
    return set_all(h, kv, sizeof kv / sizeof kv[0], key);
  }
  double lat1, lon1, lat2, lon2;
  tsr__grib_proj_point(p, ni, nj, 0, 0, &lat1, &lon1);
  tsr__grib_proj_point(p, ni, nj, (double)(ni - 1), (double)(nj - 1), &lat2, &lon2);
  /* WRF's sphere (code table 3.2: 1, radius given by the producer). */
  const key_val earth[] = {{"shapeOfTheEarth", 1, 1},
                           {"scaleFactorOfRadiusOfSphericalEarth", 0, 1},
                           {"scaledValueOfRadiusOfSphericalEarth", EARTH_RADIUS, 1},
                           {"Ni", (double)ni, 1},
                           {"Nj", (double)nj, 1},
                           {"iScansNegatively", 0, 1},
                           {"jScansPositively", 1, 1}, /* rows south to north, as y grows */
                           {"latitudeOfFirstGridPointInDegrees", lat1, 0},
                           {"longitudeOfFirstGridPointInDegrees", wrap360(lon1), 0}};
  if ((e = set_all(h, earth, sizeof earth / sizeof earth[0], key))) return e;
  double centre = p->hemi < 0 ? 128 : 0; /* code table 3.5: bit 1, south pole on the plane */
  switch (kind) {
  case TSR__GRIB_GRID_LAMBERT: {
    const key_val kv[] = {{"LaDInDegrees", p->truelat1, 0},
                          {"LoVInDegrees", wrap360(p->stand_lon), 0},
                          {"Latin1InDegrees", p->truelat1, 0},
                          {"Latin2InDegrees", p->truelat2, 0},
                          {"DxInMetres", p->dx, 0},
                          {"DyInMetres", p->dy, 0},
                          {"projectionCentreFlag", centre, 1},
                          {"latitudeOfSouthernPoleInDegrees", -90, 0},
                          {"longitudeOfSouthernPoleInDegrees", 0, 0}};
    return set_all(h, kv, sizeof kv / sizeof kv[0], key);
  }
  case TSR__GRIB_GRID_POLAR: {
    const key_val kv[] = {{"LaDInDegrees", p->truelat1, 0},
                          {"orientationOfTheGridInDegrees", wrap360(p->stand_lon), 0},
                          {"DxInMetres", p->dx, 0},
                          {"DyInMetres", p->dy, 0},
                          {"projectionCentreFlag", centre, 1}};
    return set_all(h, kv, sizeof kv / sizeof kv[0], key);
  }
  case TSR__GRIB_GRID_MERCATOR: {
    const key_val kv[] = {{"LaDInDegrees", p->truelat1, 0},
                          {"latitudeOfLastGridPointInDegrees", lat2, 0},
                          {"longitudeOfLastGridPointInDegrees", wrap360(lon2), 0},
                          {"orientationOfTheGridInDegrees", 0, 0},
                          {"DiInMetres", p->dx, 0},
                          {"DjInMetres", p->dy, 0}};
    return set_all(h, kv, sizeof kv / sizeof kv[0], key);
  }
  default: {
    const key_val kv[] = {{"latitudeOfLastGridPointInDegrees", lat2, 0},
                          {"longitudeOfLastGridPointInDegrees", wrap360(lon2), 0},
                          {"iDirectionIncrementInDegrees", p->dx, 0},
                          {"jDirectionIncrementInDegrees", p->dy, 0}};
    return set_all(h, kv, sizeof kv / sizeof kv[0], key);
  }
  }
}
