/* check_output.c: verifies every value the examples wrote, with serial NetCDF
 * (no MPI), independently of Tessera.
 *
 *   check_output VAR=V[,VAR=V...] FILE [FILE...]
 *
 * Each VAR is a float variable with the record dimension first; every value
 * must be the examples' pattern f(v, t, k, j, i) = (i + 7j + 131k + 8191t +
 * 524287v) mod 2^24 where i, j, k are the indices of the last, second-to-last
 * and third-to-last dimensions (0 where there are fewer) and t counts records
 * over all FILEs in the order given (one file per output time, or several
 * records in one file). Exit status 0 when every value matched. */
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long check_var(int nc, const char *file, const char *name, int v, int t0,
                      size_t *nrec) {
  int id, nd, dimids[NC_MAX_VAR_DIMS];
  nc_type type;
  size_t len[NC_MAX_VAR_DIMS], n = 1;
  if (nc_inq_varid(nc, name, &id) != NC_NOERR || nc_inq_vartype(nc, id, &type) != NC_NOERR ||
      nc_inq_varndims(nc, id, &nd) != NC_NOERR || nc_inq_vardimid(nc, id, dimids) != NC_NOERR ||
      type != NC_FLOAT || nd < 2) {
    fprintf(stderr, "check_output: %s: no float record variable %s\n", file, name);
    return 1;
  }
  for (int d = 0; d < nd; d++) {
    nc_inq_dimlen(nc, dimids[d], &len[d]);
    n *= len[d];
  }
  float *buf = malloc(n * sizeof *buf + 1);
  if (!buf || nc_get_var_float(nc, id, buf) != NC_NOERR) {
    fprintf(stderr, "check_output: %s: cannot read %s\n", file, name);
    free(buf);
    return 1;
  }
  long bad = 0;
  for (size_t p = 0; p < n; p++) {
    int64_t idx[NC_MAX_VAR_DIMS] = {0}, rest = (int64_t)p;
    for (int d = nd - 1; d >= 0; d--) {
      idx[d] = rest % (int64_t)len[d];
      rest /= (int64_t)len[d];
    }
    int64_t i = idx[nd - 1], j = nd > 2 ? idx[nd - 2] : 0, k = nd > 3 ? idx[nd - 3] : 0;
    int64_t t = t0 + idx[0];
    float want = (float)((i + 7 * j + 131 * k + 8191 * t + 524287 * (int64_t)v) % 16777216);
    if (buf[p] != want && bad++ < 5)
      fprintf(stderr, "check_output: %s: %s value %zu is %g, expected %g\n", file, name, p,
              buf[p], want);
  }
  free(buf);
  *nrec = len[0];
  printf("check_output: %s: %s, %zu values, records %d..%d: %s\n", file, name, n, t0,
         t0 + (int)len[0] - 1, bad ? "WRONG" : "verified");
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: check_output VAR=V[,VAR=V...] FILE [FILE...]\n");
    return 2;
  }
  long bad = 0;
  int t0 = 0;
  for (int a = 2; a < argc; a++) {
    int nc;
    if (nc_open(argv[a], NC_NOWRITE, &nc) != NC_NOERR) {
      fprintf(stderr, "check_output: cannot open %s\n", argv[a]);
      return 1;
    }
    size_t nrec = 0;
    for (const char *tok = argv[1]; *tok;) { /* VAR=V, comma-separated */
      size_t n = strcspn(tok, ","), eq = strcspn(tok, "=");
      char name[NC_MAX_NAME + 1];
      if (eq >= n || eq > NC_MAX_NAME) {
        fprintf(stderr, "check_output: expected VAR=V in %s\n", argv[1]);
        return 2;
      }
      memcpy(name, tok, eq);
      name[eq] = '\0';
      bad += check_var(nc, argv[a], name, atoi(tok + eq + 1), t0, &nrec);
      tok += n + (tok[n] == ',');
    }
    nc_close(nc);
    t0 += (int)nrec;
  }
  return bad ? 1 : 0;
}
