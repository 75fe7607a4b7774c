/* tessera-bench --plain pnetcdf*, in a build without PnetCDF (CMake compiles
 * this file instead of plain_pnetcdf.c): the methods say so, as an unbuilt
 * strategy does (exit 3, TSR_ENOTBUILT). */
#include "plain.h"

#include <stdio.h>

static int not_built(bench_run *run) {
  snprintf(run->err, sizeof run->err, "--plain %s: PnetCDF is not built in", run->cfg.plain);
  return TSR_ENOTBUILT;
}
int plain_pnc_create(bench_run *run, const char *path) {
  (void)path;
  return not_built(run);
}
int plain_pnc_put(bench_run *run, int v, int frame) {
  (void)v, (void)frame;
  return not_built(run);
}
int plain_pnc_frame_done(bench_run *run) { return not_built(run); }
int plain_pnc_close(bench_run *run) {
  (void)run;
  return 0;
}
