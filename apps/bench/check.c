/* --check: exact values in every field, and a read-back of every file with
 * NetCDF (independent of Tessera) that verifies every value. */
#include <netcdf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CHECK_MOD 16777216LL

int64_t bench_check_value(int64_t v, int64_t t, int64_t k, int64_t j, int64_t i) {
  return (i + 7 * j + 131 * k + 8191 * t + 524287 * v) % CHECK_MOD;
}

int64_t bench_global_value(int64_t idx, int64_t t) { return (idx + 8191 * t) % CHECK_MOD; }

typedef struct {
  bench_field *f;
  tsr_type type;
  int64_t t;
} fill_arg;

static void fill_row(void *argp, const bench_shape *sh, int64_t moff, const int64_t gidx[],
                     int64_t n) {
  fill_arg *a = argp;
  int64_t k, j, i;
  bench_shape_kji(sh, gidx, &k, &j, &i);
  int along_x = sh->xdim == sh->ndims - 1, along_y = sh->ydim == sh->ndims - 1;
  int64_t g[TSR_MAX_DIMS];
  memcpy(g, gidx, sizeof(int64_t) * (size_t)sh->ndims);
  for (int64_t e = 0; e < n; e++) {
    int64_t val;
    if (along_x) {
      val = bench_check_value(a->f->check_id, a->t, k, j, i + e);
    } else if (along_y) {
      val = bench_check_value(a->f->check_id, a->t, k, j + e, i);
    } else {
      g[sh->ndims - 1] = gidx[sh->ndims - 1] + e;
      int64_t kk, jj, ii;
      bench_shape_kji(sh, g, &kk, &jj, &ii);
      val = bench_check_value(a->f->check_id, a->t, kk, jj, ii);
    }
    switch (a->type) {
    case TSR_FLOAT: ((float *)a->f->buf)[moff + e] = (float)val; break;
    case TSR_DOUBLE: ((double *)a->f->buf)[moff + e] = (double)val; break;
    case TSR_INT: ((int *)a->f->buf)[moff + e] = (int)val; break;
    default: break; /* char, and types the bench's schemas never hold */
    }
  }
}

void bench_check_fill(bench_run *run, int t) {
  for (int v = 0; v < run->nfields; v++) {
    bench_field *f = &run->fields[v];
    if (f->shape < 0) continue;
    fill_arg a = {f, run->schema.vars[v].type, t};
    bench_shape_rows(&run->shapes[f->shape], 1, fill_row, &a);
  }
  /* Test hook: the last decomposed field gets one wrong value at its global
   * origin, which rank 0 owns, so that --check must fail. */
  if (run->cfg.inject_error && t == 0 && run->grid.rank == 0) {
    for (int v = run->nfields - 1; v >= 0; v--) {
      bench_field *f = &run->fields[v];
      if (f->shape < 0) continue;
      int64_t origin[TSR_MAX_DIMS] = {0};
      int64_t off = bench_shape_offset(&run->shapes[f->shape], origin);
      if (off < 0) off = 0; /* --decomp cells: rank 0's first element instead */
      if (f->nelems == 0) break;
      switch (run->schema.vars[v].type) {
      case TSR_FLOAT: ((float *)f->buf)[off] += 1.0f; break;
      case TSR_DOUBLE: ((double *)f->buf)[off] += 1.0; break;
      case TSR_INT: ((int *)f->buf)[off] += 1; break;
      default: break;
      }
      break;
    }
  }
}

static int is_times(const bench_var *v) { return v->type == TSR_CHAR && strcmp(v->name, "Times") == 0; }

/* WRF's clocks: XTIME (minutes since the simulation start) and ITIMESTEP
 * (steps) hold the real values in both modes; they are exact in float for
 * any run the bench can do, so --check still verifies them exactly. */
static int time_value(const bench_run *run, const bench_var *var, int64_t step, double *value) {
  double steps = (double)step;
  if (strcmp(var->name, "XTIME") == 0) {
    *value = steps * run->cfg.dt / 60.0;
    return 1;
  }
  if (strcmp(var->name, "ITIMESTEP") == 0) {
    *value = steps;
    return 1;
  }
  return 0;
}

/* Expected element idx of a replicated variable at output t (as double; text
 * as a char): the output's date in Times, the clocks, then check values with
 * --check and the physical values (ZNU, P_TOP, ...) without. */
static double global_expect(const bench_run *run, int v, int64_t idx, int t, int64_t step,
                            const char date[BENCH_DATE_LEN + 1]) {
  const bench_var *var = &run->schema.vars[v];
  double clock;
  if (var->type == TSR_CHAR) {
    if (is_times(var)) {
      int64_t len = run->fields[v].nelems;
      int64_t pos = len > 0 ? idx % len : 0;
      return pos < BENCH_DATE_LEN ? (double)date[pos] : 0.0;
    }
    return (double)('A' + (idx + t) % 26);
  }
  if (time_value(run, var, step, &clock)) return clock;
  return run->cfg.check ? (double)bench_global_value(idx, t) : bench_atmos_global(run, v, idx);
}

/* The replicated variables at model step `step`; t is the history output
 * whose check values the others get. */
static void fill_globals(bench_run *run, int t, int64_t step) {
  char date[BENCH_DATE_LEN + 1];
  bench_step_date(run, step, date);
  for (int v = 0; v < run->nfields; v++) {
    bench_field *f = &run->fields[v];
    if (f->shape >= 0) continue;
    tsr_type type = run->schema.vars[v].type;
    for (int64_t e = 0; e < f->nelems; e++) {
      double val = global_expect(run, v, e, t, step, date);
      switch (type) {
      case TSR_CHAR: ((char *)f->buf)[e] = (char)val; break;
      case TSR_INT: ((int *)f->buf)[e] = (int)val; break;
      case TSR_FLOAT: ((float *)f->buf)[e] = (float)val; break;
      case TSR_DOUBLE: ((double *)f->buf)[e] = val; break;
      default: break;
      }
    }
  }
}

void bench_globals_fill(bench_run *run, int t) {
  fill_globals(run, t, bench_output_step(&run->cfg, t));
}

void bench_globals_fill_step(bench_run *run, int64_t step) {
  fill_globals(run, bench_output_index(&run->cfg, step), step);
}

/* ------------------------------------------------------------ read-back */

typedef struct {
  bench_run *run;
  char msg[2 * BENCH_PATH];
  int64_t *covered; /* per variable: values verified in split pieces */
} verifier;

static int failf(verifier *vf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(vf->msg, sizeof vf->msg, fmt, ap);
  va_end(ap);
  return -1;
}

static double read_elem(const void *buf, tsr_type type, int64_t e) {
  switch (type) {
  case TSR_CHAR: return (double)((const char *)buf)[e];
  case TSR_INT: return (double)((const int *)buf)[e];
  case TSR_FLOAT: return (double)((const float *)buf)[e];
  case TSR_DOUBLE: return ((const double *)buf)[e];
  default: return 0.0;
  }
}

static int get_vara(int ncid, int varid, tsr_type type, const size_t *st, const size_t *ct, void *buf) {
  switch (type) {
  case TSR_CHAR: return nc_get_vara_text(ncid, varid, st, ct, buf);
  case TSR_INT: return nc_get_vara_int(ncid, varid, st, ct, buf);
  case TSR_FLOAT: return nc_get_vara_float(ncid, varid, st, ct, buf);
  case TSR_DOUBLE: return nc_get_vara_double(ncid, varid, st, ct, buf);
  default: return NC_EBADTYPE;
  }
}

/* Verify one frame of variable v held as the block [off, off+cnt) of its
 * global non-record shape (the whole variable, or a split piece's tile). */
static int verify_frame(verifier *vf, const char *path, int ncid, int varid, int v, int frame,
                        int t, const int64_t off[], const size_t cnt[]) {
  bench_run *run = vf->run;
  const bench_var *var = &run->schema.vars[v];
  const bench_field *f = &run->fields[v];
  const bench_shape *sh = f->shape >= 0 ? &run->shapes[f->shape] : NULL;
  int rec = f->record, nd = var->ndims - rec;
  char date[BENCH_DATE_LEN + 1];
  bench_output_date(run, t, date);
  /* One slab of the slowest non-record dimension at a time bounds memory. */
  int64_t slabs = nd >= 2 ? (int64_t)cnt[0] : 1, per = 1;
  for (int d = nd >= 2 ? 1 : 0; d < nd; d++) per *= (int64_t)cnt[d];
  size_t esize = tsr_type_size(var->type);
  void *buf = malloc((size_t)(per > 0 ? per : 1) * esize);
  if (!buf) return failf(vf, "out of memory reading %s", var->name);
  int rc = 0;
  for (int64_t s = 0; s < slabs && rc == 0; s++) {
    size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
    if (rec) {
      st[0] = (size_t)frame;
      ct[0] = 1;
    }
    for (int d = 0; d < nd; d++) {
      st[rec + d] = 0;
      ct[rec + d] = cnt[d];
    }
    if (nd >= 2) {
      st[rec] = (size_t)s;
      ct[rec] = 1;
    }
    if (per == 0) break;
    int st_nc = get_vara(ncid, varid, var->type, st, ct, buf);
    if (st_nc != NC_NOERR) {
      rc = failf(vf, "%s: cannot read %s frame %d: %s", path, var->name, frame, nc_strerror(st_nc));
      break;
    }
    int64_t g[TSR_MAX_DIMS] = {0}, loc[TSR_MAX_DIMS] = {0};
    if (nd >= 2) loc[0] = s;
    for (int64_t e = 0; e < per; e++) {
      /* Local index within the block, then global. */
      int64_t r = e;
      for (int d = nd - 1; d >= (nd >= 2 ? 1 : 0); d--) {
        loc[d] = r % (int64_t)cnt[d];
        r /= (int64_t)cnt[d];
      }
      for (int d = 0; d < nd; d++) g[d] = off[d] + loc[d];
      double expect;
      if (sh) {
        int64_t k, j, i;
        bench_shape_kji(sh, g, &k, &j, &i);
        expect = (double)bench_check_value(f->check_id, t, k, j, i);
      } else {
        int64_t lin = 0;
        for (int d = 0; d < nd; d++) lin = lin * run->schema.dims[var->dimids[rec + d]].len + g[d];
        expect = global_expect(run, v, lin, t, bench_output_step(&run->cfg, t), date);
      }
      double got = read_elem(buf, var->type, e);
      if (var->type == TSR_FLOAT) expect = (double)(float)expect;
      if (got != expect) {
        char where[512] = "";
        size_t len = 0;
        for (int d = 0; d < nd && len < sizeof where - 64; d++)
          len += (size_t)snprintf(where + len, sizeof where - len, "%s%s=%lld", d ? ", " : "",
                                  run->schema.dims[var->dimids[rec + d]].name, (long long)g[d]);
        rc = failf(vf, "%s: %s frame %d (history output %d) at [%s]: got %.9g, expected %.9g", path,
                   var->name, frame, t, where, got, expect);
        break;
      }
    }
    if (vf->covered && sh) vf->covered[v] += per;
  }
  free(buf);
  return rc;
}

/* Check a variable's presence, type and dimensions; 1 = absent (allowed in split pieces). */
static int var_header(verifier *vf, const char *path, int ncid, int v, int nframes, int piece,
                      int *varid, size_t cnt[]) {
  bench_run *run = vf->run;
  const bench_var *var = &run->schema.vars[v];
  if (nc_inq_varid(ncid, var->name, varid) != NC_NOERR) {
    if (piece && run->fields[v].shape >= 0) return 1;
    return failf(vf, "%s: variable %s is missing", path, var->name);
  }
  nc_type t;
  int nd, dimids[NC_MAX_VAR_DIMS];
  if (nc_inq_var(ncid, *varid, NULL, &t, &nd, dimids, NULL) != NC_NOERR || nd != var->ndims)
    return failf(vf, "%s: variable %s has %d dimensions, expected %d", path, var->name, nd,
                 var->ndims);
  int rec = run->fields[v].record;
  for (int d = 0; d < nd; d++) {
    size_t len;
    char name[NC_MAX_NAME + 1];
    nc_inq_dim(ncid, dimids[d], name, &len);
    const bench_dim *bd = &run->schema.dims[var->dimids[d]];
    if (strcmp(name, bd->name) != 0)
      return failf(vf, "%s: %s dimension %d is %s, expected %s", path, var->name, d, name, bd->name);
    if (d == 0 && rec) {
      if ((int)len != nframes)
        return failf(vf, "%s: %s has %zu frames, expected %d", path, var->name, len, nframes);
      continue;
    }
    if (!piece || run->fields[v].shape < 0) {
      if ((int64_t)len != bd->len)
        return failf(vf, "%s: dimension %s of %s is %zu long, expected %lld", path, name, var->name,
                     len, (long long)bd->len);
    }
    cnt[d - rec] = len;
  }
  if (run->cfg.check && run->fields[v].check_id >= 0) {
    int id = -1;
    if (nc_get_att_int(ncid, *varid, "check_id", &id) != NC_NOERR || id != run->fields[v].check_id)
      return failf(vf, "%s: %s: attribute check_id is %d, expected %d", path, var->name, id,
                   run->fields[v].check_id);
  }
  return 0;
}

static int verify_var(verifier *vf, const char *path, int ncid, int v, const bench_file_rec *fr,
                      int piece) {
  bench_run *run = vf->run;
  const bench_field *f = &run->fields[v];
  int varid, nd = run->schema.vars[v].ndims - f->record;
  size_t cnt[TSR_MAX_DIMS];
  int h = var_header(vf, path, ncid, v, fr->nframes, piece, &varid, cnt);
  if (h != 0) return h > 0 ? 0 : -1;
  int64_t off[TSR_MAX_DIMS] = {0};
  if (piece && f->shape >= 0) {
    const bench_shape *sh = &run->shapes[f->shape];
    long long gs[TSR_MAX_DIMS], ts[TSR_MAX_DIMS];
    size_t len = 0;
    if (nc_inq_attlen(ncid, varid, "tessera_global_shape", &len) != NC_NOERR || (int)len != nd ||
        nc_get_att_longlong(ncid, varid, "tessera_global_shape", gs) != NC_NOERR ||
        nc_inq_attlen(ncid, varid, "tessera_tile_start", &len) != NC_NOERR || (int)len != nd ||
        nc_get_att_longlong(ncid, varid, "tessera_tile_start", ts) != NC_NOERR)
      return failf(vf, "%s: %s lacks tessera_global_shape / tessera_tile_start of %d values", path,
                   run->schema.vars[v].name, nd);
    for (int d = 0; d < nd; d++) {
      if (gs[d] != sh->gsize[d] || ts[d] < 0 || ts[d] + (long long)cnt[d] > gs[d])
        return failf(vf, "%s: %s: tile start %lld count %zu global %lld in dimension %d, expected "
                     "global %lld", path, run->schema.vars[v].name, ts[d], cnt[d], gs[d], d,
                     (long long)sh->gsize[d]);
      off[d] = ts[d];
    }
  }
  int frames = f->record ? fr->nframes : 1;
  for (int fi = 0; fi < frames; fi++)
    if (verify_frame(vf, path, ncid, varid, v, fi, fr->t0 + fi, off, cnt) != 0) return -1;
  return 0;
}

static int open_nc(verifier *vf, const char *path, int *ncid) {
  int st = nc_open(path, NC_NOWRITE, ncid);
  if (st != NC_NOERR) return failf(vf, "cannot open %s: %s", path, nc_strerror(st));
  return 0;
}

static int verify_piece(verifier *vf, const bench_file_rec *fr, int piece, int npieces) {
  char path[BENCH_PATH + 16];
  snprintf(path, sizeof path, "%s.%04d", fr->path, piece);
  int ncid;
  if (open_nc(vf, path, &ncid) != 0) return -1;
  int r = -1, n = -1, rc = 0;
  if (nc_get_att_int(ncid, NC_GLOBAL, "tessera_split_rank", &r) != NC_NOERR ||
      nc_get_att_int(ncid, NC_GLOBAL, "tessera_split_nranks", &n) != NC_NOERR || r != piece ||
      n != npieces)
    rc = failf(vf, "%s: tessera_split_rank/nranks are %d/%d, expected %d/%d", path, r, n, piece,
               npieces);
  for (int v = 0; v < vf->run->schema.nvars && rc == 0; v++) rc = verify_var(vf, path, ncid, v, fr, 1);
  nc_close(ncid);
  return rc;
}

int bench_check_verify(bench_run *run) {
  MPI_Comm comm = run->grid.comm;
  int rank = run->grid.rank, size = run->grid.size, nvars = run->schema.nvars;
  int split = strcmp(run->strategy, "split") == 0 || strcmp(run->strategy, "plain-split") == 0;
  verifier vf;
  memset(&vf, 0, sizeof vf);
  vf.run = run;
  if (split) vf.covered = calloc((size_t)nvars + 1, sizeof(int64_t));
  long long first_bad = -1;
  int ncid = -1, open_file = -1;
  /* Units of work, in file order: (file, variable), or (file, piece) for split. */
  int per_file = split ? size : nvars;
  long long nunits = (long long)run->nfiles * per_file;
  for (long long u = rank; u < nunits; u += size) {
    int fi = (int)(u / per_file), w = (int)(u % per_file);
    const bench_file_rec *fr = &run->files[fi];
    int rc;
    if (split) {
      rc = verify_piece(&vf, fr, w, size);
    } else {
      if (open_file != fi) {
        if (open_file >= 0) nc_close(ncid);
        open_file = -1;
        if (open_nc(&vf, fr->path, &ncid) != 0) {
          first_bad = u;
          break;
        }
        open_file = fi;
      }
      rc = verify_var(&vf, fr->path, ncid, w, fr, 0);
    }
    if (rc != 0) {
      first_bad = u;
      break;
    }
  }
  if (open_file >= 0) nc_close(ncid);
  /* The first wrong value in unit order is reported by the rank that found it. */
  long long mine = first_bad < 0 ? nunits : first_bad, first;
  MPI_Allreduce(&mine, &first, 1, MPI_LONG_LONG, MPI_MIN, comm);
  int failed = first < nunits;
  if (failed && first_bad == first) fprintf(stderr, "check: FAILED: %s\n", vf.msg);
  if (!failed && split) {
    int64_t *sum = calloc((size_t)nvars + 1, sizeof(int64_t));
    if (!sum || !vf.covered) {
      failed = 1;
    } else {
      MPI_Allreduce(vf.covered, sum, nvars, MPI_INT64_T, MPI_SUM, comm);
      for (int v = 0; v < nvars && !failed; v++) {
        const bench_field *f = &run->fields[v];
        if (f->shape < 0) continue;
        int64_t frames = 0;
        for (int fi = 0; fi < run->nfiles; fi++) frames += f->record ? run->files[fi].nframes : 1;
        int64_t expect = run->shapes[f->shape].global_elems * frames;
        if (sum[v] != expect) {
          failed = 1;
          if (rank == 0)
            fprintf(stderr, "check: FAILED: the split pieces hold %lld values of %s, expected %lld\n",
                    (long long)sum[v], run->schema.vars[v].name, (long long)expect);
        }
      }
    }
    free(sum);
  }
  free(vf.covered);
  if (!failed && rank == 0) {
    printf("check: passed (%d files, %d history outputs, %d variables, every value verified)\n",
           run->nfiles, run->outputs, nvars);
    fflush(stdout);
  }
  fflush(stderr);
  return failed;
}
