/* WRF's map projections for the bench's XLAT/XLONG: see projection.h. The
 * formulas are module_llxy's (set_lc/llij_lc/ijll_lc, the polar
 * stereographic, Mercator and cylindrical equidistant ones) on WRF's
 * sphere of 6370 km, written in metres from the pole or the equator. */
#include "projection.h"

#include <math.h>
#include <string.h>

#define EARTH_RADIUS 6370000.0
#define PI 3.14159265358979323846
#define RAD (PI / 180.0)
#define METRES_PER_DEGREE 111195.0 /* the flat patch without a projection */

static double att(const bench_schema *s, const char *name, double dflt) {
  const bench_att *a = bench_att_find(&s->gatts, name);
  if (!a || a->len < 1) return dflt;
  switch (a->type) {
  case TSR_FLOAT: return ((const float *)a->values)[0];
  case TSR_DOUBLE: return ((const double *)a->values)[0];
  case TSR_INT: return ((const int *)a->values)[0];
  default: return dflt;
  }
}

static double wrap180(double lon) {
  lon = fmod(lon + 180.0, 360.0);
  return (lon < 0 ? lon + 360.0 : lon) - 180.0;
}

static void forward(const bench_proj *p, double lat, double lon, double *x, double *y) {
  double dlon = wrap180(lon - p->stand_lon), h = p->hemi;
  switch (p->kind) {
  case 1: {
    double rho = EARTH_RADIUS * cos(p->truelat1 * RAD) / p->cone *
                 pow(tan((90.0 * h - lat) * RAD / 2) / tan((90.0 * h - p->truelat1) * RAD / 2),
                     p->cone);
    *x = h * rho * sin(p->cone * dlon * RAD);
    *y = -h * rho * cos(p->cone * dlon * RAD);
    return;
  }
  case 2: {
    double rm = EARTH_RADIUS * cos(lat * RAD) * (1 + h * sin(p->truelat1 * RAD)) /
                (1 + h * sin(lat * RAD));
    *x = rm * sin(dlon * RAD);
    *y = -h * rm * cos(dlon * RAD);
    return;
  }
  case 3:
    *x = EARTH_RADIUS * cos(p->truelat1 * RAD) * dlon * RAD;
    *y = EARTH_RADIUS * cos(p->truelat1 * RAD) * log(tan((45.0 + lat / 2) * RAD));
    return;
  default: /* 6: degrees */
    *x = dlon;
    *y = lat;
  }
}

static void inverse(const bench_proj *p, double x, double y, double *lat, double *lon) {
  double h = p->hemi, dlon;
  switch (p->kind) {
  case 1: {
    double k = hypot(x, y) * p->cone / (EARTH_RADIUS * cos(p->truelat1 * RAD));
    dlon = atan2(h * x, -h * y) / p->cone / RAD;
    *lat = 90.0 * h -
           2 * atan(tan((90.0 * h - p->truelat1) * RAD / 2) * pow(k, 1 / p->cone)) / RAD;
    break;
  }
  case 2: {
    double k = hypot(x, y) / (EARTH_RADIUS * (1 + h * sin(p->truelat1 * RAD)));
    dlon = atan2(x, -h * y) / RAD;
    *lat = h * (90.0 - 2 * atan(k) / RAD);
    break;
  }
  case 3: {
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

void bench_proj_init(bench_proj *p, const bench_schema *s, int nx, int ny) {
  memset(p, 0, sizeof *p);
  p->nx = nx;
  p->ny = ny;
  p->cen_lat = att(s, "CEN_LAT", 40.0);
  p->cen_lon = att(s, "CEN_LON", -98.0);
  p->dx = att(s, "DX", 3000.0);
  p->dy = att(s, "DY", 3000.0);
  p->truelat1 = att(s, "TRUELAT1", 30.0);
  p->truelat2 = att(s, "TRUELAT2", p->truelat1);
  p->stand_lon = att(s, "STAND_LON", p->cen_lon);
  p->hemi = p->truelat1 < 0 ? -1.0 : 1.0;
  int kind = (int)att(s, "MAP_PROJ", 0);
  switch (kind) {
  case 1:
    if (fabs(p->truelat1 - p->truelat2) > 0.1)
      p->cone = (log(cos(p->truelat1 * RAD)) - log(cos(p->truelat2 * RAD))) /
                (log(tan((45.0 - fabs(p->truelat1) / 2) * RAD)) -
                 log(tan((45.0 - fabs(p->truelat2) / 2) * RAD)));
    else
      p->cone = sin(fabs(p->truelat1) * RAD);
    break;
  case 2: break;
  case 3: p->stand_lon = p->cen_lon; break;
  case 6:
    p->stand_lon = p->cen_lon;
    p->dx *= 360.0 / (2 * PI * EARTH_RADIUS); /* WRF's lat/lon grid lengths are metres */
    p->dy *= 360.0 / (2 * PI * EARTH_RADIUS);
    break;
  default: kind = 0;
  }
  p->kind = kind;
  if (kind) forward(p, p->cen_lat, p->cen_lon, &p->xc, &p->yc);
}

void bench_proj_latlon(const bench_proj *p, double x, double y, double *lat, double *lon) {
  double dx = x - 0.5 * (p->nx - 1), dy = y - 0.5 * (p->ny - 1);
  if (!p->kind) { /* no projection: a flat patch, degrees from metres */
    *lat = p->cen_lat + dy * p->dy / METRES_PER_DEGREE;
    *lon = p->cen_lon + dx * p->dx / (METRES_PER_DEGREE * cos(*lat * RAD));
    return;
  }
  inverse(p, p->xc + dx * p->dx, p->yc + dy * p->dy, lat, lon);
}
