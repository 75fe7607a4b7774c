/* The bench's physical state outside --check: a standard atmosphere (ICAO)
 * over flat terrain, with a warm bubble and a gentle wind shear, in WRF's
 * variables and units, so that WRF's own tools compute diagnostics from the
 * files (wrf-python's slp, z, ua, tc need P+PB decreasing with height,
 * PH+PHB = g z, T = theta - 300 with plausible temperatures, QVAPOR).
 *
 * Levels are evenly spaced in height from the ground to BENCH_ZTOP; WRF's
 * eta values (ZNU, ZNW) are those of the base-state pressure on them. A
 * variable the table does not name holds 0, which is plausible for WRF's
 * tendencies, fluxes, precipitation and hydrometeors. The kernel's
 * diffusion is linear with positive weights, so the totals (P+PB, PH+PHB,
 * T) stay monotone in height and inside their initial range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "projection.h"

#define BENCH_ZTOP 20000.0 /* metres */
#define G 9.81
#define RD 287.0
#define CP 1004.5
#define OMEGA 7.292e-5
#define METRES_PER_DEGREE 111195.0
#define PI 3.14159265358979323846

/* ICAO standard atmosphere: temperature (K) and pressure (Pa) at height z. */
static double std_t(double z) {
  if (z <= 11000.0) return 288.15 - 0.0065 * z;
  if (z <= 20000.0) return 216.65;
  return 216.65 + 0.001 * (z - 20000.0);
}

static double std_p(double z) {
  if (z <= 11000.0) return 101325.0 * pow(std_t(z) / 288.15, 9.80665 / (287.053 * 0.0065));
  double p11 = 101325.0 * pow(216.65 / 288.15, 9.80665 / (287.053 * 0.0065));
  if (z <= 20000.0) return p11 * exp(-9.80665 * (z - 11000.0) / (287.053 * 216.65));
  double p20 = p11 * exp(-9.80665 * 9000.0 / (287.053 * 216.65));
  return p20 * pow(std_t(z) / 216.65, -9.80665 / (287.053 * 0.001));
}

/* Heights of full (w) level k of nz+1 and of half (mass) level k of nz. */
static double z_full(int64_t k, int nz) { return BENCH_ZTOP * (double)k / (double)nz; }
static double z_half(int64_t k, int nz) { return BENCH_ZTOP * ((double)k + 0.5) / (double)nz; }

typedef enum {
  A_ZERO, A_T, A_P, A_PB, A_P_HYD, A_PH, A_PHB, A_U, A_V, A_QV, A_MUB, A_PSFC, A_T2, A_Q2,
  A_U10, A_V10, A_TSK, A_TSLB, A_SMOIS, A_LAT, A_LON, A_ONE, A_F, A_E, A_PBLH, A_ALBEDO,
  A_EMISS, A_VEGFRA, A_LANDUSE, A_CATEGORY
} atmos_kind;

static const struct {
  const char *name;
  atmos_kind kind;
} table[] = {
    {"T", A_T},           {"THM", A_T},           {"P", A_P},             {"PB", A_PB},
    {"P_HYD", A_P_HYD},   {"PH", A_PH},           {"PHB", A_PHB},         {"U", A_U},
    {"V", A_V},           {"QVAPOR", A_QV},       {"MUB", A_MUB},         {"PSFC", A_PSFC},
    {"T2", A_T2},         {"TH2", A_T2},          {"Q2", A_Q2},           {"U10", A_U10},
    {"V10", A_V10},       {"TSK", A_TSK},         {"SST", A_TSK},         {"TMN", A_TSLB},
    {"TSLB", A_TSLB},     {"SMOIS", A_SMOIS},     {"SH2O", A_SMOIS},      {"XLAT", A_LAT},
    {"XLAT_U", A_LAT},    {"XLAT_V", A_LAT},      {"XLONG", A_LON},       {"XLONG_U", A_LON},
    {"XLONG_V", A_LON},   {"MAPFAC_M", A_ONE},    {"MAPFAC_U", A_ONE},    {"MAPFAC_V", A_ONE},
    {"MAPFAC_MX", A_ONE}, {"MAPFAC_MY", A_ONE},   {"MAPFAC_UX", A_ONE},   {"MAPFAC_UY", A_ONE},
    {"MAPFAC_VX", A_ONE}, {"MAPFAC_VY", A_ONE},   {"MF_VX_INV", A_ONE},   {"COSALPHA", A_ONE},
    {"LANDMASK", A_ONE},  {"XLAND", A_ONE},       {"F", A_F},             {"E", A_E},
    {"PBLH", A_PBLH},     {"ALBEDO", A_ALBEDO},   {"ALBBCK", A_ALBEDO},   {"EMISS", A_EMISS},
    {"VEGFRA", A_VEGFRA}, {"LU_INDEX", A_LANDUSE}, {"IVGTYP", A_CATEGORY}, {"ISLTYP", A_CATEGORY},
};

static atmos_kind kind_of(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].kind;
  return A_ZERO;
}

static double att_value(const bench_schema *s, const char *name, double dflt) {
  const bench_att *a = bench_att_find(&s->gatts, name);
  if (!a || a->len < 1) return dflt;
  switch (a->type) {
  case TSR_FLOAT: return ((const float *)a->values)[0];
  case TSR_DOUBLE: return ((const double *)a->values)[0];
  case TSR_INT: return ((const int *)a->values)[0];
  default: break; /* text, and types the bench's schemas never hold */
  }
  return dflt;
}

typedef struct {
  const bench_run *run;
  bench_field *f;
  tsr_type type;
  atmos_kind kind;
  int zdim;     /* position of the vertical (or soil) dimension, -1 if none */
  int zstag;    /* it is bottom_top_stag */
  int xstag, ystag;
  double cen_lat, cen_lon;
  double *bx; /* the bubble's x factor at global x index bx0 + i (xstag applied), */
  int64_t bx0, nbx; /* over the rank's memory, halos included */
  const bench_proj *proj; /* XLAT, XLONG: WRF's map projection (projection.c) */
} fill_ctx;

/* Everything that is constant along a row of x: the level's height and its
 * standard atmosphere, the latitude, the bubble's y and z factors. Filling a
 * field then costs a table lookup and a few flops per point, not the pow and
 * exp of a full evaluation (which dominated the bench's start-up: seconds
 * for a 1024 x 1024 x 28 domain). */
typedef struct {
  int64_t level;
  double y, z, lat, byz, t, p, theta, qv, coslat, sinlat;
} row_terms;

/* The warm bubble, 1 in the middle of the domain near the ground, fading out
 * over a quarter of the domain and 3 km of height, is exp(-rx^2) exp(-ry^2)
 * exp(-z / 3000): its x factor at position x (mass-point units). */
static double bubble_x(const fill_ctx *c, double x) {
  double cx = 0.5 * c->run->cfg.nx, rx = (x - cx) / (0.25 * c->run->cfg.nx + 1.0);
  return exp(-rx * rx);
}

static void terms_at(const fill_ctx *c, int64_t level, double y, row_terms *r) {
  const bench_config *cfg = &c->run->cfg;
  int nz = cfg->nz;
  double cy = 0.5 * cfg->ny, ry = (y - cy) / (0.25 * cfg->ny + 1.0);
  r->level = level;
  r->y = y;
  r->z = c->zdim < 0 ? 0.0 : c->zstag ? z_full(level, nz) : z_half(level, nz);
  r->lat = c->cen_lat + (y - 0.5 * cfg->ny) * cfg->dy / METRES_PER_DEGREE;
  r->byz = exp(-ry * ry) * exp(-r->z / 3000.0);
  r->t = std_t(r->z);
  r->p = std_p(r->z);
  r->theta = r->t * pow(1e5 / r->p, RD / CP);
  r->qv = 0.01 * exp(-r->z / 2500.0);
  r->coslat = cos(r->lat * PI / 180.0);
  r->sinlat = sin(r->lat * PI / 180.0);
}

/* The value at position x of a row whose terms are @p r; @p bx is the
 * bubble's x factor there. */
static double value_at(const fill_ctx *c, const row_terms *r, double x, double bx) {
  double b = bx * r->byz;
  switch (c->kind) {
  case A_ZERO: return 0.0;
  case A_T: return r->theta - 300.0 + 2.0 * b;
  case A_P: return -30.0 * b;
  case A_PB: return r->p;
  case A_P_HYD: return r->p - 30.0 * b;
  case A_PH: return 5.0 * b;
  case A_PHB: return G * r->z;
  case A_U: return 5.0 + 10.0 * r->z / BENCH_ZTOP + b;
  case A_V: return 2.0 - b;
  case A_QV: return r->qv;
  case A_MUB: return std_p(0.0) - std_p(BENCH_ZTOP);
  case A_PSFC: return std_p(0.0) - 30.0 * b;
  case A_T2: return std_t(2.0) + 2.0 * b;
  case A_Q2: return 0.01;
  case A_U10: return 5.0 + b;
  case A_V10: return 2.0 - b;
  case A_TSK: return 288.15 + 2.0 * b;
  case A_TSLB: return 288.0 - (double)r->level;
  case A_SMOIS: return 0.3;
  case A_LAT:
  case A_LON: {
    double lat, lon;
    bench_proj_latlon(c->proj, x, r->y, &lat, &lon);
    return c->kind == A_LAT ? lat : lon;
  }
  case A_ONE: return 1.0;
  case A_F: return 2.0 * OMEGA * r->sinlat;
  case A_E: return 2.0 * OMEGA * r->coslat;
  case A_PBLH: return 500.0 + 300.0 * b;
  case A_ALBEDO: return 0.2;
  case A_EMISS: return 0.95;
  case A_VEGFRA: return 50.0;
  case A_LANDUSE: return 2.0;
  case A_CATEGORY: return (double)(((int64_t)x / 8 + (int64_t)r->y / 8) % 20 + 1);
  }
  return 0.0;
}

static void fill_row(void *argp, const bench_shape *sh, int64_t moff, const int64_t gidx[],
                     int64_t n) {
  const fill_ctx *c = argp;
  int last = sh->ndims - 1, along_x = sh->xdim == last;
  int64_t g[TSR_MAX_DIMS];
  memcpy(g, gidx, sizeof(int64_t) * (size_t)sh->ndims);
  row_terms r = {0};
  /* Along x every kind but three is a + b * bx[x] with a, b fixed by the row
   * (value_at with the bubble's x factor 0 and 1): one fused multiply-add
   * per point. */
  if (along_x && c->type == TSR_FLOAT && c->kind != A_LAT && c->kind != A_LON &&
      c->kind != A_CATEGORY &&
      gidx[last] >= c->bx0 && gidx[last] + n <= c->bx0 + c->nbx) {
    double y = sh->ydim >= 0 ? (double)g[sh->ydim] - (c->ystag ? 0.5 : 0.0) : 0.0;
    terms_at(c, c->zdim >= 0 ? g[c->zdim] : 0, y, &r);
    double a = value_at(c, &r, 0.0, 0.0), b = value_at(c, &r, 0.0, 1.0) - a;
    float *out = (float *)c->f->buf + moff;
    const double *bx = c->bx + (gidx[last] - c->bx0);
    for (int64_t e = 0; e < n; e++) out[e] = (float)(a + b * bx[e]);
    return;
  }
  for (int64_t e = 0; e < n; e++) {
    g[last] = gidx[last] + e;
    /* Positions in mass-point units: a staggered point lies half a cell
     * before the mass point of the same index. */
    int64_t xi = sh->xdim >= 0 ? g[sh->xdim] : -1;
    double x = xi >= 0 ? (double)xi - (c->xstag ? 0.5 : 0.0) : 0.0;
    double y = sh->ydim >= 0 ? (double)g[sh->ydim] - (c->ystag ? 0.5 : 0.0) : 0.0;
    if (e == 0 || !along_x) terms_at(c, c->zdim >= 0 ? g[c->zdim] : 0, y, &r);
    double bx = xi >= c->bx0 && xi < c->bx0 + c->nbx ? c->bx[xi - c->bx0] : bubble_x(c, x);
    double v = value_at(c, &r, x, bx);
    switch (c->type) {
    case TSR_FLOAT: ((float *)c->f->buf)[moff + e] = (float)v; break;
    case TSR_DOUBLE: ((double *)c->f->buf)[moff + e] = v; break;
    case TSR_INT: ((int *)c->f->buf)[moff + e] = (int)lround(v); break;
    default: break; /* char, and types the bench's schemas never hold */
    }
  }
}

void bench_atmos_fill_fields(bench_run *run) {
  const bench_schema *s = &run->schema;
  bench_proj proj;
  bench_proj_init(&proj, s, run->cfg.nx, run->cfg.ny);
  for (int v = 0; v < run->nfields; v++) {
    bench_field *f = &run->fields[v];
    if (f->shape < 0) continue;
    const bench_shape *sh = &run->shapes[f->shape];
    fill_ctx c = {run, f, s->vars[v].type, kind_of(s->vars[v].name), -1, 0, 0, 0,
                  att_value(s, "CEN_LAT", 40.0), att_value(s, "CEN_LON", -98.0), NULL, 0, 0,
                  &proj};
    for (int d = 0; d < sh->ndims; d++) {
      bench_dim_kind k = s->dims[sh->dimids[d]].kind;
      if (d != sh->xdim && d != sh->ydim && c.zdim < 0) {
        c.zdim = d;
        c.zstag = k == BD_Z_STAG;
      }
      if (k == BD_X_STAG) c.xstag = 1;
      if (k == BD_Y_STAG) c.ystag = 1;
    }
    if (sh->xdim >= 0) {
      c.bx0 = sh->mstart[sh->xdim];
      c.nbx = sh->mcount[sh->xdim];
      c.bx = malloc(sizeof(double) * (size_t)(c.nbx > 0 ? c.nbx : 1));
      if (!c.bx) c.nbx = 0; /* every point computes its own factor */
      for (int64_t i = 0; i < c.nbx; i++)
        c.bx[i] = bubble_x(&c, (double)(c.bx0 + i) - (c.xstag ? 0.5 : 0.0));
    }
    bench_shape_rows(sh, 0, fill_row, &c);
    free(c.bx);
  }
}

/* Eta of the base state at height z: WRF's terrain-following coordinate. */
static double eta_at(double z) {
  double ps = std_p(0.0), pt = std_p(BENCH_ZTOP);
  return (std_p(z) - pt) / (ps - pt);
}

double bench_atmos_global(const bench_run *run, int v, int64_t idx) {
  const bench_var *var = &run->schema.vars[v];
  const char *n = var->name;
  int nz = run->cfg.nz;
  static const double soil_depth[] = {0.05, 0.25, 0.7, 1.5}, soil_dz[] = {0.1, 0.3, 0.6, 1.0};
  if (strcmp(n, "ZNU") == 0) return eta_at(z_half(idx, nz));
  if (strcmp(n, "ZNW") == 0) return eta_at(z_full(idx, nz));
  if (strcmp(n, "DNW") == 0) return eta_at(z_full(idx + 1, nz)) - eta_at(z_full(idx, nz));
  if (strcmp(n, "RDNW") == 0) return 1.0 / (eta_at(z_full(idx + 1, nz)) - eta_at(z_full(idx, nz)));
  if (strcmp(n, "DN") == 0) return idx == 0 ? 0.0 : eta_at(z_half(idx, nz)) - eta_at(z_half(idx - 1, nz));
  if (strcmp(n, "RDN") == 0)
    return idx == 0 ? 0.0 : 1.0 / (eta_at(z_half(idx, nz)) - eta_at(z_half(idx - 1, nz)));
  if (strcmp(n, "FNM") == 0 || strcmp(n, "FNP") == 0) return idx == 0 ? 0.0 : 0.5;
  if (strcmp(n, "ZS") == 0) return idx < 4 ? soil_depth[idx] : 1.5 + (double)(idx - 3);
  if (strcmp(n, "DZS") == 0) return idx < 4 ? soil_dz[idx] : 1.0;
  if (strcmp(n, "P_TOP") == 0) return std_p(BENCH_ZTOP);
  if (strcmp(n, "RDX") == 0) return 1.0 / run->cfg.dx;
  if (strcmp(n, "RDY") == 0) return 1.0 / run->cfg.dy;
  if (strcmp(n, "DT") == 0) return run->cfg.dt;
  if (strcmp(n, "P00") == 0) return 1e5;
  if (strcmp(n, "T00") == 0) return 290.0;
  if (strcmp(n, "TLP") == 0) return 50.0;
  if (strcmp(n, "TISO") == 0) return 200.0;
  if (strcmp(n, "CF1") == 0) return 1.5;
  if (strcmp(n, "CF2") == 0) return -0.5;
  return 0.0;
}
