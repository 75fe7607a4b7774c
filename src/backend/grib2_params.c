/* Which variables become GRIB2 messages, and as which parameter: see
 * grib2_params.h. The table names WRF's history fields that have a WMO
 * GRIB2 parameter; what each becomes is docs/grib2.md's table. */
#include "backend/grib2_params.h"

#include <string.h>

#include "backend/grib2_grid.h"
#include "core/verbose.h"

/* WRF history fields with a WMO GRIB2 parameter (code table 4.2). WRF's T,
 * P and PH are perturbations; the messages hold the full fields, as WRF's
 * post-processors (UPP, wrf-python) derive them: theta = T + 300 K,
 * pressure = P + PB, geopotential = PH + PHB (docs/grib2.md). */
static const tsr__grib_param wrf_params[] = {
    {"T", 0, 0, 2, TSR__SFC_HYBRID, -1, 300.0, NULL}, /* potential temperature */
    {"P", 0, 3, 0, TSR__SFC_HYBRID, -1, 0, "PB"},     /* pressure */
    {"U", 0, 2, 2, TSR__SFC_HYBRID, -1, 0, NULL},     {"V", 0, 2, 3, TSR__SFC_HYBRID, -1, 0, NULL},
    {"W", 0, 2, 9, TSR__SFC_HYBRID, -1, 0, NULL},     {"PH", 0, 3, 4, TSR__SFC_HYBRID, -1, 0, "PHB"},
    {"QVAPOR", 0, 1, 2, TSR__SFC_HYBRID, -1, 0, NULL}, /* mixing ratio */
    {"T2", 0, 0, 0, TSR__SFC_HEIGHT, 2, 0, NULL},    {"Q2", 0, 1, 2, TSR__SFC_HEIGHT, 2, 0, NULL},
    {"U10", 0, 2, 2, TSR__SFC_HEIGHT, 10, 0, NULL},  {"V10", 0, 2, 3, TSR__SFC_HEIGHT, 10, 0, NULL},
    {"PSFC", 0, 3, 0, TSR__SFC_GROUND, 0, 0, NULL},  {"TSK", 0, 0, 17, TSR__SFC_GROUND, 0, 0, NULL},
    {"HGT", 0, 3, 5, TSR__SFC_GROUND, 0, 0, NULL},   {"RAINC", 0, 1, 10, TSR__SFC_GROUND, 0, 0, NULL},
    {"RAINNC", 0, 1, 9, TSR__SFC_GROUND, 0, 0, NULL}, {"SWDOWN", 0, 4, 7, TSR__SFC_GROUND, 0, 0, NULL},
    {"HFX", 0, 0, 11, TSR__SFC_GROUND, 0, 0, NULL},  {"LH", 0, 0, 10, TSR__SFC_GROUND, 0, 0, NULL},
    {"PBLH", 0, 3, 18, TSR__SFC_GROUND, 0, 0, NULL},
};

static int int_att(const tsr__var *v, const char *name, int *out) {
  for (int a = 0; a < v->natts; a++) {
    const tsr__att *at = &v->atts[a];
    if (strcmp(at->name, name) != 0 || at->n < 1) continue;
    if (at->type == TSR_INT) *out = *(const int32_t *)at->values;
    else if (at->type == TSR_SHORT) *out = *(const int16_t *)at->values;
    else if (at->type == TSR_BYTE) *out = *(const int8_t *)at->values;
    else return 0;
    return 1;
  }
  return 0;
}

/* The GRIB2 parameter of a variable: its GRIB_* attributes, else the WRF
 * table; 0 when it has none. */
static int param_of(const tsr__var *v, int nlev, tsr__grib_param *p) {
  int d, c, n;
  memset(p, 0, sizeof *p);
  p->surface = nlev > 1 ? TSR__SFC_HYBRID : TSR__SFC_GROUND;
  p->level = -1;
  if (int_att(v, "GRIB_discipline", &d) && int_att(v, "GRIB_parameterCategory", &c) &&
      int_att(v, "GRIB_parameterNumber", &n)) {
    p->discipline = d;
    p->category = c;
    p->number = n;
    int_att(v, "GRIB_typeOfFirstFixedSurface", &p->surface);
    if (p->surface != TSR__SFC_HYBRID) p->level = 0; /* a surface: level 0 unless given */
    int_att(v, "GRIB_level", &p->level);
    return 1;
  }
  for (size_t i = 0; i < sizeof wrf_params / sizeof wrf_params[0]; i++)
    if (strcmp(wrf_params[i].name, v->name) == 0) return *p = wrf_params[i], 1;
  return 0;
}

/* A perturbation's base state: the variable named p->base, of the same
 * shape and record-ness, not a message of its own; -1 when there is none. */
static int base_of(const tsr__grib_var *gv, const tsr__schema *s, int v) {
  const tsr__grib_var *g = &gv[v];
  int b = g->p.base ? tsr__schema_find_var(s, g->p.base) : -1;
  if (b < 0 || b == v) return -1;
  const tsr__grib_var *gb = &gv[b];
  if (gb->mapped || gb->nx != g->nx || gb->ny != g->ny || gb->nlev != g->nlev ||
      s->vars[b].is_record != s->vars[v].is_record || s->vars[b].type == TSR_CHAR)
    return -1;
  return b;
}

int tsr__grib_describe(const tsr__schema *s, tsr__grib_var *gv, const char *path) {
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    tsr__grib_var *g = &gv[v];
    g->base = g->base_of = -1;
    int64_t shape[TSR_MAX_DIMS];
    int nd = tsr__var_shape(s, v, shape);
    if (nd < 2 || var->type == TSR_CHAR) continue;
    g->ny = shape[nd - 2];
    g->nx = shape[nd - 1];
    g->nlev = 1;
    for (int i = 0; i < nd - 2; i++) g->nlev *= shape[i];
    g->on_proj = tsr__grib_on_projection(s, v);
    if (g->nx * g->ny == 0 || !param_of(var, (int)g->nlev, &g->p)) continue;
    if (g->nx * g->ny > (int64_t)1 << 31) return v;
    g->mapped = 1;
  }
  /* A perturbation without its base state would claim to be the full
   * field: it is left out instead. */
  int mapped = 0;
  for (int v = 0; v < s->nvars; v++) {
    tsr__grib_var *g = &gv[v];
    if (g->mapped && g->p.base && (g->base = base_of(gv, s, v)) < 0) {
      g->mapped = 0;
      TSR_LOG("grib2 %s: %s is a perturbation and the file has no %s of its shape to add: "
              "left out", path, s->vars[v].name, g->p.base);
    }
    if (g->mapped && g->base >= 0) gv[g->base].base_of = v;
  }
  for (int v = 0; v < s->nvars; v++) mapped += gv[v].mapped;
  TSR_LOG("grib2 %s: %d of %d variables have a GRIB2 parameter; the others are left out", path,
          mapped, s->nvars);
  return -1;
}
