/* tessera-bench: a WRF-like benchmark model.
 *
 * A 3-D domain over a 2-D process grid; every step a halo exchange and a
 * stencil kernel on each tile; history output every --output-every steps
 * (output 0 at the start, as WRF writes its initial state) through Tessera,
 * with the strategy chosen by hints at run time. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

static int mkdir_p(const char *path, char *err, size_t errlen) {
  char buf[BENCH_PATH];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create directory %.900s: %s", buf, strerror(errno));
        return -1;
      }
      *p = c;
      if (c == '\0') break;
    }
  }
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    snprintf(err, errlen, "%.900s is not a directory", path);
    return -1;
  }
  return 0;
}

/* --stage-dir DIR: one more hint group, stage_dir=DIR for every file. It
 * comes after --hints (later groups win) and before TESSERA_HINTS, which the
 * library applies on top, as for every hint. Added here rather than in
 * options.c so the option stays one row there. */
static int add_stage_hint(bench_config *c, char *err, size_t errlen) {
  if (!c->stage_dir[0]) return 0;
  /* ':' and ',' separate hints and groups: such a path cannot be a hint value. */
  if (strpbrk(c->stage_dir, ":,")) {
    snprintf(err, errlen, "--stage-dir: the path must not contain ':' or ',', got '%.900s'",
             c->stage_dir);
    return -1;
  }
  size_t len = strlen(c->hints);
  int w = snprintf(c->hints + len, sizeof c->hints - len, "%sstage_dir=%s", len ? "," : "",
                   c->stage_dir);
  if (w < 0 || (size_t)w >= sizeof c->hints - len) {
    snprintf(err, errlen, "--stage-dir: the hints are too long");
    return -1;
  }
  return 0;
}

/* Rank 0 prints; everyone agrees on the status through Allreduce first. */
static int agree(MPI_Comm comm, int rc) {
  int all;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

static void say_error(int rank, const char *what) {
  if (rank == 0) {
    fprintf(stderr, "tessera-bench: %s\n", what);
    fflush(stderr);
  }
}

static int exit_code_of(int tsr_rc) {
  return tsr_rc == TSR_ENOTBUILT ? BENCH_EXIT_NOTBUILT : BENCH_EXIT_FAIL;
}

/* The time loop: output 0 (not when resuming: the run that wrote the
 * restart file did it), then steps with output every K steps and a restart
 * file every --restart-every steps. */

/* A restart file at @p step: every restart_every steps, or, for a
 * restart_interval that is no whole number of steps, as WRF's alarm rings:
 * at the first step at or after each multiple of the interval (it rings at
 * ring time >= alarm time, and the alarm then moves on by the interval, not
 * from the step it rang at). */
static int restart_due(const bench_config *c, int step) {
  return bench_every_due(c->restart_every, c->restart_every_s, c->dt, step);
}
static int run_model(bench_run *run) {
  const bench_config *c = &run->cfg;
  int first = run->start_step, rc = 0;
  if (first == 0) rc = bench_output(run, 0);
  if (rc == 0 && first == 0 && c->write_input) rc = bench_input_write(run);
  for (int step = first + 1; step <= c->steps && rc == 0; step++) {
    /* --compute-change: the model's weight changes mid-run (strategy=auto
     * must follow it, docs/auto.md). */
    if (c->change_step > 0 && step == c->change_step) run->cfg.sweeps = c->change_sweeps;
    double t0 = MPI_Wtime();
    if (bench_step(run) != 0) {
      snprintf(run->err, sizeof run->err, "halo exchange failed at step %d", step);
      return TSR_EMPI;
    }
    run->tm.compute_s += MPI_Wtime() - t0;
    if (bench_output_due(c, step)) rc = bench_output(run, bench_output_index(c, step));
    if (rc == 0 && restart_due(c, step)) rc = bench_restart_write(run, step);
  }
  run->tm.last_step_end = MPI_Wtime();
  if (rc != 0) return rc;
  return bench_output_finish(run);
}

/* Load the schema on every process (before tsr_init: I/O servers simply drop
 * it), so that ncgen and the template read are not part of the timed run. */
static int load_schema(bench_run *run, MPI_Comm comm) {
  bench_config *c = &run->cfg;
  int rc;
  if (c->schema[0])
    rc = bench_schema_load_cdl(c->schema, c->out, comm, &run->schema, run->err, sizeof run->err);
  else
    rc = bench_schema_default(&run->schema, run->err, sizeof run->err);
  if (rc == 0) rc = bench_schema_resize(&run->schema, c->nx, c->ny, c->nz, run->err, sizeof run->err);
  return agree(comm, rc);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  static bench_run run_storage;
  bench_run *run = &run_storage;
  memset(run, 0, sizeof *run);
  run->world = MPI_COMM_WORLD;
  int wrank;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &run->world_size);
  bench_config *c = &run->cfg;
  char err[BENCH_ERR] = "";
  int prc = bench_parse_args(argc, argv, c, err, sizeof err);
  if (prc == 0 && bench_apply_namelist(c, err, sizeof err) != 0) prc = -1;
  if (prc == 0 && bench_finish_config(c, err, sizeof err) != 0) prc = -1;
  if (prc == 0 && add_stage_hint(c, err, sizeof err) != 0) prc = -1;
  if (prc != 0 || c->dry_run) {
    if (prc < 0) say_error(wrank, err);
    if (prc == 0 && wrank == 0) bench_print_config(c);
    MPI_Finalize();
    return prc < 0 ? BENCH_EXIT_USAGE : BENCH_EXIT_OK;
  }
  /* --plain writes without Tessera: its hints would describe nothing. The
   * library still starts (the model's decompositions are Tessera's), with
   * no hints, so that it stays out of the way. */
  if (c->plain[0]) {
    c->hints[0] = '\0';
    unsetenv("TESSERA_HINTS");
  }
  const char *env = getenv("TESSERA_HINTS");
  snprintf(run->effective_hints, sizeof run->effective_hints, "%s%s%s", c->hints,
           env && *env && c->hints[0] ? "," : "", env ? env : "");

  int rc = 0;
  if (wrank == 0) rc = mkdir_p(c->out, err, sizeof err);
  /* The library stages into an existing directory; the bench makes it, as --out. */
  if (wrank == 0 && rc == 0 && c->stage_dir[0]) rc = mkdir_p(c->stage_dir, err, sizeof err);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc != 0) {
    say_error(wrank, err);
    MPI_Finalize();
    return BENCH_EXIT_USAGE;
  }

  if (load_schema(run, MPI_COMM_WORLD) != 0) {
    say_error(wrank, run->err);
    bench_schema_free(&run->schema);
    MPI_Finalize();
    return BENCH_EXIT_USAGE;
  }

  /* The model starts here. tsr_init is the library's start-up, like
   * MPI_Init: inside wall time, outside output time. */
  MPI_Barrier(MPI_COMM_WORLD);
  run->tm.t_start = MPI_Wtime();
  run->tm.first_put = -1.0;
  MPI_Comm model = MPI_COMM_NULL;
  rc = tsr_init(MPI_COMM_WORLD, c->hints[0] ? c->hints : NULL, &run->ctx, &model);
  if (rc != 0) {
    char msg[sizeof run->effective_hints + 1280];
    /* The library's own reason ("hint 'aggregators=two': expected ...") says
     * which hint is wrong; the code's text is the fallback. */
    const char *why = tsr_last_error();
    snprintf(msg, sizeof msg, "tsr_init(hints \"%.4000s\"): %s: %.1000s", run->effective_hints,
             tsr_errname(rc), why && *why ? why : tsr_strerror(rc));
    say_error(wrank, msg);
    bench_schema_free(&run->schema);
    MPI_Finalize();
    return exit_code_of(rc);
  }
  if (model == MPI_COMM_NULL) { /* an I/O server: it served until the model finished */
    bench_schema_free(&run->schema);
    MPI_Finalize();
    return BENCH_EXIT_OK;
  }

  int exit_code = BENCH_EXIT_OK;
  rc = agree(model, bench_grid_setup(&run->grid, model, c, run->err, sizeof run->err));
  if (rc == 0) {
    rc = bench_schema_run_atts(&run->schema, c, run->grid.px, run->grid.py) != 0 ? -1 : 0;
    if (rc) snprintf(run->err, sizeof run->err, "out of memory");
    rc = agree(model, rc);
  }
  if (rc != 0) {
    say_error(run->grid.rank, run->err);
    exit_code = BENCH_EXIT_USAGE;
    goto finalize;
  }
  if (bench_fields_plan(run) != 0) {
    say_error(run->grid.rank, run->err);
    exit_code = BENCH_EXIT_USAGE;
    goto finalize;
  }
  run->varids = calloc((size_t)run->schema.nvars + 1, sizeof(int));
  rc = run->varids ? bench_fields_setup(run) : TSR_ENOMEM;
  if (rc == TSR_ENOMEM && !run->err[0]) snprintf(run->err, sizeof run->err, "out of memory for the model arrays");
  if (rc == 0) {
    bench_fields_init(run);
    if (c->restart[0]) rc = bench_state_read(run, c->restart, 1);
    if (c->input[0]) rc = bench_state_read(run, c->input, 0);
  }
  /* The model's initialisation ends in step, as WRF's does (start_domain's
   * halo exchanges) and as the hand-written yardstick's does (a barrier
   * before its clock): without it the ranks' skew from filling their fields
   * (up to 0.26 s on a 16-core machine) was charged to the first output's
   * first collective call, on every strategy and on --plain alike. */
  if (rc == 0) MPI_Barrier(run->grid.comm);
  if (rc == 0) rc = run_model(run);
  if (rc != 0) {
    say_error(run->grid.rank, run->err[0] ? run->err : tsr_strerror(rc));
    exit_code = exit_code_of(rc);
    bench_output_close(run);
  }

finalize:
  if (run->ctx) tsr_get_stats(run->ctx, &run->lib_stats);
  double t0 = MPI_Wtime();
  int frc = tsr_finalize(&run->ctx);
  run->tm.finalize_end = MPI_Wtime();
  run->tm.blocked_s += run->tm.finalize_end - t0;
  if (frc != 0 && exit_code == BENCH_EXIT_OK) {
    /* A failure that surfaces only now (a staged file's drain, a server's
     * write) is named by the library's sentence, as at any other call. */
    char msg[1400];
    const char *why = tsr_last_error();
    int more = why && *why && strcmp(why, tsr_strerror(frc)) != 0;
    snprintf(msg, sizeof msg, "tsr_finalize: %s: %s%s%.1200s", tsr_errname(frc), tsr_strerror(frc),
             more ? " - " : "", more ? why : "");
    say_error(run->grid.rank, msg);
    exit_code = BENCH_EXIT_FAIL;
  }
  if (exit_code == BENCH_EXIT_OK) {
    if (c->check) {
      run->check_failed = bench_check_verify(run);
      if (run->check_failed) exit_code = BENCH_EXIT_FAIL;
    }
    if (bench_metrics_report(run) != 0 && exit_code == BENCH_EXIT_OK) exit_code = BENCH_EXIT_FAIL;
  }
  bench_plain_free(run);
  bench_fields_free(run);
  bench_schema_free(&run->schema);
  free(run->varids);
  free(run->files);
  MPI_Comm_free(&model);
  MPI_Finalize();
  return exit_code;
}
