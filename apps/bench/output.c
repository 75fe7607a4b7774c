/* History output through Tessera: WRF file names, one file per output time
 * (or --frames-per-file), the schema defined once per file, and every field
 * handed over from the model's halo'd arrays without a copy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Time a Tessera call into the blocked-time total; leave on error. */
#define TSR_TIMED(run, rc, call)                                                            \
  do {                                                                                      \
    double t0_ = MPI_Wtime();                                                               \
    (rc) = (call);                                                                          \
    (run)->tm.blocked_s += MPI_Wtime() - t0_;                                               \
  } while (0)

static int report_on(bench_run *run, tsr_file *file, int rc, const char *call, const char *what) {
  if (rc == 0) return 0;
  int code = 0;
  const char *msg = NULL;
  if (file) tsr_backend_error(file, &code, &msg);
  else
    msg = tsr_last_error(); /* tsr_create / tsr_open failed: no handle to ask */
  snprintf(run->err, sizeof run->err, "%s(%s): %s: %s%s%s", call, what, tsr_errname(rc),
           tsr_strerror(rc), msg && *msg ? " - " : "", msg && *msg ? msg : "");
  return rc;
}

static int report(bench_run *run, int rc, const char *call, const char *what) {
  return report_on(run, run->file, rc, call, what);
}

void bench_file_path(const bench_run *run, const char *prefix, const char *date, char *path,
                     size_t n) {
  char d[BENCH_DATE_LEN + 1];
  snprintf(d, sizeof d, "%s", date);
  /* WRF's nocolons: colons in file names break tools that read NAME:... as
   * a host or a drive (and PnetCDF's own utilities); only the date has them. */
  if (run->cfg.nocolons)
    for (char *p = d; *p; p++)
      if (*p == ':') *p = '_';
  snprintf(path, n, "%.4000s/%s_d%02d_%s", run->cfg.out, prefix, run->cfg.domain, d);
}

void bench_output_path(const bench_run *run, int t, char *path, size_t n) {
  char date[BENCH_DATE_LEN + 1];
  bench_output_date(run, t, date);
  bench_file_path(run, "wrfout", date, path, n);
}

static int put_atts(bench_run *run, tsr_file *file, int varid, const bench_att_list *l,
                    const char *what) {
  for (int a = 0; a < l->n; a++) {
    const bench_att *att = &l->v[a];
    int rc;
    TSR_TIMED(run, rc, tsr_put_att(file, varid, att->name, att->type, att->len, att->values));
    if (rc) {
      char w[2 * TSR_MAX_NAME + 2];
      snprintf(w, sizeof w, "%s:%s", what, att->name);
      return report_on(run, file, rc, "tsr_put_att", w);
    }
  }
  return 0;
}

int bench_define_file(bench_run *run, const char *path, const char *hints, tsr_file **fp,
                      int *varids, int *step_varid) {
  const bench_schema *s = &run->schema;
  int rc;
  double t_define = MPI_Wtime();
  TSR_TIMED(run, rc, tsr_create(run->ctx, path, hints, fp));
  if (rc) return report_on(run, *fp, rc, "tsr_create", path);
  tsr_file *file = *fp;
  int dimids[256];
  int *ids = s->ndims <= 256 ? dimids : malloc(sizeof(int) * (size_t)s->ndims);
  if (!ids) rc = report_on(run, file, TSR_ENOMEM, "define", path);
  for (int d = 0; d < s->ndims && rc == 0; d++) {
    TSR_TIMED(run, rc, tsr_def_dim(file, s->dims[d].name, s->dims[d].len, &ids[d]));
    if (rc) report_on(run, file, rc, "tsr_def_dim", s->dims[d].name);
  }
  for (int v = 0; v < s->nvars && rc == 0; v++) {
    const bench_var *var = &s->vars[v];
    const bench_field *f = &run->fields[v];
    int vd[TSR_MAX_DIMS];
    for (int i = 0; i < var->ndims; i++) vd[i] = ids[var->dimids[i]];
    TSR_TIMED(run, rc, tsr_def_var(file, var->name, var->type, var->ndims, vd, &varids[v]));
    if (rc) {
      report_on(run, file, rc, "tsr_def_var", var->name);
      break;
    }
    if ((rc = put_atts(run, file, varids[v], &var->atts, var->name)) != 0) break;
    if (f->shape < 0) continue;
    if (run->cfg.check) {
      TSR_TIMED(run, rc, tsr_put_att(file, varids[v], "check_id", TSR_INT, 1, &f->check_id));
      if (rc) {
        report_on(run, file, rc, "tsr_put_att", "check_id");
        break;
      }
    }
    TSR_TIMED(run, rc, tsr_def_var_decomp(file, varids[v], run->shapes[f->shape].d));
    if (rc) report_on(run, file, rc, "tsr_def_var_decomp", var->name);
  }
  if (ids != dimids) free(ids);
  /* Restart and input files also hold the model's step counter. */
  if (rc == 0 && step_varid) {
    TSR_TIMED(run, rc, tsr_def_var(file, BENCH_STEP_VAR, TSR_INT, 0, NULL, step_varid));
    if (rc) report_on(run, file, rc, "tsr_def_var", BENCH_STEP_VAR);
  }
  if (rc == 0) rc = put_atts(run, file, TSR_GLOBAL, &s->gatts, "global");
  if (rc == 0) {
    TSR_TIMED(run, rc, tsr_enddef(file));
    if (rc) report_on(run, file, rc, "tsr_enddef", path);
  }
  run->tm.define_s += MPI_Wtime() - t_define;
  if (rc) {
    int ignore;
    TSR_TIMED(run, ignore, tsr_close(fp));
    (void)ignore;
  }
  return rc;
}

static int define_file(bench_run *run, const char *path) {
  if (run->cfg.plain[0]) {
    double t0 = MPI_Wtime();
    int rc = bench_plain_create(run, path);
    double dt = MPI_Wtime() - t0;
    run->tm.blocked_s += dt;
    run->tm.define_s += dt;
    snprintf(run->strategy, sizeof run->strategy, "plain-%s", run->cfg.plain);
    return rc;
  }
  /* --reduce: only the history files feed the statistics (tsr_create's
   * hints, so that --hints' own groups for wrfout* still apply). */
  char hints[sizeof run->cfg.reduce + 16] = "";
  if (run->cfg.reduce[0]) snprintf(hints, sizeof hints, "reduce=%s", run->cfg.reduce);
  int rc = bench_define_file(run, path, hints[0] ? hints : NULL, &run->file, run->varids, NULL);
  if (rc == 0 && !run->strategy[0])
    snprintf(run->strategy, sizeof run->strategy, "%s", tsr_file_strategy(run->file));
  char in_effect[4096];
  if (rc == 0 && tsr_file_hints(run->file, in_effect, sizeof in_effect) == 0)
    run->flush_each_output = strstr(in_effect, "put_mode=deferred") != NULL;
  return rc;
}

int bench_output_close(bench_run *run) {
  int rc;
  if (run->cfg.plain[0]) {
    TSR_TIMED(run, rc, bench_plain_close(run));
    return rc;
  }
  if (!run->file) return 0;
  TSR_TIMED(run, rc, tsr_close(&run->file));
  if (rc && run->nfiles > 0) report(run, rc, "tsr_close", run->files[run->nfiles - 1].path);
  run->file = NULL;
  return rc;
}

int bench_output_finish(bench_run *run) {
  if (run->cfg.plain[0]) return bench_output_close(run); /* plain files are whole at close */
  if (!run->file) return 0;
  /* Flush before the last close: with I/O servers tsr_close does not wait,
   * a flush does, and only then does tsr_get_stats know the servers' writer
   * time (tsr_finalize, which waits anyway, leaves no context to ask). */
  int rc;
  TSR_TIMED(run, rc, tsr_flush(run->file));
  if (rc) {
    report(run, rc, "tsr_flush", run->files[run->nfiles - 1].path);
    bench_output_close(run);
    return rc;
  }
  return bench_output_close(run);
}

static int open_next(bench_run *run, int t) {
  if (run->nfiles == run->fcap) {
    int cap = run->fcap ? 2 * run->fcap : 16;
    bench_file_rec *nf = realloc(run->files, sizeof *nf * (size_t)cap);
    if (!nf) return TSR_ENOMEM;
    run->files = nf;
    run->fcap = cap;
  }
  bench_file_rec *rec = &run->files[run->nfiles];
  memset(rec, 0, sizeof *rec);
  bench_output_path(run, t, rec->path, sizeof rec->path);
  rec->t0 = t;
  int rc = define_file(run, rec->path);
  if (rc) return rc;
  run->nfiles++;
  run->frames_in_file = 0;
  return 0;
}

int bench_output(bench_run *run, int t) {
  int rc;
  int open = run->cfg.plain[0] ? run->nfiles > 0 : run->file != NULL;
  if (!open || run->frames_in_file >= run->cfg.frames_per_file) {
    if ((rc = bench_output_close(run)) != 0) return rc;
    if ((rc = open_next(run, t)) != 0) return rc;
  }
  int frame = run->frames_in_file;
  /* Check values and the replicated variables are the model's business, not
   * output time: filled before the hand-off starts. */
  if (run->cfg.check) bench_check_fill(run, t);
  bench_globals_fill(run, t);
  const bench_schema *s = &run->schema;
  for (int v = 0; v < s->nvars; v++) {
    const bench_field *f = &run->fields[v];
    if (!f->record && frame > 0) continue; /* fixed variables: once per file */
    double t0 = MPI_Wtime();
    if (run->tm.first_put < 0) run->tm.first_put = t0;
    if (run->cfg.plain[0])
      rc = bench_plain_put(run, v, frame);
    else if (f->shape < 0)
      rc = tsr_put_global(run->file, run->varids[v], frame, f->buf);
    else
      rc = tsr_put(run->file, run->varids[v], frame, run->shapes[f->shape].d, f->buf);
    run->tm.blocked_s += MPI_Wtime() - t0;
    if (rc) {
      char what[TSR_MAX_NAME + 32];
      snprintf(what, sizeof what, "%s, frame %d", s->vars[v].name, frame);
      return report(run, rc, f->shape < 0 ? "tsr_put_global" : "tsr_put", what);
    }
    int64_t elems = f->shape < 0 ? f->nelems : run->shapes[f->shape].global_elems;
    run->bytes += elems * (int64_t)f->esize;
  }
  if (run->cfg.plain[0]) {
    TSR_TIMED(run, rc, bench_plain_frame_done(run));
    if (rc) return rc;
  }
  /* put_mode=deferred: the promise ends here, before the next step changes
   * the fields (the hand-written program waits once per frame too). */
  if (run->flush_each_output) { /* set by define_file, never for --plain */
    TSR_TIMED(run, rc, tsr_flush(run->file));
    if (rc) return report(run, rc, "tsr_flush", run->files[run->nfiles - 1].path);
  }
  run->frames_in_file++;
  run->files[run->nfiles - 1].nframes++;
  run->outputs++;
  return 0;
}
