/* Which variables become GRIB2 messages (grib2.c), and as which parameter:
 * the variable's GRIB_* attributes, else the table of WRF history fields
 * (grib2_params.c; docs/grib2.md lists it). */
#ifndef TSR_BACKEND_GRIB2_PARAMS_H
#define TSR_BACKEND_GRIB2_PARAMS_H

#include "core/schema.h"

/* GRIB2 code table 4.5 surfaces Tessera uses. */
enum { TSR__SFC_GROUND = 1, TSR__SFC_HEIGHT = 103, TSR__SFC_HYBRID = 105 };

typedef struct {
  const char *name;
  int discipline, category, number;
  int surface, level; /* level: for TSR__SFC_HEIGHT, metres; else the level index */
  double offset;      /* added to every value: WRF's T is theta - 300 K */
  const char *base;   /* a perturbation: the base state added to it (P + PB) */
} tsr__grib_param;

/* What the backend knows of each variable of the schema. */
typedef struct {
  int mapped; /* 0: left out of the file */
  tsr__grib_param p;
  int64_t nlev; /* levels per frame: product of the dims before (y, x) */
  int64_t ny, nx;
  int base;    /* a perturbation's base state (varid), -1 if none */
  int base_of; /* this variable is the base state of that one, -1 if none */
  int on_proj; /* on WRF's horizontal grid: the projection's grid */
} tsr__grib_var;

/* Fill g[0..s->nvars-1]. Returns -1, or the varid of a mapped variable
 * whose level is too large for one message (2^31 points). */
int tsr__grib_describe(const tsr__schema *s, tsr__grib_var *g, const char *path);

#endif
