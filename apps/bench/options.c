/* Command line of tessera-bench and the configuration a namelist.input adds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "namelist.h"

static const char usage[] =
    "usage: tessera-bench [options]\n"
    "A WRF-like model: a 3-D domain over a 2-D process grid, a stencil kernel with\n"
    "halo exchange every step, and WRF history output through Tessera.\n"
    "\n"
    "  --nx N --ny N --nz N   mass-point domain size (default 128 x 128 x 20)\n"
    "  --px N --py N          process grid (default: MPI_Dims_create)\n"
    "  --steps N              model steps (default 20)\n"
    "  --output-every N       history output every N steps; frame 0 is written at\n"
    "                         the start, as WRF does (default 5)\n"
    "  --sweeps N             substeps per step, each a halo exchange and a stencil\n"
    "                         sweep: the compute weight (default 2)\n"
    "  --dt SECONDS           model time step, sets the output times (default 60)\n"
    "  --start DATE           first output time (default 2026-01-01_00:00:00)\n"
    "  --schema FILE.cdl      replay a CDL header (e.g. apps/bench/schemas/wrfout_d01.cdl)\n"
    "                         instead of the default WRF-like fields\n"
    "  --frames-per-file N    history outputs per file (default 1)\n"
    "  --out DIR              output directory (default bench-out)\n"
    "  --hints STRING         Tessera hints (TESSERA_HINTS overrides them)\n"
    "  --namelist FILE        read WRF's namelist.input (&time_control, &domains,\n"
    "                         &namelist_quilt); command-line options win\n"
    "  --check                fill fields with check values, read every file back and\n"
    "                         verify every value\n"
    "  --json FILE            write the run's metrics as JSON\n"
    "  --dry-run              print the configuration and exit\n"
    "  --inject-error         (for testing --check) corrupt one value of the first output\n"
    "  --quiet                no summary line\n"
    "  --help                 this text\n";

static void defaults(bench_config *c) {
  memset(c, 0, sizeof *c);
  c->nx = 128;
  c->ny = 128;
  c->nz = 20;
  c->steps = 20;
  c->output_every = 5;
  c->sweeps = 2;
  c->frames_per_file = 1;
  c->dt = 60.0;
  snprintf(c->start_date, sizeof c->start_date, "2026-01-01_00:00:00");
  snprintf(c->out, sizeof c->out, "bench-out");
}

static int to_int(const char *opt, const char *s, int min, int *out, char *err, size_t errlen) {
  errno = 0;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < min || v > 1000000000L) {
    snprintf(err, errlen, "%s needs an integer >= %d, got '%s'", opt, min, s);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int to_text(const char *opt, const char *s, char *out, size_t n, char *err, size_t errlen) {
  if (strlen(s) >= n) {
    snprintf(err, errlen, "%s: value too long", opt);
    return -1;
  }
  snprintf(out, n, "%s", s);
  return 0;
}

int bench_parse_args(int argc, char **argv, bench_config *c, char *err, size_t errlen) {
  defaults(c);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char name[64];
    const char *val = NULL;
    const char *eq = strchr(a, '=');
    if (strncmp(a, "--", 2) != 0) {
      snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
      return -1;
    }
    size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
    if (nlen >= sizeof name) nlen = sizeof name - 1;
    memcpy(name, a, nlen);
    name[nlen] = '\0';
    if (eq) val = eq + 1;
    /* Flags. */
    int flag = 1;
    if (strcmp(name, "--help") == 0) {
      fputs(usage, stdout);
      return 1;
    } else if (strcmp(name, "--check") == 0) {
      c->check = 1;
    } else if (strcmp(name, "--dry-run") == 0) {
      c->dry_run = 1;
    } else if (strcmp(name, "--quiet") == 0) {
      c->quiet = 1;
    } else if (strcmp(name, "--inject-error") == 0) {
      c->inject_error = 1;
    } else {
      flag = 0;
    }
    if (flag) {
      if (val) {
        snprintf(err, errlen, "%s takes no value", name);
        return -1;
      }
      continue;
    }
    static const char *const valued[] = {"--nx", "--ny", "--nz", "--px", "--py", "--steps",
                                         "--output-every", "--sweeps", "--frames-per-file",
                                         "--dt", "--start", "--schema", "--out", "--json",
                                         "--hints", "--namelist"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= strcmp(name, valued[k]) == 0;
    if (!known) {
      snprintf(err, errlen, "unknown option '%s' (see --help)", name);
      return -1;
    }
    if (!val) {
      if (i + 1 >= argc) {
        snprintf(err, errlen, "%s needs a value (see --help)", name);
        return -1;
      }
      val = argv[++i];
    }
    int rc;
    if (strcmp(name, "--nx") == 0) {
      rc = to_int(name, val, 1, &c->nx, err, errlen), c->set |= BO_NX;
    } else if (strcmp(name, "--ny") == 0) {
      rc = to_int(name, val, 1, &c->ny, err, errlen), c->set |= BO_NY;
    } else if (strcmp(name, "--nz") == 0) {
      rc = to_int(name, val, 1, &c->nz, err, errlen), c->set |= BO_NZ;
    } else if (strcmp(name, "--px") == 0) {
      rc = to_int(name, val, 1, &c->px, err, errlen), c->set |= BO_PX;
    } else if (strcmp(name, "--py") == 0) {
      rc = to_int(name, val, 1, &c->py, err, errlen), c->set |= BO_PY;
    } else if (strcmp(name, "--steps") == 0) {
      rc = to_int(name, val, 0, &c->steps, err, errlen), c->set |= BO_STEPS;
    } else if (strcmp(name, "--output-every") == 0) {
      rc = to_int(name, val, 1, &c->output_every, err, errlen), c->set |= BO_EVERY;
    } else if (strcmp(name, "--sweeps") == 0) {
      rc = to_int(name, val, 0, &c->sweeps, err, errlen);
    } else if (strcmp(name, "--frames-per-file") == 0) {
      rc = to_int(name, val, 1, &c->frames_per_file, err, errlen), c->set |= BO_FPF;
    } else if (strcmp(name, "--dt") == 0) {
      char *end = NULL;
      c->dt = strtod(val, &end);
      rc = (end == val || *end != '\0' || !(c->dt > 0.0)) ? -1 : 0;
      if (rc) snprintf(err, errlen, "--dt needs a positive number of seconds, got '%s'", val);
      c->set |= BO_DT;
    } else if (strcmp(name, "--start") == 0) {
      rc = bench_date_valid(val) ? 0 : -1;
      if (rc)
        snprintf(err, errlen, "--start needs a date like 2026-01-01_00:00:00, got '%s'", val);
      else
        snprintf(c->start_date, sizeof c->start_date, "%s", val);
      c->set |= BO_START;
    } else if (strcmp(name, "--schema") == 0) {
      rc = to_text(name, val, c->schema, sizeof c->schema, err, errlen);
    } else if (strcmp(name, "--out") == 0) {
      rc = to_text(name, val, c->out, sizeof c->out, err, errlen);
    } else if (strcmp(name, "--json") == 0) {
      rc = to_text(name, val, c->json, sizeof c->json, err, errlen);
    } else if (strcmp(name, "--hints") == 0) {
      rc = to_text(name, val, c->user_hints, sizeof c->user_hints, err, errlen);
    } else if (strcmp(name, "--namelist") == 0) {
      rc = to_text(name, val, c->namelist, sizeof c->namelist, err, errlen);
    } else {
      rc = -1; /* unreachable: every valued option is handled above */
    }
    if (rc) return -1;
  }
  return 0;
}

int bench_apply_namelist(bench_config *c, char *err, size_t errlen) {
  if (!c->namelist[0]) return 0;
  bench_namelist nl;
  const char *name = c->namelist;
  if (bench_namelist_read(name, &nl, err, errlen) != 0) return -1;
  if (bench_namelist_hints(&nl, name, c->nl_hints, sizeof c->nl_hints, err, errlen) != 0)
    return -1;
#define NL_FAIL(entry, ...)                                                                 \
  do {                                                                                      \
    char m_[256];                                                                           \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                                   \
    snprintf(err, errlen, "%s:%d: %s", name, (entry).line, m_);                             \
    return -1;                                                                              \
  } while (0)
  /* WRF counts staggered points: e_we = mass points + 1. */
  const struct {
    const bench_nl_int *e;
    const char *key;
    int *dst;
    unsigned bit;
  } grid[] = {{&nl.e_we, "e_we", &c->nx, BO_NX},
              {&nl.e_sn, "e_sn", &c->ny, BO_NY},
              {&nl.e_vert, "e_vert", &c->nz, BO_NZ}};
  for (int i = 0; i < 3; i++) {
    if (!grid[i].e->line) continue;
    if (grid[i].e->value < 2 || grid[i].e->value > 1000000)
      NL_FAIL(*grid[i].e, "%s = %ld must be at least 2 (it counts staggered points)", grid[i].key,
              grid[i].e->value);
    if (!(c->set & grid[i].bit)) *grid[i].dst = (int)grid[i].e->value - 1;
  }
  if (nl.nproc_x.line && nl.nproc_x.value > 0 && !(c->set & BO_PX)) c->px = (int)nl.nproc_x.value;
  if (nl.nproc_y.line && nl.nproc_y.value > 0 && !(c->set & BO_PY)) c->py = (int)nl.nproc_y.value;
  if (nl.time_step.line) {
    if (nl.time_step.value < 1) NL_FAIL(nl.time_step, "time_step = %ld must be positive", nl.time_step.value);
    if (!(c->set & BO_DT)) c->dt = (double)nl.time_step.value;
  }
  if (nl.start_year.line && !(c->set & BO_START)) {
    char d[64];
    snprintf(d, sizeof d, "%04ld-%02ld-%02ld_%02ld:%02ld:%02ld", nl.start_year.value,
             nl.start_month.line ? nl.start_month.value : 1, nl.start_day.line ? nl.start_day.value : 1,
             nl.start_hour.value, nl.start_minute.value, nl.start_second.value);
    if (!bench_date_valid(d)) NL_FAIL(nl.start_year, "start date %s is not a valid date", d);
    memcpy(c->start_date, d, BENCH_DATE_LEN + 1); /* valid dates are exactly that long */
  }
  const bench_nl_int *runs[] = {&nl.run_days, &nl.run_hours, &nl.run_minutes, &nl.run_seconds};
  static const double unit[] = {86400.0, 3600.0, 60.0, 1.0};
  double run_s = 0.0;
  int have_run = 0;
  for (int i = 0; i < 4; i++) {
    if (!runs[i]->line) continue;
    if (runs[i]->value < 0) NL_FAIL(*runs[i], "run length entries must not be negative");
    run_s += unit[i] * (double)runs[i]->value;
    have_run = 1;
  }
  if (have_run && !(c->set & BO_STEPS)) {
    double steps = run_s / c->dt;
    if (steps > 1e9) NL_FAIL(*runs[0], "run length gives too many steps");
    c->steps = (int)(steps + 0.5);
  }
  if (nl.history_interval.line && !(c->set & BO_EVERY)) {
    if (nl.history_interval.value < 1)
      NL_FAIL(nl.history_interval, "history_interval = %ld must be at least 1 minute",
              nl.history_interval.value);
    double every = 60.0 * (double)nl.history_interval.value / c->dt;
    c->output_every = every < 1.0 ? 1 : (int)(every + 0.5);
  }
  if (nl.frames_per_outfile.line && !(c->set & BO_FPF)) {
    if (nl.frames_per_outfile.value < 1)
      NL_FAIL(nl.frames_per_outfile, "frames_per_outfile = %ld must be at least 1",
              nl.frames_per_outfile.value);
    c->frames_per_file = (int)nl.frames_per_outfile.value;
  }
#undef NL_FAIL
  return 0;
}

int bench_finish_config(bench_config *c, char *err, size_t errlen) {
  /* Namelist hints come first so that --hints overrides them (later groups win). */
  c->hints[0] = '\0';
  if (c->nl_hints[0]) snprintf(c->hints, sizeof c->hints, "%s", c->nl_hints);
  if (c->user_hints[0]) {
    size_t len = strlen(c->hints);
    snprintf(c->hints + len, sizeof c->hints - len, "%s%s", len ? "," : "", c->user_hints);
  }
  if ((long)c->nx * c->ny * c->nz > 4000000000L) {
    snprintf(err, errlen, "domain %d x %d x %d is too large", c->nx, c->ny, c->nz);
    return -1;
  }
  return 0;
}

void bench_print_config(const bench_config *c) {
  printf("nx = %d\nny = %d\nnz = %d\npx = %d\npy = %d\nsteps = %d\noutput_every = %d\n"
         "sweeps = %d\nframes_per_file = %d\ndt = %g\nstart = %s\nhints = %s\nschema = %s\n"
         "out = %s\n",
         c->nx, c->ny, c->nz, c->px, c->py, c->steps, c->output_every, c->sweeps,
         c->frames_per_file, c->dt, c->start_date, c->hints, c->schema[0] ? c->schema : "(default)",
         c->out);
}
