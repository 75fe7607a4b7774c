/* Times of GRIB2 messages: see grib2_time.h. The rule (docs/grib2.md):
 * reference time = simulation start, forecast time = output time - start, in
 * hours when that is whole hours, else minutes, else seconds (GRIB2 code
 * table 4.4: 1, 0, 13), as WRF's post-processor UPP codes forecasts. Without
 * a start date (or an output time before it) the reference is the output
 * time itself with forecast time 0, an analysis. A frame whose time never
 * arrived keeps a placeholder (reference the start or 1970-01-01, forecast
 * time the frame number in hours) and TESSERA_VERBOSE says so. */
#include "backend/grib2_time.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/verbose.h"

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's
 * days_from_civil): exact for every year, WRF's idealised year 0001 included. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, long *y, long *m, long *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (long)(doy - (153 * mp + 2) / 5 + 1);
  *m = (long)(mp < 10 ? mp + 3 : mp - 9);
  *y = (long)(yoe + era * 400 + (*m <= 2));
}

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = 10 * v + (s[i] - '0');
  }
  return *out = v, 1;
}

/* WRF's date "YYYY-MM-DD_hh:mm:ss" (any separators) in seconds since 1970. */
static int parse_date(const char *s, size_t len, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (len < 19 || !digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
      !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
    return 0;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return 0;
  *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  return 1;
}

int tsr__grib_clock_init(tsr__grib_clock *c, const tsr__schema *s, int nwriters) {
  memset(c, 0, sizeof *c);
  c->times_var = c->xtime_var = -1;
  /* SIMULATION_START_DATE survives restarts; START_DATE is the start of this
   * run segment (WRF writes both; the first names the forecast's start). */
  static const char *const names[] = {"SIMULATION_START_DATE", "START_DATE"};
  for (int i = 0; i < 2 && !c->has_start; i++) {
    const tsr__att *a = tsr__att_find(s->gatts, s->ngatts, names[i]);
    if (a && a->type == TSR_CHAR) c->has_start = parse_date(a->values, a->n, &c->start);
  }
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    if (!var->is_record) continue;
    if (strcmp(var->name, "Times") == 0 && var->type == TSR_CHAR) c->times_var = v;
    if (strcmp(var->name, "XTIME") == 0 && var->type != TSR_CHAR &&
        tsr__var_frame_elems(s, v) == 1)
      c->xtime_var = v;
  }
  /* Room for every writer's share, taken now so that share never fails
   * alone on one writer while the others wait in the collective. */
  c->nwriters = nwriters;
  if (nwriters > 1 && !(c->all = malloc(sizeof(int64_t) * 3 * TSR__GRIB_SHARE * (size_t)nwriters)))
    return TSR_ENOMEM;
  return 0;
}

void tsr__grib_clock_free(tsr__grib_clock *c) {
  free(c->valid);
  free(c->known);
  free(c->all);
  c->all = NULL;
  c->valid = NULL;
  c->known = NULL;
  c->nframes = 0;
}

int tsr__grib_clock_wants(const tsr__grib_clock *c, int varid) {
  return varid >= 0 && (varid == c->times_var || (varid == c->xtime_var && c->has_start));
}

/* Learn frame's time @p t from evidence of @p rank (1: XTIME, a float;
 * 2: Times, the date WRF prints, which wins); @p own: this writer saw it
 * itself, and tells the others at the next share. */
static int learn(tsr__grib_clock *c, int64_t frame, int64_t t, int rank, int own) {
  if (frame < 0) return 0;
  if (frame >= c->nframes) {
    int64_t n = c->nframes ? c->nframes : 16;
    while (n <= frame) n *= 2;
    int64_t *v = realloc(c->valid, (size_t)n * sizeof *v);
    if (v) c->valid = v;
    unsigned char *k = v ? realloc(c->known, (size_t)n) : NULL;
    if (!k) return TSR_ENOMEM;
    c->known = k;
    memset(c->known + c->nframes, 0, (size_t)(n - c->nframes));
    c->nframes = n;
  }
  if (c->known[frame] >= rank) return 0;
  c->valid[frame] = t;
  c->known[frame] = (unsigned char)rank;
  if (own) {
    if (c->nrecent == TSR__GRIB_SHARE) {
      memmove(c->recent[0], c->recent[1], sizeof c->recent[0] * (TSR__GRIB_SHARE - 1));
      c->nrecent--;
    }
    c->recent[c->nrecent][0] = frame;
    c->recent[c->nrecent][1] = t;
    c->recent[c->nrecent][2] = rank;
    c->nrecent++;
  }
  return 0;
}

int tsr__grib_clock_block(tsr__grib_clock *c, int varid, int64_t frame, tsr_type type,
                          int64_t first, int64_t n, int64_t frame_elems, const void *src) {
  int64_t t;
  if (varid == c->times_var && first == 0 && n == frame_elems &&
      parse_date(src, (size_t)n, &t))
    return learn(c, frame, t, 2, 1);
  if (varid == c->xtime_var && c->has_start && n == 1) {
    double minutes = type == TSR_FLOAT    ? *(const float *)src
                     : type == TSR_DOUBLE ? *(const double *)src
                     : type == TSR_INT    ? *(const int32_t *)src
                                          : NAN;
    if (isfinite(minutes) && fabs(minutes) < 1e12)
      return learn(c, frame, c->start + (int64_t)llround(minutes * 60.0), 1, 1);
  }
  return 0;
}

int tsr__grib_clock_share(tsr__grib_clock *c, MPI_Comm comm) {
  enum { W = 3 * TSR__GRIB_SHARE };
  int64_t mine[W];
  for (int i = 0; i < TSR__GRIB_SHARE; i++)
    for (int j = 0; j < 3; j++) mine[3 * i + j] = i < c->nrecent ? c->recent[i][j] : -1;
  if (MPI_Allgather(mine, W, MPI_INT64_T, c->all, W, MPI_INT64_T, comm) != MPI_SUCCESS)
    return TSR_EMPI;
  int err = 0;
  for (int r = 0; r < c->nwriters && !err; r++)
    for (int i = 0; i < TSR__GRIB_SHARE && !err; i++) {
      const int64_t *e = c->all + (size_t)r * W + 3 * i;
      if (e[0] >= 0 && e[2] > 0) err = learn(c, e[0], e[1], (int)e[2], 0);
    }
  return err;
}

int tsr__grib_clock_set(tsr__grib_clock *c, codes_handle *h, int64_t frame, const char *path,
                        const char **key) {
  int64_t ref, step = 0;
  long unit = 1; /* hour */
  if (frame >= 0 && frame < c->nframes && c->known[frame]) {
    int64_t valid = c->valid[frame];
    ref = valid;
    if (c->has_start && c->start <= valid) {
      ref = c->start;
      step = valid - c->start;
    }
    if (step % 3600 == 0) step /= 3600;
    else if (step % 60 == 0) step /= 60, unit = 0;
    else unit = 13;
  } else {
    if (!c->warned)
      TSR_LOG("grib2 %s: frame %lld has no output time (no Times or XTIME put before its "
              "fields): its messages carry the placeholder reference %s and the frame number "
              "as forecast hours", path, (long long)frame,
              c->has_start ? "SIMULATION_START_DATE" : "1970-01-01 00:00");
    c->warned = 1;
    ref = c->has_start ? c->start : 0;
    step = frame;
  }
  int64_t day = ref >= 0 ? ref / 86400 : -((-ref + 86399) / 86400), sec = ref - day * 86400;
  long y, mo, d;
  civil_from_days(day, &y, &mo, &d);
  const struct {
    const char *k;
    long v;
  } keys[] = {{"significanceOfReferenceTime", 1}, /* start of forecast */
              {"year", y},
              {"month", mo},
              {"day", d},
              {"hour", (long)(sec / 3600)},
              {"minute", (long)(sec / 60 % 60)},
              {"second", (long)(sec % 60)},
              {"indicatorOfUnitOfTimeRange", unit},
              {"forecastTime", (long)step}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    int e = codes_set_long(h, keys[i].k, keys[i].v);
    if (e) return *key = keys[i].k, e;
  }
  return 0;
}
