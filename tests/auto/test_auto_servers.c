/* strategy=auto with ranks reserved for servers (docs/auto.md, "With
 * servers"): the servers exist from tsr_init on, and auto chooses per file
 * among their knobs (the default backend, or the other way: backend=netcdf
 * for the group root alone, pnetcdf for the whole group; server_pick with
 * several groups). The layout by rank count:
 * 2: io_groups=1:io_tasks=1, 3: io_groups=2:io_tasks=1, 4:
 * io_groups=1:io_tasks=2. Scenarios:
 * agreed   - every model rank writes each file with the same servers
 *            candidate, the first two files explore distinct ones, and every
 *            file reads back right (the servers wrote it as its hints said);
 * bytes    - each auto file holds the bytes of the same data written with
 *            the chosen candidate's fixed hints;
 * fallback - with format=netcdf4 the candidates that name a classic
 *            backend fail at choose: every file is written with the
 *            default backend (netcdf4), reads back right, and a statistics
 *            record says why (PnetCDF built).
 * Usage: test_auto_servers SCENARIO DIR; TESSERA_STATS_FILE set by CMake. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"
#include "tsr_fixtures.h"
#include "auto_files.h"

static const char *layout(void) {
  int n = tsr_test_nranks();
  return n >= 4 ? "io_groups=1:io_tasks=2" : n == 3 ? "io_groups=2:io_tasks=1"
                                                     : "io_groups=1:io_tasks=1";
}

/* tsr_init with the layout and strategy=auto: 1 on a model rank (ctx and
 * model set), 0 on a server once the model finalized. */
static int start(tsr_ctx **ctx, MPI_Comm *model) {
  char h[128];
  snprintf(h, sizeof h, "strategy=auto:%s", layout());
  TSR_CHECKF(tsr_init(MPI_COMM_WORLD, h, ctx, model) == 0, "tsr_init(%s): %s", h,
             tsr_last_error());
  if (*model == MPI_COMM_NULL) return 0;
  auto_use_model(*model);
  return 1;
}

static void stop(tsr_ctx **ctx, MPI_Comm *model) {
  TSR_CHECK_OK(tsr_finalize(ctx));
  MPI_Comm_free(model);
  auto_use_model(MPI_COMM_WORLD);
}

static void agreed(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(&ctx, &model)) return;
  char used[6][HLEN];
  for (int i = 0; i < 6; i++) {
    char path[512];
    file_path(path, sizeof path, "srv_agreed", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, path, NULL, i, used[i]));
    TSR_CHECKF(same_everywhere(used[i]), "model ranks differ on file %d: %s", i, used[i]);
    TSR_CHECKF(strstr(used[i], "strategy=servers") != NULL, "file %d: %s", i, used[i]);
    check_values(ctx, path, i);
  }
  TSR_CHECKF(strcmp(used[0], used[1]) != 0, "the first files explore distinct candidates: %s",
             used[0]);
  stop(&ctx, &model);
}

static void bytes(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(&ctx, &model)) return;
  for (int i = 0; i < 4; i++) {
    char a[512], b[512], used[HLEN];
    file_path(a, sizeof a, "srv_bytes_auto", i);
    file_path(b, sizeof b, "srv_bytes_fixed", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, a, NULL, i, used));
    tsr_test_case("file %d, %s", i, used);
    TSR_CHECK_OK(write_file(ctx, b, used, i, NULL));
    if (auto_model_rank() == 0) TSR_CHECKF(tsr_test_same_bytes(a, b), "%s and %s differ", a, b);
  }
  stop(&ctx, &model);
}

static void fallback(void) {
  tsr_ctx *ctx;
  MPI_Comm model;
  if (!start(&ctx, &model)) return;
  int fell = 0;
  for (int i = 0; i < 4; i++) {
    char path[512], used[HLEN];
    file_path(path, sizeof path, "srv_fallback", i);
    tsr_test_case("file %d", i);
    TSR_CHECK_OK(write_file(ctx, path, "format=netcdf4", i, used));
    TSR_CHECKF(strstr(used, "strategy=servers") && !strstr(used, "backend="),
               "file %d written with %s", i, used);
    check_values(ctx, path, i);
    if (auto_model_rank() == 0)
      fell += fallback_recorded(path, "strategy=servers:backend=",
                                "does not write the format that format= asks for");
  }
  if (auto_model_rank() == 0) TSR_CHECKF(fell >= 1, "no file records a fallback from a named backend");
  stop(&ctx, &model);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"agreed", agreed, 2}, {"bytes", bytes, 2}, {"fallback", fallback, 2}};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "auto_servers", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
