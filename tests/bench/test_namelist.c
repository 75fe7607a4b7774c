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

static void test_text(void) {
  bench_namelist nl;
  char err[512], hints[256];
  /* Old-style $group ... $end, upper case keys, repeat counts, no io_form. */
  EXPECT_INT("dollar groups",
             bench_namelist_parse("$DOMAINS\n E_WE = 3*64, E_SN=48 $END\n", "t", &nl, err, sizeof err), 0);
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
    snprintf(text, sizeof text, "&time_control\n io_form_history = %d\n/\n", forms[i].form);
    EXPECT_INT("parse", bench_namelist_parse(text, "t", &nl, err, sizeof err), 0);
    EXPECT_INT("hints", bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
    EXPECT_STR("io_form mapping", hints, forms[i].hints);
  }
  EXPECT_INT("quilt + pnetcdf",
             bench_namelist_parse("&time_control\nio_form_history=11/\n&namelist_quilt\n"
                                  "nio_tasks_per_group=2/\n", "t", &nl, err, sizeof err), 0);
  EXPECT_INT("hints", bench_namelist_hints(&nl, "t", hints, sizeof hints, err, sizeof err), 0);
  EXPECT_STR("quilt + pnetcdf", hints, "strategy=servers:io_groups=1:io_tasks=2:backend=pnetcdf");
  EXPECT_INT("empty text", bench_namelist_parse("", "t", &nl, err, sizeof err), 0);
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
  test_text();
  expect_error("bad_missing_equals.input", 5, "expected '=' after 'e_we'");
  expect_error("bad_value.input", 4, "'e_sn' needs an integer value, found 'eighty'");
  expect_error("bad_unclosed.input", 5, "group '&domains' is never closed with '/'");
  expect_error("bad_io_form.input", 6, "io_form_history = 5 is not supported");
  expect_error("bad_string.input", 2, "unterminated string");
  expect_error("bad_outside.input", 1, "expected a namelist group such as '&domains', found 'e_we'");
  expect_error("bad_quilt_split.input", 2, "io_form_history = 102 cannot be quilted");
  expect_error("does_not_exist.input", 0, "cannot open: No such file");
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
