/* Checks the file test_fortran wrote: every value of T (Time, south_north,
 * bottom_top, west_east), MASK and Times, read back with NetCDF. A serial
 * helper (no MPI started): tsr_test.h's checks, verdict local. */
#include <netcdf.h>
#include <stdio.h>
#include <string.h>

#include "tsr_test.h"

enum { NX = 11, NY = 7, NZ = 3, NT = 2 };

int main(int argc, char **argv) {
  int nc, v;
  const char *path = argc > 1 ? argv[1] : "(none)";
  int orc = argc > 1 ? nc_open(path, NC_NOWRITE, &nc) : NC_EINVAL;
  TSR_CHECKF(orc == NC_NOERR, "cannot open %s: %s", path, nc_strerror(orc));
  if (orc != NC_NOERR) return tsr_test_verdict("verify_fortran");
  tsr_test_case("%s", path);
  static float t[NT][NY][NZ][NX];
  static int m[NY][NX];
  char times[NT][19];
  long bad = 0;
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "T", &v), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_var_float(nc, v, &t[0][0][0][0]), NC_NOERR);
  for (int a = 0; a < NT; a++)
    for (int j = 0; j < NY; j++)
      for (int k = 0; k < NZ; k++)
        for (int i = 0; i < NX; i++)
          if (t[a][j][k][i] != (float)(i + 7 * k + 131 * j + 8191 * a) && bad++ == 0)
            fprintf(stderr, "T[%d][%d][%d][%d] = %g\n", a, j, k, i, t[a][j][k][i]);
  TSR_CHECK_EQ_INT(bad, 0);
  bad = 0;
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "MASK", &v), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_var_int(nc, v, &m[0][0]), NC_NOERR);
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++)
      if (m[j][i] != i + 100 * j && bad++ == 0) fprintf(stderr, "MASK[%d][%d] = %d\n", j, i, m[j][i]);
  TSR_CHECK_EQ_INT(bad, 0);
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "Times", &v), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_var_text(nc, v, &times[0][0]), NC_NOERR);
  TSR_CHECKF(memcmp(times[1], "2026-01-01_01:00:00", 19) == 0, "Times[1] = '%.19s'", times[1]);
  char units[8] = "";
  TSR_CHECK_EQ_INT(nc_inq_varid(nc, "T", &v), NC_NOERR);
  TSR_CHECK_EQ_INT(nc_get_att_text(nc, v, "units", units), NC_NOERR);
  TSR_CHECKF(units[0] == 'K', "T:units = '%.7s'", units);
  nc_close(nc);
  return tsr_test_verdict("verify_fortran");
}
