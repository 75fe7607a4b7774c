/* tessera-convert LOG FINAL: convert a staged log (stage_format=log,
 * docs/staging.md) into FINAL with the backend and hints it was written
 * with: `<FINAL>.tessera-tmp` written, synced, read back and compared with
 * the log, renamed to FINAL. The log is left in place (the drain or
 * `tessera convert` removes it). Exit 0, or TSR__CONVERT_EXIT - TSR_E*
 * (101..120) with a message on stderr, so the drain reports the
 * converter's own error code. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "backend/log.h"
#include "tier/drain_convert.h"
#include "tessera.h"

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("tessera-convert (Tessera) %s\n", tsr_inq_libvers());
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf("usage: tessera-convert LOGDIR FINAL\n"
           "Convert a staged log (stage_format=log) into the file FINAL it stands for.\n");
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: tessera-convert LOGDIR FINAL\n");
    return 64; /* EX_USAGE, below every failure status */
  }
  /* The serial classic backend (serial and split files) calls no MPI, and
   * a singleton's MPI_Init costs about 0.2-1.3 s on this machine, per file:
   * skipped for it. The others (PnetCDF for aggregate and direct files,
   * netCDF-4) initialise MPI as a singleton: the drain starts the converter
   * without the launcher's environment. */
  char target[TSR__NAME_MAX] = "";
  int mpi = tsr__log_target(argv[1], target) != 0 || strcmp(target, "netcdf") != 0;
  if (mpi) MPI_Init(&argc, &argv);
  char msg[1024] = "";
  int rc = tsr__log_convert(argv[1], argv[2], msg, sizeof msg);
  if (rc) fprintf(stderr, "tessera-convert: %s\n", msg);
  if (mpi) MPI_Finalize();
  return rc ? TSR__CONVERT_EXIT - rc : 0;
}
