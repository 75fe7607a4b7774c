/* tessera-convert LOG FINAL: convert a staged log (stage_format=log,
 * docs/staging.md) into FINAL with the backend and hints it was written
 * with: `<FINAL>.tessera-tmp` written, synced, read back and compared with
 * the log, renamed to FINAL. The log is left in place (the drain or
 * `tessera convert` removes it).
 *
 * tessera-convert --to FORMAT [--hints H] INPUT OUTPUT: copy a NetCDF file
 * or Zarr store into FORMAT (cdf2, cdf5, netcdf4, zarr; convert_format.c),
 * on one rank or under mpiexec.
 *
 * Exit 0, or TSR__CONVERT_EXIT - TSR_E* (101..120) with a message on
 * stderr, so the drain reports the converter's own error code. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "backend/log.h"
#include "convert_format.h"
#include "tier/drain_convert.h"
#include "tessera.h"

/* --to FORMAT [--hints H] INPUT OUTPUT, with MPI (a singleton or mpiexec's). */
static int format_mode(int argc, char **argv) {
  const char *hints = NULL;
  int i = 3;
  if (argc >= 5 && strcmp(argv[3], "--hints") == 0) hints = argv[4], i = 5;
  if (argc != i + 2 || argv[2][0] == '\0') {
    fprintf(stderr, "usage: tessera-convert --to FORMAT [--hints HINTS] INPUT OUTPUT\n");
    return 64;
  }
  MPI_Init(&argc, &argv);
  int rc = convert_format(argv[i], argv[i + 1], argv[2], hints);
  MPI_Finalize();
  return rc ? TSR__CONVERT_EXIT - rc : 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("tessera-convert (Tessera) %s\n", tsr_inq_libvers());
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf("usage: tessera-convert LOGDIR FINAL\n"
           "       tessera-convert --to FORMAT [--hints HINTS] INPUT OUTPUT\n"
           "Convert a staged log (stage_format=log) into the file FINAL it stands for,\n"
           "or copy a NetCDF file or Zarr store INPUT into OUTPUT written as FORMAT\n"
           "(cdf2, cdf5, netcdf4, zarr) with HINTS added.\n");
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "--to") == 0) return format_mode(argc, argv);
  if (argc != 3) {
    fprintf(stderr, "usage: tessera-convert LOGDIR FINAL\n"
                    "       tessera-convert --to FORMAT [--hints HINTS] INPUT OUTPUT\n");
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
