/* strategy=auto in the library (docs/auto.md), at any rank count. Scenarios:
 * agreed   - every rank writes each file with the same candidate, and the
 *            first files explore distinct candidates;
 * bytes    - each file written with auto holds the bytes the same data
 *            written with the chosen candidate's fixed hints holds;
 * fallback - with backend=netcdf (serial) the candidates that need a
 *            parallel backend fail at choose: every file is still written
 *            and read back, and the statistics record says why (2+ ranks);
 * state    - TESSERA_AUTO_STATE: a second job starts from the first job's
 *            incumbent;
 * profile  - TESSERA_PROFILE: a profile that prices direct's file pieces
 *            at 10 s each makes the cost model leave both direct
 *            candidates (at least) out of the first exploration (the
 *            record says so),
 *            and a profile without coll_s gives the fixed ranking, the
 *            record naming the file and the field.
 * CMake sets TESSERA_PROFILE to flat_profile.json (every cost 0: the model
 * predicts 0 s for every candidate, so none is left out) for the scenarios
 * that need every candidate explored.
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

/* A profile (JSON) with the shipped default's figures, @p piece_s per file
 * piece and, unless @p coll, no coll_s; rank 0 writes it. */
static void write_profile(const char *path, double piece_s, int coll) {
  if (tsr_test_rank() == 0) {
    FILE *fp = fopen(path, "w");
    TSR_REQUIRE(fp != NULL);
    fprintf(fp,
            "{\"name\": \"test\", \"cores\": 2, \"cb_nodes\": 0, \"cb_buffer_bytes\": 33554432,\n"
            " \"mpi_yield\": true, \"values\": {\"copy_bw\": 7.0e9, \"net_bw\": 1.9e9,\n"
            " \"msg_s\": 0.0, \"match_s\": 5e-08, %s\"write_bw\": 1.19e9, \"fs_bw\": 0.0,\n"
            " \"req_s\": 0.0, \"file_s\": 0.0, \"open_s\": 0.00024, \"slice_s\": 0.0,\n"
            " \"piece_s\": %g, \"mpiio_bw\": 1.02e9}}\n",
            coll ? "\"coll_s\": 6.9e-06, " : "", piece_s);
    fclose(fp);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Four files of one stream under TESSERA_PROFILE=@p prof: whether any
 * used direct, and rank 0's record of the first in @p rec. */
static int four_files(const char *prof, const char *stem, char *rec, size_t n) {
  setenv("TESSERA_PROFILE", prof, 1);
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  int direct = 0;
  char first[512];
  for (int i = 0; i < 4; i++) {
    char path[512], used[HLEN];
    file_path(path, sizeof path, stem, i);
    if (i == 0) snprintf(first, sizeof first, "%s", path);
    tsr_test_case("%s, file %d", stem, i);
    TSR_CHECK_OK(write_file(ctx, path, "strategy=auto", i, used));
    TSR_CHECKF(same_everywhere(used), "ranks differ on file %d: %s", i, used);
    direct |= strstr(used, "strategy=direct") != NULL;
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0) last_record(first, rec, n);
  return direct;
}

static void profile(void) {
  char prof[512], rec[16384], want[1024];
  const char *saved = getenv("TESSERA_PROFILE");
  char keep[512];
  snprintf(keep, sizeof keep, "%s", saved ? saved : "");
  snprintf(prof, sizeof prof, "%s/profile_np%d.json", tsr_test_arg(0, "."), tsr_test_nranks());
  /* direct's file pieces at 10 s each: both direct candidates left out. */
  write_profile(prof, 10.0, 1);
  int direct = four_files(prof, "prof_pieces", rec, sizeof rec);
  TSR_CHECKF(!direct, "a direct candidate was explored although predicted past 3x the best");
  if (tsr_test_rank() == 0)
    TSR_CHECKF(strstr(rec, "by the cost model (profile test), predicted ") &&
                   strstr(rec, " left out (predicted past 3x the best)"),
               "the first record does not say the model ranked and left some out: %.600s", rec);
  /* No coll_s: the fixed ranking, which explores direct, and the reason. */
  write_profile(prof, 10.0, 0);
  direct = four_files(prof, "prof_broken", rec, sizeof rec);
  snprintf(want, sizeof want, "by fixed constants (TESSERA_PROFILE '%s': no field 'values.coll_s')",
           prof);
  if (tsr_test_rank() == 0) {
    TSR_CHECKF(strstr(rec, want) != NULL, "the first record lacks \"%s\": %.600s", want, rec);
    TSR_CHECKF(direct, "the fixed ranking explores every candidate, direct too");
  }
  if (tsr_test_rank() == 0) remove(prof);
  setenv("TESSERA_PROFILE", keep, 1);
}

static const tsr_test_scenario SCENARIOS[] = {{"agreed", agreed, 0}, {"bytes", bytes, 0},
                                              {"fallback", fallback, 2}, {"state", state, 0},
                                              {"profile", profile, 0}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "auto", SCENARIOS, (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
