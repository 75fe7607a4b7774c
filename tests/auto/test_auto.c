/* strategy=auto in the library (docs/auto.md), at any rank count. Scenarios:
 * agreed   - every rank writes each file with the same candidate, and the
 *            first files explore distinct candidates;
 * bytes    - each file written with auto holds the bytes the same data
 *            written with the chosen candidate's fixed hints holds;
 * fallback - with backend=netcdf (serial) the candidates that need a
 *            parallel backend fail at choose: every file is still written
 *            and read back, and the statistics record says why (2+ ranks);
 * state    - TESSERA_AUTO_STATE: a second job starts from the first job's
 *            incumbent.
 * Usage: test_auto SCENARIO DIR (tests/common/tsr_test.h); the statistics
 * file is TESSERA_STATS_FILE (set by CMake). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"
#include "tsr_fixtures.h"
#include "auto_files.h"

static void agreed(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  char used[8][HLEN];
  for (int i = 0; i < 8; i++) {
    char path[512];
    file_path(path, sizeof path, "agreed", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, path, "strategy=auto", i, used[i]));
    TSR_CHECKF(same_everywhere(used[i]), "ranks differ on file %d: %s", i, used[i]);
    TSR_CHECKF(strncmp(used[i], "strategy=", 9) == 0 && !strstr(used[i], "strategy=auto"),
               "file %d: %s", i, used[i]);
  }
  /* Every rank count has at least three candidates, each tried once first. */
  TSR_CHECKF(strcmp(used[0], used[1]) && strcmp(used[0], used[2]) && strcmp(used[1], used[2]),
             "the first files explore distinct candidates: %s | %s | %s", used[0], used[1],
             used[2]);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static void bytes(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  for (int i = 0; i < 6; i++) {
    char a[512], b[512], used[HLEN];
    file_path(a, sizeof a, "bytes_auto", i);
    file_path(b, sizeof b, "bytes_fixed", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, a, "strategy=auto", i, used));
    tsr_test_case("file %d, %s", i, used);
    TSR_CHECK_OK(write_file(ctx, b, used, i, NULL));
    if (tsr_test_rank() == 0) TSR_CHECKF(tsr_test_same_bytes(a, b), "%s and %s differ", a, b);
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static void fallback(void) {
  if (tsr_test_nranks() < 2) {
    tsr_test_skip("one rank: every candidate takes a serial backend");
    return;
  }
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  int fell = 0;
  for (int i = 0; i < 6; i++) {
    char path[512], used[HLEN];
    file_path(path, sizeof path, "fallback", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, path, "strategy=auto:backend=netcdf", i, used));
    TSR_CHECKF(!strstr(used, "strategy=direct"), "file %d written with %s", i, used);
    check_values(ctx, path, i);
    if (tsr_test_rank() == 0)
      fell += fallback_recorded(path, "strategy=direct", "needs a parallel backend");
  }
  if (tsr_test_rank() == 0) TSR_CHECKF(fell >= 1, "no file records a fallback from direct");
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

/* The incumbent's hint text in a state file (rank 0), or "". */
static void incumbent(const char *state, char *out, size_t n) {
  out[0] = '\0';
  FILE *fp = fopen(state, "r");
  char line[1024];
  int inc = -2, c = 0;
  while (fp && fgets(line, sizeof line, fp)) {
    int r, in;
    long long fb;
    double cr;
    if (sscanf(line, "stream %d %lld %lg %d", &r, &fb, &cr, &in) == 4) {
      inc = in;
      c = 0;
    } else if (strncmp(line, "cand ", 5) == 0 && c++ == inc) {
      char h[256];
      if (sscanf(line, "cand %*d %*d %*g %*g %*g %*g %*g %255s", h) == 1) snprintf(out, n, "%s", h);
    }
  }
  if (fp) fclose(fp);
}

/* 1 when every key=value of @p cand is in the hint string @p all. */
static int holds(const char *all, const char *cand) {
  char c[256];
  snprintf(c, sizeof c, "%s", cand);
  for (char *save = NULL, *t = strtok_r(c, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
    char *p = strstr(all, t);
    size_t n = strlen(t);
    if (!p || (p[n] != '\0' && p[n] != ':')) return 0;
  }
  return 1;
}

static void state(void) {
  char st[512];
  snprintf(st, sizeof st, "%s/auto_state_np%d.txt", tsr_test_arg(0, "."), tsr_test_nranks());
  if (tsr_test_rank() == 0) remove(st);
  MPI_Barrier(MPI_COMM_WORLD);
  setenv("TESSERA_AUTO_STATE", st, 1);
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  for (int i = 0; i < 7; i++) {
    char path[512];
    file_path(path, sizeof path, "state", i);
    tsr_test_case("job 1, file %d", i);
    TSR_CHECK_OK(write_file(ctx, path, "strategy=auto", i, NULL));
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  char inc[256] = "";
  if (tsr_test_rank() == 0) incumbent(st, inc, sizeof inc);
  MPI_Bcast(inc, sizeof inc, MPI_CHAR, 0, MPI_COMM_WORLD);
  tsr_test_case("state file %s", st);
  TSR_CHECKF(strncmp(inc, "strategy=", 9) == 0, "no incumbent in %s", st);
  /* The next job of the same case starts on what the first one kept. */
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  char path[512], used[HLEN];
  file_path(path, sizeof path, "state", 0);
  tsr_test_case("job 2");
  TSR_CHECK_OK(write_file(ctx, path, "strategy=auto", 0, used));
  TSR_CHECKF(holds(used, inc), "job 2 started with %s, job 1 kept %s", used, inc);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  unsetenv("TESSERA_AUTO_STATE");
}

static const tsr_test_scenario SCENARIOS[] = {
    {"agreed", agreed, 0}, {"bytes", bytes, 0}, {"fallback", fallback, 2}, {"state", state, 0}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "auto", SCENARIOS, (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
