/* The bench's WRF namelist reader against valid and malformed files.
 * usage: test_namelist DIR (tests/bench/namelists). Checks and verdict from
 * tsr_test.h (no MPI started); each check names its case first. */
#include <stdio.h>
#include <string.h>

#include "namelist.h"
#include "tsr_test.h"

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
  tsr_test_case("%s", file);
  TSR_CHECK_EQ_INT(rc, -1);
  if (line > 0)
    snprintf(want, sizeof want, "%s/%s:%d: %s", dir, file, line, text);
  else
    snprintf(want, sizeof want, "%s/%s: %s", dir, file, text);
  TSR_CHECKF(strncmp(err, want, strlen(want)) == 0, "message \"%s\"\n      does not start with \"%s\"",
             err, want);
}

static void test_valid(void) {
  bench_namelist nl;
  char err[1024], hints[256];
  tsr_test_case("%s", "wrf_valid");
  TSR_CHECK_EQ_INT(read_nl("wrf_valid.input", &nl, err, sizeof err), 0);
  if (err[0]) fprintf(stderr, "  %s\n", err);
  tsr_test_case("%s", "run_hours");
  TSR_CHECK_EQ_INT(nl.run_hours.value, 1);
  tsr_test_case("%s", "run_minutes");
  TSR_CHECK_EQ_INT(nl.run_minutes.value, 30);
  tsr_test_case("%s", "run_days");
  TSR_CHECK_EQ_INT(nl.run_days.value, 0);
  tsr_test_case("%s", "run_days present");
  TSR_CHECK_EQ_INT(nl.run_days.line, 2);
  tsr_test_case("%s", "start_year (first domain)");
  TSR_CHECK_EQ_INT(nl.start_year.value, 2026);
  tsr_test_case("%s", "start_month");
  TSR_CHECK_EQ_INT(nl.start_month.value, 3);
  tsr_test_case("%s", "start_minute absent");
  TSR_CHECK_EQ_INT(nl.start_minute.line, 0);
  tsr_test_case("%s", "history_interval (domain 1)");
  TSR_CHECK_EQ_INT(nl.history_interval.value, 15);
  tsr_test_case("%s", "history_interval line");
  TSR_CHECK_EQ_INT(nl.history_interval.line, 11);
  tsr_test_case("%s", "frames_per_outfile");
  TSR_CHECK_EQ_INT(nl.frames_per_outfile.value, 2);
  tsr_test_case("%s", "io_form_history without comma");
  TSR_CHECK_EQ_INT(nl.io_form_history.value, 11);
  tsr_test_case("%s", "io_form_history line");
  TSR_CHECK_EQ_INT(nl.io_form_history.line, 15);
  tsr_test_case("%s", "e_we");
  TSR_CHECK_EQ_INT(nl.e_we.value, 101);
  tsr_test_case("%s", "e_sn");
  TSR_CHECK_EQ_INT(nl.e_sn.value, 81);
  tsr_test_case("%s", "e_vert");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 31);
  tsr_test_case("%s", "time_step");
  TSR_CHECK_EQ_INT(nl.time_step.value, 60);
  tsr_test_case("%s", "nproc_x");
  TSR_CHECK_EQ_INT(nl.nproc_x.value, 2);
  tsr_test_case("%s", "nproc_y");
  TSR_CHECK_EQ_INT(nl.nproc_y.value, -1);
  tsr_test_case("%s", "nio_tasks_per_group");
  TSR_CHECK_EQ_INT(nl.nio_tasks_per_group.value, 0);
  tsr_test_case("%s", "nio_groups");
  TSR_CHECK_EQ_INT(nl.nio_groups.value, 1);
  tsr_test_case("%s", "hints");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "wrf_valid", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "io_form 11");
  TSR_CHECK_EQ_STR(hints, "strategy=direct");

  tsr_test_case("%s", "wrf_quilt");
  TSR_CHECK_EQ_INT(read_nl("wrf_quilt.input", &nl, err, sizeof err), 0);
  tsr_test_case("%s", "several entries on one line");
  TSR_CHECK_EQ_INT(nl.history_interval.value, 60);
  tsr_test_case("%s", "e_vert");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 11);
  tsr_test_case("%s", "hints");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "wrf_quilt", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "quilting");
  TSR_CHECK_EQ_STR(hints, "strategy=servers:io_groups=2:io_tasks=1:backend=netcdf");
}

/* WRF's own test/em_real/namelist.input, as shipped. */
static void test_em_real(void) {
  bench_namelist nl;
  char err[1024], hints[256];
  int rc = read_nl("wrf_em_real.input", &nl, err, sizeof err);
  tsr_test_case("%s", "wrf_em_real");
  TSR_CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  tsr_test_case("%s", "run_seconds");
  TSR_CHECK_EQ_INT(nl.run_seconds.value, 540);
  tsr_test_case("%s", "start_year");
  TSR_CHECK_EQ_INT(nl.start_year.value, 2006);
  tsr_test_case("%s", "end_day");
  TSR_CHECK_EQ_INT(nl.end_day.value, 20);
  tsr_test_case("%s", "history_interval");
  TSR_CHECK_EQ_INT(nl.history_interval.value, 9);
  tsr_test_case("%s", "max_dom");
  TSR_CHECK_EQ_INT(nl.max_dom.value, 2);
  tsr_test_case("%s", "e_we (domain 1 of 3 columns)");
  TSR_CHECK_EQ_INT(nl.e_we.value, 75);
  tsr_test_case("%s", "e_vert");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 35);
  tsr_test_case("%s", "dx");
  TSR_CHECK_EQ_INT((long)nl.dx.real, 30000);
  tsr_test_case("%s", "time_step");
  TSR_CHECK_EQ_INT(nl.time_step.value, 180);
  tsr_test_case("%s", "time_step_fract_den");
  TSR_CHECK_EQ_INT(nl.time_step_fract_den.value, 1);
  tsr_test_case("%s", "restart");
  TSR_CHECK_EQ_INT(nl.restart.value, 0);
  tsr_test_case("%s", "restart line");
  TSR_CHECK_EQ_INT(nl.restart.line, 22);
  tsr_test_case("%s", "restart_interval");
  TSR_CHECK_EQ_INT(nl.restart_interval.value, 720);
  tsr_test_case("%s", "nio_tasks_per_group");
  TSR_CHECK_EQ_INT(nl.nio_tasks_per_group.value, 0);
  tsr_test_case("%s", "hints");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "em", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "io_form 2");
  TSR_CHECK_EQ_STR(hints, "strategy=serial");

  /* A quilting case in the same style: end date instead of run_*, seconds
   * history interval, fractional time step, repeat counts, nocolons. */
  rc = read_nl("wrf_quilt_em.input", &nl, err, sizeof err);
  tsr_test_case("%s", "wrf_quilt_em");
  TSR_CHECK_EQ_INT(rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  tsr_test_case("%s", "run_hours 0");
  TSR_CHECK_EQ_INT(nl.run_hours.value, 0);
  tsr_test_case("%s", "end_minute");
  TSR_CHECK_EQ_INT(nl.end_minute.value, 30);
  tsr_test_case("%s", "history_interval_m 2*0");
  TSR_CHECK_EQ_INT(nl.history_interval_m.value, 0);
  tsr_test_case("%s", "history_interval_s");
  TSR_CHECK_EQ_INT(nl.history_interval_s.value, 900);
  tsr_test_case("%s", "time_step_fract_num");
  TSR_CHECK_EQ_INT(nl.time_step_fract_num.value, 1);
  tsr_test_case("%s", "e_vert 2*41");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 41);
  tsr_test_case("%s", "nocolons");
  TSR_CHECK_EQ_INT(nl.nocolons.value, 1);
  tsr_test_case("%s", "hints");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "q", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "quilt + io_form 11");
  TSR_CHECK_EQ_STR(hints, "strategy=servers:io_groups=1:io_tasks=2:backend=pnetcdf");
}

/* The per-domain columns: bench_namelist_pick_domain makes domain N's the
 * value, repeat counts fill columns, single entries keep their one value,
 * and a list that stops before the domain leaves the entry absent. */
static void test_domains(void) {
  bench_namelist nl;
  char err[1024];
  int rc = read_nl("wrf_em_real.input", &nl, err, sizeof err);
  tsr_test_case("%s", "em_real for domain 2");
  TSR_CHECK_EQ_INT(rc, 0);
  tsr_test_case("%s", "parent_time_step_ratio column 2");
  TSR_CHECK_EQ_INT(nl.parent_time_step_ratio.col[1], 3);
  bench_namelist_pick_domain(&nl, 2);
  tsr_test_case("%s", "e_we domain 2");
  TSR_CHECK_EQ_INT(nl.e_we.value, 88);
  tsr_test_case("%s", "e_vert domain 2");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 45);
  tsr_test_case("%s", "dx domain 2");
  TSR_CHECK_EQ_INT((long)nl.dx.real, 10000);
  tsr_test_case("%s", "history_interval domain 2");
  TSR_CHECK_EQ_INT(nl.history_interval.value, 9);
  tsr_test_case("%s", "time_step stays single");
  TSR_CHECK_EQ_INT(nl.time_step.value, 180);
  tsr_test_case("%s", "restart_interval stays single");
  TSR_CHECK_EQ_INT(nl.restart_interval.value, 720);
  bench_namelist_pick_domain(&nl, 3); /* picks from the domain-2 values' columns */
  tsr_test_case("%s", "dx domain 3 (a real)");
  TSR_CHECK(nl.dx.real > 3333.32 && nl.dx.real < 3333.34);
  rc = read_nl("wrf_quilt_em.input", &nl, err, sizeof err);
  tsr_test_case("%s", "quilt_em for domain 2");
  TSR_CHECK_EQ_INT(rc, 0);
  bench_namelist_pick_domain(&nl, 2);
  tsr_test_case("%s", "e_vert 2*41, column 2");
  TSR_CHECK_EQ_INT(nl.e_vert.value, 41);
  tsr_test_case("%s", "history_interval_s domain 2");
  TSR_CHECK_EQ_INT(nl.history_interval_s.value, 300);
  bench_namelist_pick_domain(&nl, 3);
  tsr_test_case("%s", "e_we has no column 3: absent");
  TSR_CHECK_EQ_INT(nl.e_we.line, 0);
}

static void test_text(void) {
  bench_namelist nl;
  char err[512], hints[256];
  /* Old-style $group ... $end, upper case keys, repeat counts, no io_form. */
  tsr_test_case("%s", "dollar groups");
  TSR_CHECK_EQ_INT(bench_namelist_parse("$TIME_CONTROL $END\n$DOMAINS\n E_WE = 3*64, E_SN=48 $END\n", "t", &nl,
                                  err, sizeof err), 0);
  tsr_test_case("%s", "repeat count");
  TSR_CHECK_EQ_INT(nl.e_we.value, 64);
  tsr_test_case("%s", "upper case");
  TSR_CHECK_EQ_INT(nl.e_sn.value, 48);
  tsr_test_case("%s", "no io_form");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "no hints");
  TSR_CHECK_EQ_STR(hints, "");
  static const struct {
    int form;
    const char *hints;
  } forms[] = {{2, "strategy=serial"}, {10, "strategy=serial:format=grib2"},
               {11, "strategy=direct"}, {12, "strategy=aggregate"},
               {13, "strategy=direct:format=netcdf4"}, {102, "strategy=split"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "&time_control\n io_form_history = %d\n/\n&domains /\n", forms[i].form);
    tsr_test_case("%s", "parse");
    TSR_CHECK_EQ_INT(bench_namelist_parse(text, "t", &nl, err, sizeof err), 0);
    tsr_test_case("%s", "hints");
    TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
    tsr_test_case("%s", "io_form mapping");
    TSR_CHECK_EQ_STR(hints, forms[i].hints);
  }
  tsr_test_case("%s", "quilt + pnetcdf");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control\nio_form_history=11/\n&namelist_quilt\n"
                                  "nio_tasks_per_group=2/\n&domains/\n", "t", &nl, err, sizeof err), 0);
  tsr_test_case("%s", "hints");
  TSR_CHECK_EQ_INT(bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
  tsr_test_case("%s", "quilt + pnetcdf");
  TSR_CHECK_EQ_STR(hints, "strategy=servers:io_groups=1:io_tasks=2:backend=pnetcdf");
  tsr_test_case("%s", "empty text");
  TSR_CHECK_EQ_INT(bench_namelist_parse("", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "empty text");
  TSR_CHECK_EQ_STR(err, "t:1: required group '&time_control' is missing");
  /* Values: repeat counts, null values, logicals, reals with Fortran exponents. */
  tsr_test_case("%s", "values");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control nocolons = T, restart = .false. /\n"
                                            "&domains\n dx = 1.5d3, 2*3000., dy = 2*,\n"
                                            " e_we = 2*0, e_sn = +7 /\n", "t", &nl, err, sizeof err), 0);
  tsr_test_case("%s", "logical T");
  TSR_CHECK_EQ_INT(nl.nocolons.value, 1);
  tsr_test_case("%s", "logical .false.");
  TSR_CHECK_EQ_INT(nl.restart.value, 0);
  tsr_test_case("%s", "logical line");
  TSR_CHECK_EQ_INT(nl.restart.line, 1);
  tsr_test_case("%s", "real with d exponent");
  TSR_CHECK_EQ_INT((long)nl.dx.real, 1500);
  tsr_test_case("%s", "null value leaves the entry absent");
  TSR_CHECK_EQ_INT(nl.dy.line, 0);
  tsr_test_case("%s", "repeat count 2*0");
  TSR_CHECK_EQ_INT(nl.e_we.value, 0);
  tsr_test_case("%s", "signed integer");
  TSR_CHECK_EQ_INT(nl.e_sn.value, 7);
  tsr_test_case("%s", "real where an integer belongs");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control /\n&domains e_we = 101.5 /\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "real where an integer belongs");
  TSR_CHECK_EQ_STR(err, "t:2: 'e_we' needs an integer value, found '101.5'");
  tsr_test_case("%s", "junk glued to a value");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control /\n&domains\n e_we = 101@@ /\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "junk glued to a value");
  TSR_CHECK_EQ_STR(err, "t:3: 'e_we' needs an integer value, found '101@@'");
  tsr_test_case("%s", "junk in a group the bench skips");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control /\n&domains /\n&physics\n mp_physics = 8 %% /\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "junk in a group the bench skips");
  TSR_CHECK_EQ_STR(err, "t:4: 'mp_physics': junk after the value '8': '%%' is not a Fortran constant");
  tsr_test_case("%s", "stream keys");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control auxhist2_interval_m = 10, io_form_auxhist2 = 2,\n"
                                                 " frames_per_auxhist2 = 1, auxinput4_inname = 'x' /\n&domains /\n", "t", &nl, err, sizeof err), 0);
  tsr_test_case("%s", "stream number out of range");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control auxhist25_interval_m = 10 /\n&domains /\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "stream number out of range");
  TSR_CHECK_EQ_STR(err, "t:1: unknown variable 'auxhist25_interval_m' in '&time_control'");
  tsr_test_case("%s", "unknown key, no suggestion");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control\n/\n&namelist_quilt\n frobnicate = 1 /\n&domains /\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "unknown key, no suggestion");
  TSR_CHECK_EQ_STR(err, "t:4: unknown variable 'frobnicate' in '&namelist_quilt'");
  tsr_test_case("%s", "tail ignored");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&time_control /\n&domains /\nLSF_TIME=0:30 'it''s\n& not a group\n", "t", &nl, err, sizeof err), 0);
  tsr_test_case("%s", "missing value");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&domains\n e_we = \n/\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "missing value");
  TSR_CHECK_EQ_STR(err, "t:2: missing value for 'e_we'");
  tsr_test_case("%s", "group in group");
  TSR_CHECK_EQ_INT(bench_namelist_parse("&domains\n&physics\n/\n", "t", &nl, err, sizeof err), -1);
  tsr_test_case("%s", "group in group");
  TSR_CHECK_EQ_STR(err, "t:2: group '&physics' starts before '&domains' (line 1) was closed with '/'");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s NAMELIST_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  test_valid();
  test_em_real();
  test_domains();
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
  return tsr_test_verdict("bench namelist");
}
