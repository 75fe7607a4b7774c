/* The default field set: a WRF-like history file (the same dimension names,
 * staggering and attributes as wrfout), sized later by bench_schema_resize. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef struct {
  const char *name;
  tsr_type type;
  const char *dims; /* space-separated, record dimension first */
  const char *order; /* WRF MemoryOrder */
  const char *stagger;
  const char *units;
  const char *description;
} field_def;

static const field_def fields[] = {
    {"Times", TSR_CHAR, "Time DateStrLen", NULL, NULL, NULL, NULL},
    {"XLAT", TSR_FLOAT, "Time south_north west_east", "XY ", "", "degree_north",
     "LATITUDE, SOUTH IS NEGATIVE"},
    {"XLONG", TSR_FLOAT, "Time south_north west_east", "XY ", "", "degree_east",
     "LONGITUDE, WEST IS NEGATIVE"},
    {"XLAT_U", TSR_FLOAT, "Time south_north west_east_stag", "XY ", "X", "degree_north",
     "LATITUDE, SOUTH IS NEGATIVE"},
    {"XLONG_U", TSR_FLOAT, "Time south_north west_east_stag", "XY ", "X", "degree_east",
     "LONGITUDE, WEST IS NEGATIVE"},
    {"XLAT_V", TSR_FLOAT, "Time south_north_stag west_east", "XY ", "Y", "degree_north",
     "LATITUDE, SOUTH IS NEGATIVE"},
    {"XLONG_V", TSR_FLOAT, "Time south_north_stag west_east", "XY ", "Y", "degree_east",
     "LONGITUDE, WEST IS NEGATIVE"},
    {"ZNU", TSR_FLOAT, "Time bottom_top", "Z  ", "", "", "eta values on half (mass) levels"},
    {"ZNW", TSR_FLOAT, "Time bottom_top_stag", "Z  ", "Z", "", "eta values on full (w) levels"},
    /* units and description get the start date (bench_schema_run_atts) */
    {"XTIME", TSR_FLOAT, "Time", "0  ", "", "minutes since simulation start",
     "minutes since simulation start"},
    {"ITIMESTEP", TSR_INT, "Time", "0  ", "", "", ""},
    {"U", TSR_FLOAT, "Time bottom_top south_north west_east_stag", "XYZ", "X", "m s-1",
     "x-wind component"},
    {"V", TSR_FLOAT, "Time bottom_top south_north_stag west_east", "XYZ", "Y", "m s-1",
     "y-wind component"},
    {"W", TSR_FLOAT, "Time bottom_top_stag south_north west_east", "XYZ", "Z", "m s-1",
     "z-wind component"},
    {"PH", TSR_FLOAT, "Time bottom_top_stag south_north west_east", "XYZ", "Z", "m2 s-2",
     "perturbation geopotential"},
    {"PHB", TSR_FLOAT, "Time bottom_top_stag south_north west_east", "XYZ", "Z", "m2 s-2",
     "base-state geopotential"},
    {"T", TSR_FLOAT, "Time bottom_top south_north west_east", "XYZ", "", "K",
     "perturbation potential temperature theta-t0"},
    {"P", TSR_FLOAT, "Time bottom_top south_north west_east", "XYZ", "", "Pa",
     "perturbation pressure"},
    {"PB", TSR_FLOAT, "Time bottom_top south_north west_east", "XYZ", "", "Pa",
     "BASE STATE PRESSURE"},
    {"QVAPOR", TSR_FLOAT, "Time bottom_top south_north west_east", "XYZ", "", "kg kg-1",
     "Water vapor mixing ratio"},
    {"TSLB", TSR_FLOAT, "Time soil_layers_stag south_north west_east", "XYZ", "Z", "K",
     "SOIL TEMPERATURE"},
    {"MU", TSR_FLOAT, "Time south_north west_east", "XY ", "", "Pa",
     "perturbation dry air mass in column"},
    {"PSFC", TSR_FLOAT, "Time south_north west_east", "XY ", "", "Pa", "SFC PRESSURE"},
    {"T2", TSR_FLOAT, "Time south_north west_east", "XY ", "", "K", "TEMP at 2 M"},
    {"Q2", TSR_FLOAT, "Time south_north west_east", "XY ", "", "kg kg-1", "QV at 2 M"},
    {"U10", TSR_FLOAT, "Time south_north west_east", "XY ", "", "m s-1", "U at 10 M"},
    {"V10", TSR_FLOAT, "Time south_north west_east", "XY ", "", "m s-1", "V at 10 M"},
    {"TSK", TSR_FLOAT, "Time south_north west_east", "XY ", "", "K", "SURFACE SKIN TEMPERATURE"},
    {"HGT", TSR_FLOAT, "Time south_north west_east", "XY ", "", "m", "Terrain Height"},
    {"RAINC", TSR_FLOAT, "Time south_north west_east", "XY ", "", "mm",
     "ACCUMULATED TOTAL CUMULUS PRECIPITATION"},
    {"RAINNC", TSR_FLOAT, "Time south_north west_east", "XY ", "", "mm",
     "ACCUMULATED TOTAL GRID SCALE PRECIPITATION"},
    {"SWDOWN", TSR_FLOAT, "Time south_north west_east", "XY ", "", "W m-2",
     "DOWNWARD SHORT WAVE FLUX AT GROUND SURFACE"},
    {"HFX", TSR_FLOAT, "Time south_north west_east", "XY ", "", "W m-2",
     "UPWARD HEAT FLUX AT THE SURFACE"},
    {"LH", TSR_FLOAT, "Time south_north west_east", "XY ", "", "W m-2",
     "LATENT HEAT FLUX AT THE SURFACE"},
    {"PBLH", TSR_FLOAT, "Time south_north west_east", "XY ", "", "m", "PBL HEIGHT"},
    {"IVGTYP", TSR_INT, "Time south_north west_east", "XY ", "", "",
     "DOMINANT VEGETATION CATEGORY"},
};

static int add_field(bench_schema *s, const field_def *f) {
  char buf[256];
  const char *names[TSR_MAX_DIMS];
  snprintf(buf, sizeof buf, "%s", f->dims);
  int n = 0;
  for (char *tok = strtok(buf, " "); tok && n < TSR_MAX_DIMS; tok = strtok(NULL, " "))
    names[n++] = tok;
  int v = bench_schema_add_var(s, f->name, f->type, n, names);
  if (v < 0) return -1;
  if (!f->order) return 0;
  bench_att_list *a = &s->vars[v].atts;
  int rc = 0;
  rc |= bench_att_int(a, "FieldType", f->type == TSR_INT ? 106 : 104);
  rc |= bench_att_text(a, "MemoryOrder", f->order);
  rc |= bench_att_text(a, "description", f->description);
  rc |= bench_att_text(a, "units", f->units);
  rc |= bench_att_text(a, "stagger", f->stagger);
  if (strchr(f->order, 'X')) {
    const char *coord = strcmp(f->name, "U") == 0   ? "XLONG_U XLAT_U XTIME"
                        : strcmp(f->name, "V") == 0 ? "XLONG_V XLAT_V XTIME"
                        : strcmp(f->name, "XLAT") == 0 || strcmp(f->name, "XLONG") == 0
                            ? "XLONG XLAT"
                        : strcmp(f->name, "XLAT_U") == 0 || strcmp(f->name, "XLONG_U") == 0
                            ? "XLONG_U XLAT_U"
                        : strcmp(f->name, "XLAT_V") == 0 || strcmp(f->name, "XLONG_V") == 0
                            ? "XLONG_V XLAT_V"
                            : "XLONG XLAT XTIME";
    rc |= bench_att_text(a, "coordinates", coord);
  }
  return rc ? -1 : 0;
}

int bench_schema_default(bench_schema *s, char *err, size_t errlen) {
  static const struct {
    const char *name;
    int64_t len;
  } dims[] = {{"Time", TSR_UNLIMITED},  {"DateStrLen", BENCH_DATE_LEN},
              {"west_east", 1},         {"south_north", 1},
              {"bottom_top", 1},        {"bottom_top_stag", 2},
              {"soil_layers_stag", 4},  {"west_east_stag", 2},
              {"south_north_stag", 2}};
  bench_schema_init(s);
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (bench_schema_add_dim(s, dims[i].name, dims[i].len) < 0) goto fail;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (add_field(s, &fields[i]) != 0) goto fail;
  bench_att_list *g = &s->gatts;
  int rc = 0;
  rc |= bench_att_text(g, "TITLE", " OUTPUT FROM TESSERA-BENCH (WRF-LIKE MODEL)");
  rc |= bench_att_float(g, "DX", 3000.0f);
  rc |= bench_att_float(g, "DY", 3000.0f);
  rc |= bench_att_text(g, "GRIDTYPE", "C");
  rc |= bench_att_int(g, "GRID_ID", 1);
  rc |= bench_att_int(g, "PARENT_ID", 0);
  rc |= bench_att_int(g, "MAP_PROJ", 1);
  rc |= bench_att_text(g, "MAP_PROJ_CHAR", "Lambert Conformal");
  rc |= bench_att_float(g, "CEN_LAT", 40.0f);
  rc |= bench_att_float(g, "CEN_LON", -98.0f);
  rc |= bench_att_float(g, "TRUELAT1", 30.0f);
  rc |= bench_att_float(g, "TRUELAT2", 60.0f);
  rc |= bench_att_float(g, "MOAD_CEN_LAT", 40.0f);
  rc |= bench_att_float(g, "STAND_LON", -98.0f);
  rc |= bench_att_float(g, "POLE_LAT", 90.0f);
  rc |= bench_att_float(g, "POLE_LON", 0.0f);
  rc |= bench_att_text(g, "SIMULATION_INITIALIZATION_TYPE", "REAL-DATA CASE");
  static const char *const patch[] = {"WEST-EAST_PATCH_START_UNSTAG", "WEST-EAST_PATCH_END_UNSTAG",
                                      "WEST-EAST_PATCH_START_STAG", "WEST-EAST_PATCH_END_STAG",
                                      "SOUTH-NORTH_PATCH_START_UNSTAG",
                                      "SOUTH-NORTH_PATCH_END_UNSTAG",
                                      "SOUTH-NORTH_PATCH_START_STAG", "SOUTH-NORTH_PATCH_END_STAG",
                                      "BOTTOM-TOP_PATCH_START_UNSTAG", "BOTTOM-TOP_PATCH_END_UNSTAG",
                                      "BOTTOM-TOP_PATCH_START_STAG", "BOTTOM-TOP_PATCH_END_STAG",
                                      "NTASKS_X", "NTASKS_Y", "NTASKS_TOTAL"};
  for (size_t i = 0; i < sizeof patch / sizeof patch[0]; i++) rc |= bench_att_int(g, patch[i], 1);
  if (rc == 0) return 0;
fail:
  snprintf(err, errlen, "cannot build the default schema (out of memory)");
  bench_schema_free(s);
  return -1;
}
