/* The bench's in-memory schema: dimensions, variables, attributes; resizing
 * of WRF's horizontal and vertical dimensions; the run's global attributes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_schema_init(bench_schema *s) { memset(s, 0, sizeof *s); }

static void att_list_free(bench_att_list *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i].values);
  free(l->v);
  memset(l, 0, sizeof *l);
}

void bench_schema_free(bench_schema *s) {
  for (int i = 0; i < s->nvars; i++) att_list_free(&s->vars[i].atts);
  att_list_free(&s->gatts);
  free(s->vars);
  free(s->dims);
  memset(s, 0, sizeof *s);
}

const char *bench_type_name(tsr_type t) {
  switch (t) {
  case TSR_CHAR: return "char";
  case TSR_INT: return "int";
  case TSR_FLOAT: return "float";
  case TSR_DOUBLE: return "double";
  default: return "?"; /* the bench's CDL schemas use the four types above */
  }
}

bench_dim_kind bench_dim_kind_of(const char *name) {
  static const struct {
    const char *name;
    bench_dim_kind kind;
  } map[] = {{"west_east", BD_X},         {"west_east_stag", BD_X_STAG},
             {"south_north", BD_Y},       {"south_north_stag", BD_Y_STAG},
             {"bottom_top", BD_Z},        {"bottom_top_stag", BD_Z_STAG}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(name, map[i].name) == 0) return map[i].kind;
  return BD_OTHER;
}

int bench_schema_find_dim(const bench_schema *s, const char *name) {
  for (int i = 0; i < s->ndims; i++)
    if (strcmp(s->dims[i].name, name) == 0) return i;
  return -1;
}

int bench_schema_add_dim(bench_schema *s, const char *name, int64_t len) {
  if (strlen(name) >= TSR_MAX_NAME || bench_schema_find_dim(s, name) >= 0) return -1;
  if (s->ndims == s->dcap) {
    int cap = s->dcap ? 2 * s->dcap : 16;
    bench_dim *d = realloc(s->dims, (size_t)cap * sizeof *d);
    if (!d) return -1;
    s->dims = d;
    s->dcap = cap;
  }
  bench_dim *d = &s->dims[s->ndims];
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s", name);
  d->len = len;
  d->kind = bench_dim_kind_of(name);
  return s->ndims++;
}

int bench_schema_add_var(bench_schema *s, const char *name, tsr_type type, int ndims,
                         const char *const dimnames[]) {
  if (ndims < 0 || ndims > TSR_MAX_DIMS || strlen(name) >= TSR_MAX_NAME) return -1;
  if (s->nvars == s->vcap) {
    int cap = s->vcap ? 2 * s->vcap : 64;
    bench_var *v = realloc(s->vars, (size_t)cap * sizeof *v);
    if (!v) return -1;
    s->vars = v;
    s->vcap = cap;
  }
  bench_var *v = &s->vars[s->nvars];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", name);
  v->type = type;
  v->ndims = ndims;
  for (int i = 0; i < ndims; i++) {
    v->dimids[i] = bench_schema_find_dim(s, dimnames[i]);
    if (v->dimids[i] < 0) return -1;
  }
  return s->nvars++;
}

const bench_att *bench_att_find(const bench_att_list *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->v[i].name, name) == 0) return &l->v[i];
  return NULL;
}

int bench_att_put(bench_att_list *l, const char *name, tsr_type type, size_t n, const void *v) {
  size_t bytes = n * tsr_type_size(type);
  void *copy = malloc(bytes ? bytes : 1);
  if (!copy || strlen(name) >= TSR_MAX_NAME) {
    free(copy);
    return -1;
  }
  if (bytes) memcpy(copy, v, bytes);
  bench_att *a = (bench_att *)bench_att_find(l, name);
  if (!a) {
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 8;
      bench_att *nv = realloc(l->v, (size_t)cap * sizeof *nv);
      if (!nv) {
        free(copy);
        return -1;
      }
      l->v = nv;
      l->cap = cap;
    }
    a = &l->v[l->n++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->values = NULL;
  }
  free(a->values);
  a->type = type;
  a->len = n;
  a->values = copy;
  return 0;
}

int bench_att_text(bench_att_list *l, const char *name, const char *text) {
  return bench_att_put(l, name, TSR_CHAR, strlen(text), text);
}

int bench_att_int(bench_att_list *l, const char *name, int value) {
  return bench_att_put(l, name, TSR_INT, 1, &value);
}

int bench_att_float(bench_att_list *l, const char *name, float value) {
  return bench_att_put(l, name, TSR_FLOAT, 1, &value);
}

int bench_var_is_record(const bench_schema *s, const bench_var *v) {
  return v->ndims > 0 && s->dims[v->dimids[0]].len == TSR_UNLIMITED;
}

int bench_var_is_decomposed(const bench_schema *s, const bench_var *v) {
  for (int i = 0; i < v->ndims; i++) {
    bench_dim_kind k = s->dims[v->dimids[i]].kind;
    if (k == BD_X || k == BD_X_STAG || k == BD_Y || k == BD_Y_STAG) return 1;
  }
  return 0;
}

int bench_schema_resize(bench_schema *s, int nx, int ny, int nz, char *err, size_t errlen) {
  int nrec = 0;
  for (int i = 0; i < s->ndims; i++) {
    bench_dim *d = &s->dims[i];
    switch (d->kind) {
    case BD_X: d->len = nx; break;
    case BD_X_STAG: d->len = nx + 1; break;
    case BD_Y: d->len = ny; break;
    case BD_Y_STAG: d->len = ny + 1; break;
    case BD_Z: d->len = nz; break;
    case BD_Z_STAG: d->len = nz + 1; break;
    case BD_OTHER:
      /* WRF's Times are "2026-01-01_00:00:00", 19 characters; some headers
       * (the PnetCDF benchmark's among them) say 20, and then wrf-python
       * cannot parse the times. */
      if (strcmp(d->name, "DateStrLen") == 0) d->len = BENCH_DATE_LEN;
      break;
    }
    if (d->len == TSR_UNLIMITED) nrec++;
  }
  if (nrec > 1) {
    snprintf(err, errlen, "schema has %d unlimited dimensions; Tessera files have one", nrec);
    return -1;
  }
  for (int v = 0; v < s->nvars; v++) {
    const bench_var *var = &s->vars[v];
    int nx_dims = 0, ny_dims = 0;
    for (int i = 0; i < var->ndims; i++) {
      const bench_dim *d = &s->dims[var->dimids[i]];
      if (i > 0 && d->len == TSR_UNLIMITED) {
        snprintf(err, errlen, "variable %s: the record dimension %s must come first", var->name,
                 d->name);
        return -1;
      }
      nx_dims += d->kind == BD_X || d->kind == BD_X_STAG;
      ny_dims += d->kind == BD_Y || d->kind == BD_Y_STAG;
    }
    if (nx_dims > 1 || ny_dims > 1) {
      snprintf(err, errlen, "variable %s has two dimensions along the same horizontal axis",
               var->name);
      return -1;
    }
    if ((nx_dims || ny_dims) && var->type == TSR_CHAR) {
      snprintf(err, errlen, "variable %s: decomposed char variables are not supported",
               var->name);
      return -1;
    }
  }
  return 0;
}

/* Set an int attribute only where the schema has it (or always when add). */
static int set_int(bench_att_list *l, const char *name, int value, int add) {
  if (!add && !bench_att_find(l, name)) return 0;
  return bench_att_int(l, name, value);
}

static int set_text(bench_att_list *l, const char *name, const char *text, int add) {
  if (!add && !bench_att_find(l, name)) return 0;
  return bench_att_text(l, name, text);
}

/* "2026-01-01_00:00:00" -> "2026-01-01 00:00:00", the form of WRF's XTIME units. */
static void units_date(const char *date, char out[BENCH_DATE_LEN + 1]) {
  snprintf(out, BENCH_DATE_LEN + 1, "%s", date);
  if (strlen(out) > 10) out[10] = ' ';
}

int bench_schema_run_atts(bench_schema *s, const bench_config *c, int px, int py) {
  bench_att_list *g = &s->gatts;
  /* The default fields get WRF's run attributes; a replayed schema keeps its
   * own set, with the ones it has updated to this run. The bench's dates
   * are those of the simulation (a resumed run keeps them, so that its
   * history files are byte-identical to an uninterrupted run's). */
  int add = c->schema[0] == '\0';
  int rc = 0;
  rc |= set_text(g, "START_DATE", c->start_date, add);
  rc |= set_text(g, "SIMULATION_START_DATE", c->start_date, add);
  rc |= set_int(g, "GRID_ID", c->domain, 0);
  rc |= set_int(g, "WEST-EAST_GRID_DIMENSION", c->nx + 1, add);
  rc |= set_int(g, "SOUTH-NORTH_GRID_DIMENSION", c->ny + 1, add);
  rc |= set_int(g, "BOTTOM-TOP_GRID_DIMENSION", c->nz + 1, add);
  if (add || bench_att_find(g, "DT")) rc |= bench_att_float(g, "DT", (float)c->dt);
  if (add || bench_att_find(g, "DX")) rc |= bench_att_float(g, "DX", (float)c->dx);
  if (add || bench_att_find(g, "DY")) rc |= bench_att_float(g, "DY", (float)c->dy);
  rc |= set_int(g, "WEST-EAST_PATCH_END_UNSTAG", c->nx, 0);
  rc |= set_int(g, "WEST-EAST_PATCH_END_STAG", c->nx + 1, 0);
  rc |= set_int(g, "SOUTH-NORTH_PATCH_END_UNSTAG", c->ny, 0);
  rc |= set_int(g, "SOUTH-NORTH_PATCH_END_STAG", c->ny + 1, 0);
  rc |= set_int(g, "BOTTOM-TOP_PATCH_END_UNSTAG", c->nz, 0);
  rc |= set_int(g, "BOTTOM-TOP_PATCH_END_STAG", c->nz + 1, 0);
  rc |= set_int(g, "NTASKS_X", px, 0);
  rc |= set_int(g, "NTASKS_Y", py, 0);
  rc |= set_int(g, "NTASKS_TOTAL", px * py, 0);
  int year, jday;
  if (bench_date_julian(c->start_date, &year, &jday) == 0) {
    rc |= set_int(g, "JULYR", year, add);
    rc |= set_int(g, "JULDAY", jday, add);
  }
  /* XTIME counts minutes from the simulation start: its units say so, so
   * that xarray and CDO put the files at the right dates. */
  int xt = -1;
  for (int v = 0; v < s->nvars; v++)
    if (strcmp(s->vars[v].name, "XTIME") == 0) xt = v;
  if (xt >= 0) {
    char d[BENCH_DATE_LEN + 1], units[64];
    units_date(c->start_date, d);
    snprintf(units, sizeof units, "minutes since %s", d);
    rc |= bench_att_text(&s->vars[xt].atts, "units", units);
    rc |= bench_att_text(&s->vars[xt].atts, "description", units);
  }
  return rc ? -1 : 0;
}
