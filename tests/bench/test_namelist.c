/* The bench's WRF namelist reader against valid and malformed files.
 * usage: test_namelist DIR (tests/bench/namelists) */
#include <stdio.h>
#include <string.h>

#include "namelist.h"

static int failures = 0, checks = 0;

#define EXPECT_INT(what, got, want)                                                         \
  do {                                                                                      \
    long g_ = (long)(got), w_ = (long)(want);                                               \
    checks++;                                                                               \
    if (g_ != w_) {                                                                         \
      failures++;                                                                           \
      fprintf(stderr, "FAIL %s:%d: %s: %s = %ld, expected %ld\n", __FILE__, __LINE__, what, \
              #got, g_, w_);                                                                \
    }                                                                                       \
  } while (0)

#define EXPECT_STR(what, got, want)                                                         \
  do {                                                                                      \
    checks++;                                                                               \
    if (strcmp((got), (want)) != 0) {                                                       \
      failures++;                                                                           \
      fprintf(stderr, "FAIL %s:%d: %s: got \"%s\", expected \"%s\"\n", __FILE__, __LINE__,  \
              what, (got), (want));                                                         \
    }                                                                                       \
  } while (0)

static const char *dir;

static int read_nl(const char *file, bench_namelist *nl, char *err, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  err[0] = '\0';
  return bench_namelist_read(path, nl, err, n);
}

/* The message must be "DIR/FILE:LINE: TEXT..." */
static void expect_error(const char *file, int line, const char *text) {
  bench_namelist nl;
  char err[1024], want[1200];
  int rc = read_nl(file, &nl, err, sizeof err);
  if (rc == 0) {
    char hints[256];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    rc = bench_namelist_hints(&nl, path, hints, sizeof hints, err, sizeof err);
  }
  EXPECT_INT(file, rc, -1);
  if (line > 0)
    snprintf(want, sizeof want, "%s/%s:%d: %s", dir, file, line, text);
  else
    snprintf(want, sizeof want, "%s/%s: %s", dir, file, text);
  checks++;
  if (strncmp(err, want, strlen(want)) != 0) {
    failures++;
    fprintf(stderr, "FAIL %s: message \"%s\"\n      does not start with \"%s\"\n", file, err,
            want);
  }
}

static void test_valid(void) {
  bench_namelist nl;
  char err[1024], hints[256];
  EXPECT_INT("wrf_valid", read_nl("wrf_valid.input", &nl, err, sizeof err), 0);
  if (err[0]) fprintf(stderr, "  %s\n", err);
  EXPECT_INT("run_hours", nl.run_hours.value, 1);
  EXPECT_INT("run_minutes", nl.run_minutes.value, 30);
  EXPECT_INT("run_days", nl.run_days.value, 0);
  EXPECT_INT("run_days present", nl.run_days.line, 2);
  EXPECT_INT("start_year (first domain)", nl.start_year.value, 2026);
  EXPECT_INT("start_month", nl.start_month.value, 3);
  EXPECT_INT("start_minute absent", nl.start_minute.line, 0);
  EXPECT_INT("history_interval (domain 1)", nl.history_interval.value, 15);
  EXPECT_INT("history_interval line", nl.history_interval.line, 11);
  EXPECT_INT("frames_per_outfile", nl.frames_per_outfile.value, 2);
  EXPECT_INT("io_form_history without comma", nl.io_form_history.value, 11);
  EXPECT_INT("io_form_history line", nl.io_form_history.line, 15);
  EXPECT_INT("e_we", nl.e_we.value, 101);
  EXPECT_INT("e_sn", nl.e_sn.value, 81);
  EXPECT_INT("e_vert", nl.e_vert.value, 31);
  EXPECT_INT("time_step", nl.time_step.value, 60);
  EXPECT_INT("nproc_x", nl.nproc_x.value, 2);
  EXPECT_INT("nproc_y", nl.nproc_y.value, -1);
  EXPECT_INT("nio_tasks_per_group", nl.nio_tasks_per_group.value, 0);
  EXPECT_INT("nio_groups", nl.nio_groups.value, 1);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "wrf_valid", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("io_form 11", hints, "strategy=direct");

  EXPECT_INT("wrf_quilt", read_nl("wrf_quilt.input", &nl, err, sizeof err), 0);
  EXPECT_INT("several entries on one line", nl.history_interval.value, 60);
  EXPECT_INT("e_vert", nl.e_vert.value, 11);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "wrf_quilt", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("quilting", hints, "strategy=servers:io_groups=2:io_tasks=1:backend=netcdf");
}

/* WRF's own test/em_real/namelist.input, as shipped. */
static void test_em_real(void) {
  bench_namelist nl;
  char err[1024], hints[256];
  int rc = read_nl("wrf_em_real.input", &nl, err, sizeof err);
  EXPECT_INT("wrf_em_real", rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  EXPECT_INT("run_seconds", nl.run_seconds.value, 540);
  EXPECT_INT("start_year", nl.start_year.value, 2006);
  EXPECT_INT("end_day", nl.end_day.value, 20);
  EXPECT_INT("history_interval", nl.history_interval.value, 9);
  EXPECT_INT("max_dom", nl.max_dom.value, 2);
  EXPECT_INT("e_we (domain 1 of 3 columns)", nl.e_we.value, 75);
  EXPECT_INT("e_vert", nl.e_vert.value, 35);
  EXPECT_INT("dx", (long)nl.dx.real, 30000);
  EXPECT_INT("time_step", nl.time_step.value, 180);
  EXPECT_INT("time_step_fract_den", nl.time_step_fract_den.value, 1);
  EXPECT_INT("restart", nl.restart.value, 0);
  EXPECT_INT("restart line", nl.restart.line, 22);
  EXPECT_INT("restart_interval", nl.restart_interval.value, 720);
  EXPECT_INT("nio_tasks_per_group", nl.nio_tasks_per_group.value, 0);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "em", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("io_form 2", hints, "strategy=serial");

  /* A quilting case in the same style: end date instead of run_*, seconds
   * history interval, fractional time step, repeat counts, nocolons. */
  rc = read_nl("wrf_quilt_em.input", &nl, err, sizeof err);
  EXPECT_INT("wrf_quilt_em", rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  EXPECT_INT("run_hours 0", nl.run_hours.value, 0);
  EXPECT_INT("end_minute", nl.end_minute.value, 30);
  EXPECT_INT("history_interval_m 2*0", nl.history_interval_m.value, 0);
  EXPECT_INT("history_interval_s", nl.history_interval_s.value, 900);
  EXPECT_INT("time_step_fract_num", nl.time_step_fract_num.value, 1);
  EXPECT_INT("e_vert 2*41", nl.e_vert.value, 41);
  EXPECT_INT("nocolons", nl.nocolons.value, 1);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "q", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("quilt + io_form 11", hints, "strategy=servers:io_groups=1:io_tasks=2:backend=pnetcdf");
}

static void test_text(void) {
  bench_namelist nl;
  char err[512], hints[256];
  /* Old-style $group ... $end, upper case keys, repeat counts, no io_form. */
  EXPECT_INT("dollar groups",
             bench_namelist_parse("$TIME_CONTROL $END\n$DOMAINS\n E_WE = 3*64, E_SN=48 $END\n", "t", &nl,
                                  err, sizeof err), 0);
  EXPECT_INT("repeat count", nl.e_we.value, 64);
  EXPECT_INT("upper case", nl.e_sn.value, 48);
  EXPECT_INT("no io_form", bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("no hints", hints, "");
  static const struct {
    int form;
    const char *hints;
  } forms[] = {{2, "strategy=serial"}, {11, "strategy=direct"}, {12, "strategy=aggregate"},
               {102, "strategy=split"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "&time_control\n io_form_history = %d\n/\n&domains /\n", forms[i].form);
    EXPECT_INT("parse", bench_namelist_parse(text, "t", &nl, err, sizeof err), 0);
    EXPECT_INT("hints", bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
    EXPECT_STR("io_form mapping", hints, forms[i].hints);
  }
  EXPECT_INT("quilt + pnetcdf",
             bench_namelist_parse("&time_control\nio_form_history=11/\n&namelist_quilt\n"
                                  "nio_tasks_per_group=2/\n&domains/\n", "t", &nl, err, sizeof err), 0);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("quilt + pnetcdf", hints, "strategy=servers:io_groups=1:io_tasks=2:backend=pnetcdf");
  EXPECT_INT("empty text", bench_namelist_parse("", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("empty text", err, "t:1: required group '&time_control' is missing");
  /* Values: repeat counts, null values, logicals, reals with Fortran exponents. */
  EXPECT_INT("values", bench_namelist_parse("&time_control nocolons = T, restart = .false. /\n"
                                            "&domains\n dx = 1.5d3, 2*3000., dy = 2*,\n"
                                            " e_we = 2*0, e_sn = +7 /\n", "t", &nl, err, sizeof err), 0);
  EXPECT_INT("logical T", nl.nocolons.value, 1);
  EXPECT_INT("logical .false.", nl.restart.value, 0);
  EXPECT_INT("logical line", nl.restart.line, 1);
  EXPECT_INT("real with d exponent", (long)nl.dx.real, 1500);
  EXPECT_INT("null value leaves the entry absent", nl.dy.line, 0);
  EXPECT_INT("repeat count 2*0", nl.e_we.value, 0);
  EXPECT_INT("signed integer", nl.e_sn.value, 7);
  EXPECT_INT("real where an integer belongs", bench_namelist_parse("&time_control /\n&domains e_we = 101.5 /\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("real where an integer belongs", err, "t:2: 'e_we' needs an integer value, found '101.5'");
  EXPECT_INT("junk glued to a value", bench_namelist_parse("&time_control /\n&domains\n e_we = 101@@ /\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("junk glued to a value", err, "t:3: 'e_we' needs an integer value, found '101@@'");
  EXPECT_INT("junk in a group the bench skips", bench_namelist_parse("&time_control /\n&domains /\n&physics\n mp_physics = 8 %% /\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("junk in a group the bench skips", err, "t:4: 'mp_physics': junk after the value '8': '%%' is not a Fortran constant");
  EXPECT_INT("stream keys", bench_namelist_parse("&time_control auxhist2_interval_m = 10, io_form_auxhist2 = 2,\n"
                                                 " frames_per_auxhist2 = 1, auxinput4_inname = 'x' /\n&domains /\n", "t", &nl, err, sizeof err), 0);
  EXPECT_INT("stream number out of range", bench_namelist_parse("&time_control auxhist25_interval_m = 10 /\n&domains /\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("stream number out of range", err, "t:1: unknown variable 'auxhist25_interval_m' in '&time_control'");
  EXPECT_INT("unknown key, no suggestion", bench_namelist_parse("&time_control\n/\n&namelist_quilt\n frobnicate = 1 /\n&domains /\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("unknown key, no suggestion", err, "t:4: unknown variable 'frobnicate' in '&namelist_quilt'");
  EXPECT_INT("tail ignored", bench_namelist_parse("&time_control /\n&domains /\nLSF_TIME=0:30 'it''s\n& not a group\n", "t", &nl, err, sizeof err), 0);
  EXPECT_INT("missing value", bench_namelist_parse("&domains\n e_we = \n/\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("missing value", err, "t:2: missing value for 'e_we'");
  EXPECT_INT("group in group", bench_namelist_parse("&domains\n&physics\n/\n", "t", &nl, err, sizeof err), -1);
  EXPECT_STR("group in group", err, "t:2: group '&physics' starts before '&domains' (line 1) was closed with '/'");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s NAMELIST_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  test_valid();
  test_em_real();
  test_text();
  expect_error("bad_missing_equals.input", 5, "expected '=' after 'e_we'");
  expect_error("bad_value.input", 4, "'e_sn' needs an integer value, found 'eighty'");
  expect_error("bad_unclosed.input", 5, "group '&domains' is never closed with '/'");
  expect_error("bad_io_form.input", 6, "io_form_history = 5 is not supported");
  expect_error("bad_string.input", 2, "unterminated string");
  expect_error("bad_outside.input", 1, "expected a namelist group such as '&domains', found 'e_we'");
  expect_error("bad_quilt_split.input", 2, "io_form_history = 102 cannot be quilted");
  expect_error("does_not_exist.input", 0, "cannot open: No such file");
  expect_error("bad_misspelt.input", 3,
               "unknown variable 'histroy_interval' in '&time_control' (did you mean 'history_interval'?)");
  expect_error("bad_junk.input", 5, "'e_we': junk after the value '101': '@@' is not an integer");
  expect_error("bad_missing_group.input", 8, "required group '&domains' is missing");
  expect_error("bad_between.input", 4, "expected a namelist group such as '&domains', found 'LSF_TIME'");
  expect_error("bad_logical.input", 3, "'nocolons' needs a logical (.true. or .false.) value, found 'yes'");
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
