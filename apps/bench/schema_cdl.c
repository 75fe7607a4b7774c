/* --schema FILE.cdl: turn a CDL header into an empty NetCDF template with
 * ncgen, then read its dimensions, variables and attributes with NetCDF. */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "text_file.h"

#ifndef TESSERA_NCGEN
#define TESSERA_NCGEN "ncgen"
#endif

/* Append a single-quoted shell word. */
static int shell_quote(char *out, size_t n, const char *s) {
  size_t len = strlen(out);
  if (len + 1 >= n) return -1;
  out[len++] = '\'';
  for (; *s; s++) {
    if (*s == '\'') {
      if (len + 4 >= n) return -1;
      memcpy(out + len, "'\\''", 4);
      len += 4;
    } else {
      if (len + 1 >= n) return -1;
      out[len++] = *s;
    }
  }
  if (len + 2 >= n) return -1;
  out[len++] = '\'';
  out[len] = '\0';
  return 0;
}

/* ncgen turns @p cdl into @p nc; messages name the schema as @p shown. */
static int ncgen_file(const char *ncgen, const char *cdl, const char *shown, const char *nc,
                      char *err, size_t errlen) {
  char cmd[3 * BENCH_PATH] = "";
  int rc = shell_quote(cmd, sizeof cmd, ncgen);
  strcat(cmd, " -k nc6 -o ");
  rc |= shell_quote(cmd, sizeof cmd, nc);
  if (strlen(cmd) + 2 < sizeof cmd) strcat(cmd, " ");
  rc |= shell_quote(cmd, sizeof cmd, cdl);
  if (rc != 0) {
    snprintf(err, errlen, "schema path too long");
    return -1;
  }
  if (system(cmd) != 0) {
    /* ncgen may fail after creating the file (a type or value it finds
     * wrong only while writing): nothing may be left in the output
     * directory. */
    remove(nc);
    snprintf(err, errlen, "%s could not turn %s into a NetCDF template (is it valid CDL?)", ncgen,
             shown);
    return -1;
  }
  return 0;
}

/* The schema read once with the size bound (text_file.h), so that ncgen
 * never meets /dev/zero; a pipe or a device can be read only once, so ncgen
 * gets a copy, written next to the template. *@p src: the path ncgen reads. */
static int checked_source(const char *cdl, const char *nc, char *copy, size_t n,
                          const char **src, char *err, size_t errlen) {
  char *text;
  size_t len;
  *src = cdl;
  if (bench_text_read(cdl, "schema", &text, &len, err, errlen) != 0) return -1;
  int rc = 0;
  if (!bench_text_is_regular(cdl)) {
    snprintf(copy, n, "%s.cdl", nc);
    FILE *fp = fopen(copy, "wb");
    rc = fp && fwrite(text, 1, len, fp) == len ? 0 : -1;
    if (fp && fclose(fp) != 0) rc = -1;
    if (rc) snprintf(err, errlen, "cannot write a copy of schema %s to %s", cdl, copy);
    *src = copy;
  }
  free(text);
  return rc;
}

static int run_ncgen(const char *cdl, const char *nc, char *err, size_t errlen) {
  const char *ncgen = getenv("TESSERA_NCGEN");
  if (!ncgen || !*ncgen) ncgen = TESSERA_NCGEN;
  char copy[BENCH_PATH + 8] = "";
  const char *src;
  int rc = checked_source(cdl, nc, copy, sizeof copy, &src, err, errlen);
  if (rc == 0) rc = ncgen_file(ncgen, src, cdl, nc, err, errlen);
  if (copy[0]) remove(copy);
  return rc;
}

static int map_type(nc_type t, tsr_type *out) {
  switch (t) {
  case NC_CHAR: *out = TSR_CHAR; return 0;
  case NC_BYTE:
  case NC_UBYTE:
  case NC_SHORT:
  case NC_USHORT:
  case NC_INT: *out = TSR_INT; return 0;
  case NC_FLOAT: *out = TSR_FLOAT; return 0;
  case NC_DOUBLE:
  case NC_UINT:
  case NC_INT64:
  case NC_UINT64: *out = TSR_DOUBLE; return 0;
  default: return -1;
  }
}

static int read_atts(int ncid, int varid, int natts, bench_att_list *l, char *err, size_t errlen) {
  for (int a = 0; a < natts; a++) {
    char name[NC_MAX_NAME + 1];
    nc_type t;
    size_t len;
    if (nc_inq_attname(ncid, varid, a, name) || nc_inq_att(ncid, varid, name, &t, &len)) {
      snprintf(err, errlen, "cannot read attribute %d", a);
      return -1;
    }
    tsr_type tt;
    if (map_type(t, &tt) != 0) continue; /* strings and user types: not in WRF headers */
    void *buf = malloc(len * 8 + 1);
    if (!buf) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    int st = NC_NOERR;
    switch (tt) {
    case TSR_CHAR: st = nc_get_att_text(ncid, varid, name, buf); break;
    case TSR_INT: st = nc_get_att_int(ncid, varid, name, buf); break;
    case TSR_FLOAT: st = nc_get_att_float(ncid, varid, name, buf); break;
    case TSR_DOUBLE: st = nc_get_att_double(ncid, varid, name, buf); break;
    default: break; /* map_type yields the four types above only */
    }
    /* ncgen cannot write an empty text attribute: it writes `""` as one
     * NUL, and ncdump prints both as `""`. Headers hold the empty one (WRF's
     * stagger = ""), and its one extra byte moved every variable of the
     * yardstick's header by 4 bytes, its data by 512 (PnetCDF's alignment). */
    if (st == NC_NOERR && tt == TSR_CHAR && len == 1 && ((char *)buf)[0] == '\0') len = 0;
    int rc = st == NC_NOERR ? bench_att_put(l, name, tt, len, buf) : -1;
    free(buf);
    if (rc != 0) {
      snprintf(err, errlen, "cannot read attribute %s: %s", name, nc_strerror(st));
      return -1;
    }
  }
  return 0;
}

static int read_template(const char *nc, bench_schema *s, char *err, size_t errlen) {
  int ncid, ndims, nvars, ngatts, unlim;
  int st = nc_open(nc, NC_NOWRITE, &ncid);
  if (st != NC_NOERR) {
    snprintf(err, errlen, "cannot open the template %s: %s", nc, nc_strerror(st));
    return -1;
  }
  int rc = -1;
  int *dimmap = NULL;
  if (nc_inq(ncid, &ndims, &nvars, &ngatts, &unlim) != NC_NOERR) goto done;
  dimmap = malloc(sizeof *dimmap * (size_t)(ndims + 1));
  if (!dimmap) goto done;
  for (int d = 0; d < ndims; d++) {
    char name[NC_MAX_NAME + 1];
    size_t len;
    if (nc_inq_dim(ncid, d, name, &len) != NC_NOERR) goto done;
    dimmap[d] = bench_schema_add_dim(s, name, d == unlim ? TSR_UNLIMITED : (int64_t)len);
    if (dimmap[d] < 0) goto done;
  }
  for (int v = 0; v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    nc_type t;
    int nd, natts, dimids[NC_MAX_VAR_DIMS];
    if (nc_inq_var(ncid, v, name, &t, &nd, dimids, &natts) != NC_NOERR) goto done;
    tsr_type tt;
    if (map_type(t, &tt) != 0) {
      snprintf(err, errlen, "variable %s has a type Tessera cannot write", name);
      goto done_msg;
    }
    if (nd > TSR_MAX_DIMS) {
      snprintf(err, errlen, "variable %s has %d dimensions (at most %d)", name, nd, TSR_MAX_DIMS);
      goto done_msg;
    }
    const char *names[TSR_MAX_DIMS];
    for (int i = 0; i < nd; i++) names[i] = s->dims[dimmap[dimids[i]]].name;
    int idx = bench_schema_add_var(s, name, tt, nd, names);
    if (idx < 0 || read_atts(ncid, v, natts, &s->vars[idx].atts, err, errlen) != 0) goto done;
  }
  if (read_atts(ncid, NC_GLOBAL, ngatts, &s->gatts, err, errlen) != 0) goto done;
  rc = 0;
done:
  if (rc != 0 && !err[0]) snprintf(err, errlen, "cannot read the template %s", nc);
done_msg:
  free(dimmap);
  nc_close(ncid);
  return rc;
}

int bench_schema_load_cdl(const char *cdl, const char *workdir, MPI_Comm comm, bench_schema *s,
                          char *err, size_t errlen) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  bench_schema_init(s);
  err[0] = '\0';
  /* Every rank reads the template that rank 0 made, so it must live where
   * all ranks see it: in the output directory, not in a node-local /tmp. */
  char nc[BENCH_PATH];
  int pid = 0;
  if (rank == 0) pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, comm);
  snprintf(nc, sizeof nc, "%.4000s/.tessera-bench-schema-%d.nc", workdir, pid);
  int rc = 0;
  if (rank == 0) rc = run_ncgen(cdl, nc, err, errlen);
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc != 0) {
    MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, comm);
    return -1;
  }
  rc = read_template(nc, s, err, errlen);
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, comm);
  MPI_Barrier(comm);
  if (rank == 0) remove(nc);
  if (any != 0) {
    /* The message of the lowest failing rank, for everyone. */
    int me = rc != 0 ? rank : 1 << 30, who;
    MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, comm);
    MPI_Bcast(err, (int)errlen, MPI_CHAR, who, comm);
    bench_schema_free(s);
    return -1;
  }
  return 0;
}
