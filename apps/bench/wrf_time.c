/* WRF date strings ("2026-01-01_00:00:00") and proleptic Gregorian
 * calendar arithmetic, without the C library's time zone machinery. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static int parse(const char *s, int *y, int *mo, int *d, int *h, int *mi, int *se) {
  if (!s || strlen(s) != BENCH_DATE_LEN) return -1;
  char tail;
  if (sscanf(s, "%4d-%2d-%2d_%2d:%2d:%2d%c", y, mo, d, h, mi, se, &tail) != 6) return -1;
  if (s[4] != '-' || s[7] != '-' || s[10] != '_' || s[13] != ':' || s[16] != ':') return -1;
  if (*mo < 1 || *mo > 12 || *d < 1 || *h < 0 || *h > 23 || *mi < 0 || *mi > 59 || *se < 0 ||
      *se > 59)
    return -1;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (*d > mdays[*mo - 1]) return -1;
  int leap = (*y % 4 == 0 && *y % 100 != 0) || *y % 400 == 0;
  if (*mo == 2 && *d == 29 && !leap) return -1;
  return 0;
}

int bench_date_valid(const char *date) {
  int y, mo, d, h, mi, se;
  return parse(date, &y, &mo, &d, &h, &mi, &se) == 0;
}

int bench_date_add(const char *start, int64_t seconds, char out[BENCH_DATE_LEN + 1]) {
  int y, mo, d, h, mi, se;
  if (parse(start, &y, &mo, &d, &h, &mi, &se) != 0) return -1;
  int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se + seconds;
  int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
  int64_t rem = t - days * 86400;
  int64_t yy;
  int mm, dd;
  civil_from_days(days, &yy, &mm, &dd);
  if (yy < 0 || yy > 9999) return -1;
  char buf[64];
  snprintf(buf, sizeof buf, "%04d-%02d-%02d_%02d:%02d:%02d", (int)yy, mm, dd, (int)(rem / 3600),
           (int)(rem / 60 % 60), (int)(rem % 60));
  memcpy(out, buf, BENCH_DATE_LEN);
  out[BENCH_DATE_LEN] = '\0';
  return 0;
}

int bench_date_julian(const char *date, int *year, int *jday) {
  int y, mo, d, h, mi, se;
  if (parse(date, &y, &mo, &d, &h, &mi, &se) != 0) return -1;
  *year = y;
  *jday = (int)(days_from_civil(y, mo, d) - days_from_civil(y, 1, 1) + 1);
  return 0;
}

int bench_date_diff(const char *a, const char *b, int64_t *seconds) {
  int y, mo, d, h, mi, se, y2, mo2, d2, h2, mi2, se2;
  if (parse(a, &y, &mo, &d, &h, &mi, &se) != 0 || parse(b, &y2, &mo2, &d2, &h2, &mi2, &se2) != 0)
    return -1;
  int64_t ta = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  int64_t tb = days_from_civil(y2, mo2, d2) * 86400 + h2 * 3600 + mi2 * 60 + se2;
  *seconds = tb - ta;
  return 0;
}

int64_t bench_alarm_count(int64_t step, double dt, double interval_s) {
  /* A step that lands on a multiple within rounding counts as reaching it. */
  double eps = 1e-9 * interval_s;
  return (int64_t)floor(((double)step * dt + eps) / interval_s);
}

int bench_alarm_rings(int64_t step, double dt, double interval_s) {
  if (step <= 0) return step == 0;
  return bench_alarm_count(step, dt, interval_s) > bench_alarm_count(step - 1, dt, interval_s);
}

int bench_every_due(int every, double every_s, double dt, int64_t step) {
  if (every > 0) return step % every == 0;
  return every_s > 0.0 && bench_alarm_rings(step, dt, every_s);
}
