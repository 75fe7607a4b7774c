/* Restart and input files: the model's whole state through Tessera.
 *
 * A restart file (wrfrst_d01_<date>, as WRF names them) holds every variable
 * of the run's schema at one time, from the model's own arrays: the fields
 * the kernel steps are the prognostic state, the others are written too so
 * that the file reads like a history file. The scalar BENCH_STEP holds the
 * step counter. An input file (wrfinput_d01) is the same at step 0.
 *
 * Reading goes through Tessera's read path (tsr_open / tsr_get) with the
 * run's own decompositions, so a run may resume on another process grid.
 * Only the tiles are read: interior halos are refreshed by the first halo
 * exchange, and the halos at the domain edge hold the initial state's
 * values in every run alike. The replicated variables are recomputed from
 * the step. So a run resumed at step k computes exactly what an
 * uninterrupted run computes after step k, and writes the same bytes.
 *
 * A run whose history is split writes its restart and input files with
 * strategy=serial (one file that any tool opens), the way WRF lets
 * io_form_restart differ from io_form_history.
 *
 * State files are read with the read strategy (tsr_open's strategy=) that
 * matches the run's strategy for that file, so the Input and Restart times
 * of a run are those of its strategy: serial reads through one reader,
 * aggregate through its aggregators, direct by every rank; a split run
 * reads its one state file like serial, a servers run like direct. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int fail(bench_run *run, tsr_file *f, int rc, const char *call, const char *what) {
  int code = 0;
  const char *msg = NULL;
  if (f) tsr_backend_error(f, &code, &msg);
  else
    msg = tsr_last_error(); /* tsr_create / tsr_open failed: no handle to ask */
  snprintf(run->err, sizeof run->err, "%s(%s): %s: %s%s%s", call, what, tsr_errname(rc),
           tsr_strerror(rc), msg && *msg ? " - " : "", msg && *msg ? msg : "");
  return rc;
}

void bench_restart_path(const bench_run *run, int64_t step, char *path, size_t n) {
  char date[BENCH_DATE_LEN + 1];
  bench_step_date(run, step, date);
  bench_file_path(run, "wrfrst", date, path, n);
}

void bench_input_path(const bench_run *run, char *path, size_t n) {
  snprintf(path, n, "%.4000s/wrfinput_d%02d", run->cfg.out, run->cfg.domain);
}

/* Everything a state file costs the model is restart time, not output time. */
/* Data bytes of field v, the whole variable: what the history's `bytes` counts. */
static int64_t field_bytes(const bench_run *run, int v) {
  const bench_field *fl = &run->fields[v];
  int64_t elems = fl->shape < 0 ? fl->nelems : run->shapes[fl->shape].global_elems;
  return elems * (int64_t)fl->esize;
}

static int write_state(bench_run *run, int64_t step, const char *path) {
  double t0 = MPI_Wtime(), blocked0 = run->tm.blocked_s;
  const char *hints = strcmp(run->strategy, "split") == 0 ? "strategy=serial" : NULL;
  int *varids = calloc((size_t)run->schema.nvars + 1, sizeof(int));
  if (!varids) return fail(run, NULL, TSR_ENOMEM, "restart", path);
  tsr_file *f = NULL;
  int step_id = -1;
  int rc = bench_define_file(run, path, hints, &f, varids, &step_id);
  bench_globals_fill_step(run, step);
  for (int v = 0; v < run->nfields && rc == 0; v++) {
    const bench_field *fl = &run->fields[v];
    if (fl->shape < 0)
      rc = tsr_put_global(f, varids[v], 0, fl->buf);
    else
      rc = tsr_put(f, varids[v], 0, run->shapes[fl->shape].d, fl->buf);
    if (rc)
      fail(run, f, rc, fl->shape < 0 ? "tsr_put_global" : "tsr_put", run->schema.vars[v].name);
    else
      run->restart_bytes += field_bytes(run, v);
  }
  if (rc == 0) {
    int s = (int)step;
    rc = tsr_put_global(f, step_id, 0, &s);
    if (rc)
      fail(run, f, rc, "tsr_put_global", BENCH_STEP_VAR);
    else
      run->restart_bytes += (int64_t)sizeof s;
  }
  if (f) {
    int crc = tsr_close(&f);
    if (rc == 0 && crc) rc = fail(run, NULL, crc, "tsr_close", path);
  }
  free(varids);
  run->tm.blocked_s = blocked0;
  run->tm.restart_s += MPI_Wtime() - t0;
  return rc;
}

int bench_restart_write(bench_run *run, int64_t step) {
  char path[BENCH_PATH];
  bench_restart_path(run, step, path, sizeof path);
  int rc = write_state(run, step, path);
  if (rc == 0) run->restarts++;
  return rc;
}

int bench_input_write(bench_run *run) {
  char path[BENCH_PATH];
  bench_input_path(run, path, sizeof path);
  return write_state(run, 0, path);
}

/* The state file's time must be this run's step `step`: the same --start
 * and --dt as the run that wrote it. */
static int check_time(bench_run *run, tsr_file *f, const char *path, int64_t step) {
  int id;
  if (tsr_inq_varid(f, "Times", &id) != 0) return 0; /* a schema without Times */
  char got[BENCH_DATE_LEN + 1] = "", want[BENCH_DATE_LEN + 1];
  int fi = -1;
  for (int v = 0; v < run->schema.nvars; v++)
    if (strcmp(run->schema.vars[v].name, "Times") == 0) fi = v;
  if (fi < 0 || run->fields[fi].nelems < BENCH_DATE_LEN) return 0;
  char *buf = calloc((size_t)run->fields[fi].nelems + 1, 1);
  if (!buf) return fail(run, NULL, TSR_ENOMEM, "read", path);
  int rc = tsr_get(f, id, 0, NULL, buf);
  if (rc) {
    free(buf);
    return fail(run, f, rc, "tsr_get", "Times");
  }
  memcpy(got, buf, BENCH_DATE_LEN);
  free(buf);
  bench_step_date(run, step, want);
  if (strcmp(got, want) != 0) {
    snprintf(run->err, sizeof run->err,
             "%.700s is at %s, but step %lld of this run (--start %s, --dt %g) is at %s: "
             "run with the options of the run that wrote it",
             path, got, (long long)step, run->cfg.start_date, run->cfg.dt, want);
    return TSR_EINVAL;
  }
  return 0;
}

/* The value of strategy= in one hint group (text up to @p end), or NULL. */
static const char *group_strategy(const char *g, const char *end, size_t *len) {
  for (const char *k = strstr(g, "strategy"); k && k < end; k = strstr(k + 1, "strategy")) {
    const char *v = k + strlen("strategy");
    while (*v == ' ') v++;
    if (*v != '=' || (k > g && k[-1] != ':' && k[-1] != ' ' && k[-1] != ',')) continue;
    for (v++; *v == ' '; v++) {}
    *len = strcspn(v, ":, ");
    return v;
  }
  return NULL;
}

/* tsr_open's hints for a state file: the read strategy of the strategy the
 * run's hints give @p path (as docs/hints.md orders the groups: the
 * unglobbed ones in order, then the first globbed one matching the name),
 * and serial NetCDF for a path with ':' (ROMIO reads
 * "dir/wrfrst_d01_2026-01-01_00:03:00" as a file on the file system
 * "dir/wrfrst_d01_2026-01-01_00" and PnetCDF then cannot find it). */
static void state_read_hints(const bench_run *run, const char *path, char *out, size_t n) {
  const char *h = run->effective_hints, *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char strat[32] = "";
  for (int pass = 0; pass < 2; pass++) /* unglobbed groups, then the first matching glob */
    for (const char *g = h; *g;) {
      const char *end = g + strcspn(g, ",");
      size_t first = strcspn(g, ":,"), len = 0;
      int has_glob = memchr(g, '=', first) == NULL && first > 0;
      char glob[256];
      snprintf(glob, sizeof glob, "%.*s", (int)first, g);
      int applies = pass == 0 ? !has_glob
                              : has_glob && (fnmatch(glob, base, 0) == 0 || fnmatch(glob, path, 0) == 0);
      const char *v = applies ? group_strategy(g, end, &len) : NULL;
      if (v) snprintf(strat, sizeof strat, "%.*s", (int)len, v);
      g = *end ? end + 1 : end;
      if (pass == 1 && applies) break;
    }
  const char *read = strcmp(strat, "serial") == 0 || strcmp(strat, "split") == 0 ? "serial"
                     : strcmp(strat, "aggregate") == 0                          ? "aggregate"
                     : strcmp(strat, "direct") == 0                             ? "direct"
                                                                                 : "";
  snprintf(out, n, "%s%s%s%s", strchr(path, ':') ? "backend=netcdf" : "",
           strchr(path, ':') && read[0] ? ":" : "", read[0] ? "strategy=" : "", read);
}

int bench_state_read(bench_run *run, const char *path, int restart) {
  double t0 = MPI_Wtime(), blocked0 = run->tm.blocked_s;
  tsr_file *f = NULL;
  char hints[96];
  state_read_hints(run, path, hints, sizeof hints);
  int rc = tsr_open(run->ctx, path, hints, &f);
  if (rc) {
    fail(run, f, rc, "tsr_open", path);
    goto done;
  }
  int step = 0, id;
  if (tsr_inq_varid(f, BENCH_STEP_VAR, &id) == 0) {
    rc = tsr_get(f, id, 0, NULL, &step);
    if (rc) {
      fail(run, f, rc, "tsr_get", BENCH_STEP_VAR);
      goto done;
    }
  } else if (restart) {
    snprintf(run->err, sizeof run->err, "%.700s has no %s: not a restart file of tessera-bench",
             path, BENCH_STEP_VAR);
    rc = TSR_EINVAL;
    goto done;
  }
  if (!restart && step != 0) {
    snprintf(run->err, sizeof run->err,
             "%.700s holds step %d: --input takes an initial state (step 0), resume with "
             "--restart",
             path, step);
    rc = TSR_EINVAL;
    goto done;
  }
  if (step < 0 || step > run->cfg.steps) {
    snprintf(run->err, sizeof run->err, "%.700s is at step %d, outside this run's 0..%d", path,
             step, run->cfg.steps);
    rc = TSR_EINVAL;
    goto done;
  }
  if ((rc = check_time(run, f, path, step)) != 0) goto done;
  for (int v = 0; v < run->nfields && rc == 0; v++) {
    bench_field *fl = &run->fields[v];
    if (fl->shape < 0) continue; /* recomputed from the step */
    const char *name = run->schema.vars[v].name;
    if (tsr_inq_varid(f, name, &id) != 0) {
      snprintf(run->err, sizeof run->err, "%.700s has no variable %s, which the model needs", path,
               name);
      rc = TSR_EINVAL;
      break;
    }
    rc = tsr_get(f, id, 0, run->shapes[fl->shape].d, fl->buf);
    if (rc) fail(run, f, rc, "tsr_get", name);
    else
      run->input_bytes += field_bytes(run, v);
  }
  if (rc == 0) run->start_step = step;
done:
  if (f) tsr_close(&f);
  run->tm.blocked_s = blocked0;
  run->tm.input_s += MPI_Wtime() - t0;
  return rc;
}
