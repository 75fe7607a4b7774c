/* Checks the file test_fortran wrote: every value of T (Time, south_north,
 * bottom_top, west_east), MASK and Times, read back with NetCDF. */
#include <netcdf.h>
#include <stdio.h>
#include <string.h>

enum { NX = 11, NY = 7, NZ = 3, NT = 2 };

int main(int argc, char **argv) {
  int nc, v, bad = 0;
  if (argc < 2 || nc_open(argv[1], NC_NOWRITE, &nc) != NC_NOERR) {
    fprintf(stderr, "verify_fortran: cannot open %s\n", argc > 1 ? argv[1] : "(none)");
    return 1;
  }
  static float t[NT][NY][NZ][NX];
  static int m[NY][NX];
  char times[NT][19];
  if (nc_inq_varid(nc, "T", &v) || nc_get_var_float(nc, v, &t[0][0][0][0])) bad++;
  for (int a = 0; a < NT; a++)
    for (int j = 0; j < NY; j++)
      for (int k = 0; k < NZ; k++)
        for (int i = 0; i < NX; i++)
          if (t[a][j][k][i] != (float)(i + 7 * k + 131 * j + 8191 * a) && bad++ == 0)
            fprintf(stderr, "T[%d][%d][%d][%d] = %g\n", a, j, k, i, t[a][j][k][i]);
  if (nc_inq_varid(nc, "MASK", &v) || nc_get_var_int(nc, v, &m[0][0])) bad++;
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++)
      if (m[j][i] != i + 100 * j && bad++ == 0) fprintf(stderr, "MASK[%d][%d] = %d\n", j, i, m[j][i]);
  if (nc_inq_varid(nc, "Times", &v) || nc_get_var_text(nc, v, &times[0][0])) bad++;
  if (memcmp(times[1], "2026-01-01_01:00:00", 19) != 0) bad++;
  char units[8] = "";
  if (nc_inq_varid(nc, "T", &v) || nc_get_att_text(nc, v, "units", units) || units[0] != 'K') bad++;
  nc_close(nc);
  printf("verify_fortran: %d passed, %d failed\n", bad ? 0 : 1, bad);
  return bad ? 1 : 0;
}
