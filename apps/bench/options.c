/* Command line of tessera-bench and the configuration a namelist.input adds. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "namelist.h"

/* The version: the library's own string when the build defines it, else the
 * CMake project version apps/bench/CMakeLists.txt passes in. */
#if defined(TESSERA_VERSION_STRING)
#define BENCH_VERSION TESSERA_VERSION_STRING
#elif defined(TESSERA_BENCH_VERSION)
#define BENCH_VERSION TESSERA_BENCH_VERSION
#else
#define BENCH_VERSION "unknown"
#endif

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
    "  --halo N               halo width of the model's arrays: 1 (default), or 0 for\n"
    "                         contiguous tiles as a program without a stencil holds\n"
    "                         them (with --sweeps 0 or --steps 0)\n"
    "  --sweeps N             substeps per step, each a halo exchange and a stencil\n"
    "                         sweep: the compute weight (default 2)\n"
    "  --compute-change STEP:SWEEPS  from step STEP on, SWEEPS substeps per step:\n"
    "                         the compute weight changes mid-run\n"
    "  --dt SECONDS           model time step, sets the output times (default 60)\n"
    "  --dx METRES --dy METRES  grid spacing, the files' DX and DY (default 3000)\n"
    "  --start DATE           simulation start (default 2026-01-01_00:00:00)\n"
    "  --schema FILE.cdl      replay a CDL header (e.g. apps/bench/schemas/wrfout_d01.cdl)\n"
    "                         instead of the default WRF-like fields\n"
    "  --frames-per-file N    history outputs per file (default 1)\n"
    "  --out DIR              output directory (default bench-out)\n"
    "  --nocolons             '_' instead of ':' in file names, as WRF's nocolons\n"
    "  --hints STRING         Tessera hints (TESSERA_HINTS overrides them)\n"
    "  --stage-dir DIR        stage files in DIR (a fast tier): the stage_dir hint\n"
    "  --reduce SPEC          time statistics of the history files into wrfxtrm_* files:\n"
    "                         the reduce hint (e.g. T2/max@6+T2/min@6, docs/reductions.md)\n"
    "  --plain METHOD         write the same history files without Tessera, with the\n"
    "                         libraries' own calls: gather (MPI_Gatherv + serial\n"
    "                         NetCDF), split (a NetCDF file per rank), pnetcdf (iput +\n"
    "                         wait_all per frame), pnetcdf-bput, pnetcdf-vara\n"
    "                         (put_vara_all per variable); hints are not used\n"
    "  --namelist FILE        read WRF's namelist.input (&time_control, &domains,\n"
    "                         &namelist_quilt); command-line options win\n"
    "  --domain N             the namelist's domain N (1 to max_dom): its columns of\n"
    "                         the per-domain lists, its time step, files wrfout_d0N_*;\n"
    "                         required when max_dom > 1 (one domain per run)\n"
    "  --restart-every N      write a restart file wrfrst_d01_<date> every N steps\n"
    "  --restart FILE         resume from a restart file written by --restart-every\n"
    "  --write-input          write the initial state as <out>/wrfinput_d01\n"
    "  --input FILE           start from a wrfinput_d01 written by --write-input\n"
    "  --memory-order ORDER   zyx (default): 3-D fields held in the file's order;\n"
    "                         xzy: held as WRF holds them, a(i,k,j), and written in\n"
    "                         place (tsr_decomp_box_ordered); the files are identical\n"
    "  --decomp KIND          box (default): one tile per rank of the process grid;\n"
    "                         cells: MPAS-like, the horizontal points dealt to ranks in\n"
    "                         a seeded shuffled order and written through an index map\n"
    "                         (tsr_decomp_map); no stencil, no halos\n"
    "  --check                fill fields with check values, read every file back and\n"
    "                         verify every value\n"
    "  --json FILE            write the run's metrics as JSON\n"
    "  --dry-run              print the configuration and exit\n"
    "  --inject-error         (for testing --check) corrupt one value of the first output\n"
    "  --quiet                no summary line\n"
    "  --version              print the version and exit\n"
    "  --help                 this text\n";

static void defaults(bench_config *c) {
  memset(c, 0, sizeof *c);
  c->nx = 128;
  c->ny = 128;
  c->nz = 20;
  c->steps = 20;
  c->output_every = 5;
  c->sweeps = 2;
  c->halo = BENCH_HALO;
  c->frames_per_file = 1;
  c->dt = 60.0;
  c->dx = c->dy = 3000.0;
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

static int to_positive(const char *opt, const char *s, double *out, char *err, size_t errlen) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || !(v > 0.0) || v > 1e12) {
    snprintf(err, errlen, "%s needs a positive number, got '%s'", opt, s);
    return -1;
  }
  *out = v;
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

enum {
  OPT_NX = 256, OPT_NY, OPT_NZ, OPT_PX, OPT_PY, OPT_STEPS, OPT_EVERY, OPT_SWEEPS, OPT_FPF,
  OPT_DT, OPT_DX, OPT_DY, OPT_START, OPT_SCHEMA, OPT_OUT, OPT_JSON, OPT_HINTS, OPT_NAMELIST, OPT_DOMAIN,
  OPT_RESTART_EVERY, OPT_RESTART, OPT_INPUT, OPT_WRITE_INPUT, OPT_NOCOLONS, OPT_CHECK,
  OPT_DRY_RUN, OPT_INJECT, OPT_PLAIN, OPT_QUIET, OPT_VERSION, OPT_HELP, OPT_MEMORY_ORDER, OPT_DECOMP,
  OPT_HALO, OPT_COMPUTE_CHANGE, OPT_REDUCE
};

static const struct option long_options[] = {
    {"nx", required_argument, NULL, OPT_NX},
    {"ny", required_argument, NULL, OPT_NY},
    {"nz", required_argument, NULL, OPT_NZ},
    {"px", required_argument, NULL, OPT_PX},
    {"py", required_argument, NULL, OPT_PY},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"output-every", required_argument, NULL, OPT_EVERY},
    {"sweeps", required_argument, NULL, OPT_SWEEPS},
    {"halo", required_argument, NULL, OPT_HALO},
    {"compute-change", required_argument, NULL, OPT_COMPUTE_CHANGE},
    {"frames-per-file", required_argument, NULL, OPT_FPF},
    {"dt", required_argument, NULL, OPT_DT},
    {"dx", required_argument, NULL, OPT_DX},
    {"dy", required_argument, NULL, OPT_DY},
    {"start", required_argument, NULL, OPT_START},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"out", required_argument, NULL, OPT_OUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"hints", required_argument, NULL, OPT_HINTS},
    {"reduce", required_argument, NULL, OPT_REDUCE},
    {"stage-dir", required_argument, NULL, 'S'}, /* a char: no enum entry to merge */
    {"plain", required_argument, NULL, OPT_PLAIN},
    {"namelist", required_argument, NULL, OPT_NAMELIST},
    {"domain", required_argument, NULL, OPT_DOMAIN},
    {"restart-every", required_argument, NULL, OPT_RESTART_EVERY},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"input", required_argument, NULL, OPT_INPUT},
    {"write-input", no_argument, NULL, OPT_WRITE_INPUT},
    {"nocolons", no_argument, NULL, OPT_NOCOLONS},
    {"memory-order", required_argument, NULL, OPT_MEMORY_ORDER},
    {"decomp", required_argument, NULL, OPT_DECOMP},
    {"check", no_argument, NULL, OPT_CHECK},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"inject-error", no_argument, NULL, OPT_INJECT},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* One option with its value (NULL for flags). 0, 1 (printed and done), -1. */
static int apply_option(bench_config *c, int opt, const char *name, const char *val, char *err,
                        size_t errlen) {
  switch (opt) {
  case OPT_NX: c->set |= BO_NX; return to_int(name, val, 1, &c->nx, err, errlen);
  case OPT_NY: c->set |= BO_NY; return to_int(name, val, 1, &c->ny, err, errlen);
  case OPT_NZ: c->set |= BO_NZ; return to_int(name, val, 1, &c->nz, err, errlen);
  case OPT_PX: c->set |= BO_PX; return to_int(name, val, 1, &c->px, err, errlen);
  case OPT_PY: c->set |= BO_PY; return to_int(name, val, 1, &c->py, err, errlen);
  case OPT_STEPS: c->set |= BO_STEPS; return to_int(name, val, 0, &c->steps, err, errlen);
  case OPT_EVERY: c->set |= BO_EVERY; return to_int(name, val, 1, &c->output_every, err, errlen);
  case OPT_SWEEPS: return to_int(name, val, 0, &c->sweeps, err, errlen);
  case OPT_COMPUTE_CHANGE: {
    int a = 0, b = 0, used = 0;
    if (sscanf(val, "%d:%d%n", &a, &b, &used) == 2 && val[used] == '\0' && a >= 1 && b >= 0) {
      c->change_step = a;
      c->change_sweeps = b;
      return 0;
    }
    snprintf(err, errlen, "--compute-change needs STEP:SWEEPS (STEP >= 1, SWEEPS >= 0), got '%s'",
             val);
    return -1;
  }
  case OPT_HALO:
    if (to_int(name, val, 0, &c->halo, err, errlen) != 0) return -1;
    if (c->halo <= BENCH_HALO) return 0;
    snprintf(err, errlen, "--halo is 0 or %d, got %d", BENCH_HALO, c->halo);
    return -1;
  case OPT_FPF: c->set |= BO_FPF; return to_int(name, val, 1, &c->frames_per_file, err, errlen);
  case OPT_RESTART_EVERY:
    c->set |= BO_RESTART_EVERY;
    return to_int(name, val, 1, &c->restart_every, err, errlen);
  case OPT_DT:
    c->set |= BO_DT;
    if (to_positive(name, val, &c->dt, err, errlen) == 0) return 0;
    snprintf(err, errlen, "--dt needs a positive number of seconds, got '%s'", val);
    return -1;
  case OPT_DX: c->set |= BO_DX; return to_positive(name, val, &c->dx, err, errlen);
  case OPT_DY: c->set |= BO_DY; return to_positive(name, val, &c->dy, err, errlen);
  case OPT_START:
    c->set |= BO_START;
    if (!bench_date_valid(val)) {
      snprintf(err, errlen, "--start needs a date like 2026-01-01_00:00:00, got '%s'", val);
      return -1;
    }
    snprintf(c->start_date, sizeof c->start_date, "%s", val);
    return 0;
  case OPT_SCHEMA: return to_text(name, val, c->schema, sizeof c->schema, err, errlen);
  case OPT_OUT: return to_text(name, val, c->out, sizeof c->out, err, errlen);
  case OPT_JSON: return to_text(name, val, c->json, sizeof c->json, err, errlen);
  case OPT_HINTS: return to_text(name, val, c->user_hints, sizeof c->user_hints, err, errlen);
  case 'S': return to_text(name, val, c->stage_dir, sizeof c->stage_dir, err, errlen);
  case OPT_PLAIN:
    if (bench_plain_method(val) == 0 || strlen(val) >= sizeof c->plain) {
      snprintf(err, errlen,
               "--plain needs gather, split, pnetcdf, pnetcdf-bput or pnetcdf-vara, got '%s'", val);
      return -1;
    }
    snprintf(c->plain, sizeof c->plain, "%s", val);
    return 0;
  case OPT_NAMELIST: return to_text(name, val, c->namelist, sizeof c->namelist, err, errlen);
  case OPT_DOMAIN:
    if (to_int(name, val, 1, &c->domain, err, errlen) != 0) return -1;
    if (c->domain <= BENCH_NL_MAX_DOM) return 0;
    snprintf(err, errlen, "--domain is 1 to %d (WRF's max_domains), got %d", BENCH_NL_MAX_DOM,
             c->domain);
    return -1;
  case OPT_RESTART: return to_text(name, val, c->restart, sizeof c->restart, err, errlen);
  case OPT_INPUT: return to_text(name, val, c->input, sizeof c->input, err, errlen);
  case OPT_REDUCE: return to_text(name, val, c->reduce, sizeof c->reduce, err, errlen);
  case OPT_WRITE_INPUT: c->write_input = 1; return 0;
  case OPT_NOCOLONS: c->nocolons = 1; c->set |= BO_NOCOLONS; return 0;
  case OPT_MEMORY_ORDER:
    if (strcmp(val, "zyx") == 0 || strcmp(val, "xzy") == 0) {
      c->xzy = strcmp(val, "xzy") == 0;
      return 0;
    }
    snprintf(err, errlen, "--memory-order is zyx or xzy, got '%s'", val);
    return -1;
  case OPT_DECOMP:
    if (strcmp(val, "box") == 0 || strcmp(val, "cells") == 0) {
      c->cells = strcmp(val, "cells") == 0;
      return 0;
    }
    snprintf(err, errlen, "--decomp is box or cells, got '%s'", val);
    return -1;
  case OPT_CHECK: c->check = 1; return 0;
  case OPT_DRY_RUN: c->dry_run = 1; return 0;
  case OPT_INJECT: c->inject_error = 1; return 0;
  case OPT_QUIET: c->quiet = 1; return 0;
  case OPT_VERSION: printf("tessera-bench %s\n", BENCH_VERSION); return 1;
  case OPT_HELP: fputs(usage, stdout); return 1;
  }
  snprintf(err, errlen, "internal error: option %d", opt);
  return -1;
}

/* The option's name as the user wrote it, for messages. */
static void option_name(char **argv, int index, char *name, size_t n) {
  const char *a = argv[index];
  size_t len = strcspn(a, "=");
  snprintf(name, n, "%.*s", (int)(len < n ? len : n - 1), a);
}

int bench_parse_args(int argc, char **argv, bench_config *c, char *err, size_t errlen) {
  defaults(c);
  /* getopt_long prints nothing itself (opterr = 0, leading ':'): the bench
   * says what is wrong in its own words, on rank 0 only. Long options only;
   * "-" forms are not options of this program. */
  opterr = 0;
  optind = 1;
  for (;;) {
    int prev = optind;
    /* "+": stop at the first non-option, so argv[prev] is the option just read. */
    int opt = getopt_long(argc, argv, "+:", long_options, NULL);
    if (opt == -1) break;
    char name[64];
    option_name(argv, prev, name, sizeof name);
    if (opt == ':') {
      snprintf(err, errlen, "%s needs a value (see --help)", name);
      return -1;
    }
    if (opt == '?') {
      if (strncmp(name, "--", 2) == 0 && strchr(argv[prev], '=') &&
          strncmp(argv[prev], name, strlen(name)) == 0) {
        /* "--check=1": a flag given a value */
        for (const struct option *o = long_options; o->name; o++)
          if (strcmp(o->name, name + 2) == 0 && o->has_arg == no_argument) {
            snprintf(err, errlen, "%s takes no value", name);
            return -1;
          }
      }
      snprintf(err, errlen, "unknown option '%s' (see --help)", name);
      return -1;
    }
    int rc = apply_option(c, opt, name, optarg, err, errlen);
    if (rc != 0) return rc;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
    return -1;
  }
  return 0;
}

#define NL_FAIL(entry, ...)                                                                 \
  do {                                                                                      \
    char m_[256];                                                                           \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                                   \
    snprintf(err, errlen, "%s:%d: %s", name, (entry).line, m_);                             \
    return -1;                                                                              \
  } while (0)

/* WRF's time step: time_step + time_step_fract_num / time_step_fract_den. */
static int namelist_dt(const bench_namelist *nl, const char *name, double *dt, char *err,
                       size_t errlen) {
  if (!nl->time_step.line) return 0;
  if (nl->time_step.value < 0)
    NL_FAIL(nl->time_step, "time_step = %ld must not be negative", nl->time_step.value);
  double v = (double)nl->time_step.value;
  long num = nl->time_step_fract_num.line ? nl->time_step_fract_num.value : 0;
  long den = nl->time_step_fract_den.line ? nl->time_step_fract_den.value : 1;
  if (num != 0) {
    if (den <= 0)
      NL_FAIL(nl->time_step_fract_den, "time_step_fract_den = %ld must be positive", den);
    if (num < 0) NL_FAIL(nl->time_step_fract_num, "time_step_fract_num = %ld must not be negative", num);
    v += (double)num / (double)den;
  }
  if (!(v > 0.0)) NL_FAIL(nl->time_step, "the time step (time_step + fraction) must be positive");
  *dt = v;
  return 0;
}

static void nl_date(const bench_nl_int *y, const bench_nl_int *mo, const bench_nl_int *d,
                    const bench_nl_int *h, const bench_nl_int *mi, const bench_nl_int *s,
                    char out[64]) {
  snprintf(out, 64, "%04ld-%02ld-%02ld_%02ld:%02ld:%02ld", y->value, mo->line ? mo->value : 1,
           d->line ? d->value : 1, h->value, mi->value, s->value);
}

/* Run length in seconds: run_* when any is set (WRF lets them win), else
 * end_* - start_*. *have = 0 when the namelist gives neither. */
static int namelist_run_s(const bench_namelist *nl, const char *name, const char *start,
                          double *run_s, int *have, char *err, size_t errlen) {
  const bench_nl_int *runs[] = {&nl->run_days, &nl->run_hours, &nl->run_minutes, &nl->run_seconds};
  static const double unit[] = {86400.0, 3600.0, 60.0, 1.0};
  double total = 0.0;
  *have = 0;
  for (int i = 0; i < 4; i++) {
    if (!runs[i]->line) continue;
    if (runs[i]->value < 0) NL_FAIL(*runs[i], "run length entries must not be negative");
    total += unit[i] * (double)runs[i]->value;
  }
  if (total > 0.0) {
    *run_s = total;
    *have = 1;
    return 0;
  }
  if (!nl->end_year.line) return 0;
  char end[64];
  nl_date(&nl->end_year, &nl->end_month, &nl->end_day, &nl->end_hour, &nl->end_minute,
          &nl->end_second, end);
  if (!bench_date_valid(end)) NL_FAIL(nl->end_year, "end date %s is not a valid date", end);
  int64_t s = 0;
  bench_date_diff(start, end, &s);
  if (s < 0) NL_FAIL(nl->end_year, "end date %s is before the start date %s", end, start);
  *run_s = (double)s;
  *have = 1;
  return 0;
}

/* History interval in seconds: WRF's history_interval_d/_h/_m/_s, where _m
 * falls back to history_interval (minutes). 0 when none is set. */
static int namelist_history_s(const bench_namelist *nl, const char *name, double *hist_s,
                              char *err, size_t errlen) {
  const bench_nl_int *parts[] = {&nl->history_interval_d, &nl->history_interval_h,
                                 &nl->history_interval_m, &nl->history_interval_s};
  static const double unit[] = {86400.0, 3600.0, 60.0, 1.0};
  double total = 0.0;
  for (int i = 0; i < 4; i++) {
    if (!parts[i]->line) continue;
    if (parts[i]->value < 0) NL_FAIL(*parts[i], "history intervals must not be negative");
    total += unit[i] * (double)parts[i]->value;
  }
  if (!(nl->history_interval_m.line && nl->history_interval_m.value > 0) &&
      nl->history_interval.line) {
    if (nl->history_interval.value < 0)
      NL_FAIL(nl->history_interval, "history_interval = %ld must not be negative",
              nl->history_interval.value);
    total += 60.0 * (double)nl->history_interval.value;
  }
  *hist_s = total;
  return 0;
}

/* Seconds as whole steps of dt; the line's entry is named when they are not. */
static int whole_steps(double seconds, double dt, const char *what, const bench_nl_int *at,
                       const char *name, int *out, char *err, size_t errlen) {
  double steps = seconds / dt;
  if (steps > 1e9) NL_FAIL(*at, "%s gives too many steps (%.0f)", what, steps);
  long n = (long)(steps + 0.5);
  if (n < 1 || fabs(steps - (double)n) > 1e-6 * (steps > 1.0 ? steps : 1.0))
    NL_FAIL(*at, "%s of %g s is not a whole number of time steps of %g s", what, seconds, dt);
  *out = (int)n;
  return 0;
}

/* max_dom and --domain: WRF writes every domain of a nested run, each with
 * its own files; the bench models one domain per run, so with max_dom > 1
 * it is told which (rather than writing d01 alone without a word). */
static int pick_domain(bench_namelist *nl, const char *name, bench_config *c, char *err,
                       size_t errlen) {
  long max_dom = nl->max_dom.line ? nl->max_dom.value : 1;
  if (max_dom < 1) NL_FAIL(nl->max_dom, "max_dom = %ld must be at least 1", max_dom);
  if (max_dom > BENCH_NL_MAX_DOM)
    NL_FAIL(nl->max_dom, "max_dom = %ld is more than WRF's %d domains", max_dom, BENCH_NL_MAX_DOM);
  if (c->domain > max_dom) {
    snprintf(err, errlen, "--domain %d: %s has %ld domain%s (max_dom%s)", c->domain, name,
             max_dom, max_dom == 1 ? "" : "s", nl->max_dom.line ? "" : " is 1 when absent");
    return -1;
  }
  if (max_dom > 1 && c->domain == 0)
    NL_FAIL(nl->max_dom,
            "max_dom = %ld: WRF writes each domain to its own files and the bench models one "
            "domain per run: add --domain 1 (wrfout_d01_*), or up to --domain %ld, and run "
            "once per domain",
            max_dom, max_dom);
  if (c->domain == 0) c->domain = 1;
  if (c->domain == 1) return 0;
  bench_namelist_pick_domain(nl, c->domain);
  /* A list that stops before this domain would leave the bench's default
   * grid in its place: a nest without its size is an error. */
  const bench_nl_int *need[] = {&nl->e_we, &nl->e_sn};
  static const char *const key[] = {"e_we", "e_sn"};
  for (int i = 0; i < 2; i++)
    if (!need[i]->line) {
      snprintf(err, errlen, "%s: '%s' gives no value for domain %d (--domain %d)", name, key[i],
               c->domain, c->domain);
      return -1;
    }
  return 0;
}

/* A nest's time step, as WRF derives it: its parent's divided by the nest's
 * parent_time_step_ratio, up the parent_id chain to domain 1. */
static int nest_dt(const bench_namelist *nl, const char *name, int domain, double *dt,
                   char *err, size_t errlen) {
  for (int d = domain; d > 1;) { /* parent < d: the chain ends */
    const bench_nl_int *pid = &nl->parent_id, *ratio = &nl->parent_time_step_ratio;
    if (!pid->line || !pid->has[d - 1]) {
      snprintf(err, errlen, "%s: 'parent_id' gives no parent for domain %d", name, d);
      return -1;
    }
    long parent = pid->col[d - 1], r = ratio->line && ratio->has[d - 1] ? ratio->col[d - 1] : 1;
    if (parent < 1 || parent >= d)
      NL_FAIL(*pid, "parent_id = %ld for domain %d must name an earlier domain", parent, d);
    if (r < 1)
      NL_FAIL(*ratio, "parent_time_step_ratio = %ld for domain %d must be at least 1", r, d);
    *dt /= (double)r;
    d = (int)parent;
  }
  return 0;
}

int bench_apply_namelist(bench_config *c, char *err, size_t errlen) {
  if (!c->namelist[0]) {
    if (c->domain > 1) {
      snprintf(err, errlen, "--domain %d needs --namelist: the domains are the namelist's",
               c->domain);
      return -1;
    }
    if (c->domain == 0) c->domain = 1;
    return 0;
  }
  bench_namelist nl;
  const char *name = c->namelist;
  if (bench_namelist_read(name, &nl, err, errlen) != 0) return -1;
  if (bench_namelist_hints(&nl, name, c->nl_hints, sizeof c->nl_hints, err, errlen) != 0)
    return -1;
  if (pick_domain(&nl, name, c, err, errlen) != 0) return -1;
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
    if (grid[i].e->value < 2 || grid[i].e->value > 1000000001L)
      NL_FAIL(*grid[i].e, "%s = %ld must be between 2 and 1000000001 (it counts staggered points)",
              grid[i].key, grid[i].e->value);
    if (!(c->set & grid[i].bit)) *grid[i].dst = (int)grid[i].e->value - 1;
  }
  if (nl.nproc_x.line && nl.nproc_x.value > 0 && !(c->set & BO_PX)) c->px = (int)nl.nproc_x.value;
  if (nl.nproc_y.line && nl.nproc_y.value > 0 && !(c->set & BO_PY)) c->py = (int)nl.nproc_y.value;
  const bench_nl_int *sp[] = {&nl.dx, &nl.dy};
  double *sd[] = {&c->dx, &c->dy};
  unsigned sbit[] = {BO_DX, BO_DY};
  for (int i = 0; i < 2; i++) {
    if (!sp[i]->line) continue;
    if (!(sp[i]->real > 0.0)) NL_FAIL(*sp[i], "%s = %g must be positive", i ? "dy" : "dx", sp[i]->real);
    if (!(c->set & sbit[i])) *sd[i] = sp[i]->real;
  }
  if (nl.nocolons.line && !(c->set & BO_NOCOLONS)) c->nocolons = (int)nl.nocolons.value;
  double dt = c->dt;
  if (namelist_dt(&nl, name, &dt, err, errlen) != 0) return -1;
  if (nest_dt(&nl, name, c->domain, &dt, err, errlen) != 0) return -1;
  if (!(c->set & BO_DT)) c->dt = dt;
  if (nl.start_year.line && !(c->set & BO_START)) {
    char d[64];
    nl_date(&nl.start_year, &nl.start_month, &nl.start_day, &nl.start_hour, &nl.start_minute,
            &nl.start_second, d);
    if (!bench_date_valid(d)) NL_FAIL(nl.start_year, "start date %s is not a valid date", d);
    memcpy(c->start_date, d, BENCH_DATE_LEN + 1); /* valid dates are exactly that long */
  }
  double run_s = 0.0;
  int have_run = 0;
  if (namelist_run_s(&nl, name, c->start_date, &run_s, &have_run, err, errlen) != 0) return -1;
  if (have_run && !(c->set & BO_STEPS)) {
    const bench_nl_int *at = nl.run_days.line ? &nl.run_days : nl.run_hours.line ? &nl.run_hours
                             : nl.run_minutes.line ? &nl.run_minutes : nl.run_seconds.line ? &nl.run_seconds
                             : &nl.end_year;
    if (whole_steps(run_s, c->dt, "the run length", at, name, &c->steps, err, errlen) != 0)
      return -1;
  }
  double hist_s = 0.0;
  if (namelist_history_s(&nl, name, &hist_s, err, errlen) != 0) return -1;
  if (hist_s > 0.0 && !(c->set & BO_EVERY)) {
    const bench_nl_int *at = nl.history_interval.line ? &nl.history_interval
                             : nl.history_interval_s.line ? &nl.history_interval_s
                             : nl.history_interval_m.line ? &nl.history_interval_m
                             : nl.history_interval_h.line ? &nl.history_interval_h
                             : &nl.history_interval_d;
    double steps = hist_s / c->dt;
    long whole = (long)(steps + 0.5);
    if (whole >= 1 && fabs(steps - (double)whole) <= 1e-6 * steps) {
      if (whole_steps(hist_s, c->dt, "the history interval", at, name, &c->output_every, err,
                      errlen) != 0)
        return -1;
    } else {
      /* As WRF: at the first step at or after each multiple of the interval. */
      c->output_every = 0;
      c->output_every_s = hist_s;
    }
  }
  if (nl.frames_per_outfile.line && !(c->set & BO_FPF)) {
    if (nl.frames_per_outfile.value < 1)
      NL_FAIL(nl.frames_per_outfile, "frames_per_outfile = %ld must be at least 1",
              nl.frames_per_outfile.value);
    c->frames_per_file = (int)nl.frames_per_outfile.value;
  }
  if (nl.restart_interval.line && nl.restart_interval.value > 0 && !(c->set & BO_RESTART_EVERY)) {
    /* Written only when the run reaches it, as in WRF. */
    double every = 60.0 * (double)nl.restart_interval.value, steps = every / c->dt;
    long whole = (long)(steps + 0.5);
    if (whole >= 1 && fabs(steps - (double)whole) <= 1e-6 * steps) {
      if (whole_steps(every, c->dt, "restart_interval", &nl.restart_interval, name,
                      &c->restart_every, err, errlen) != 0)
        return -1;
    } else {
      c->restart_every_s = every; /* as WRF: at the first step at or after each multiple */
    }
  }
  return 0;
}
#undef NL_FAIL

int bench_finish_config(bench_config *c, char *err, size_t errlen) {
  /* Namelist hints come first so that --hints overrides them (later groups win). */
  c->hints[0] = '\0';
  if (c->nl_hints[0]) snprintf(c->hints, sizeof c->hints, "%s", c->nl_hints);
  if (c->user_hints[0]) {
    size_t len = strlen(c->hints);
    snprintf(c->hints + len, sizeof c->hints - len, "%s%s", len ? "," : "", c->user_hints);
  }
  if (c->xzy && c->cells) {
    /* Cells have no (i,k,j) box to reorder: a column's levels are the map's business. */
    snprintf(err, errlen, "--memory-order xzy is for box decompositions, not --decomp cells");
    return -1;
  }
  if (c->halo == 0 && c->sweeps > 0 && c->steps > 0) {
    /* The stencil reads its neighbours' points from the halo. */
    snprintf(err, errlen, "--halo 0 leaves the stencil no halo: use --sweeps 0 (or --steps 0)");
    return -1;
  }
  if (c->restart[0] && c->input[0]) {
    snprintf(err, errlen, "--restart and --input both give the initial state: use one");
    return -1;
  }
  /* The model's arrays are checked against memory once the schema and the
   * process grid are known (bench_fields_setup); this is the cheap bound
   * that keeps every global index inside int64 and every count inside int. */
  if ((double)c->nx * c->ny * c->nz > 1e15) {
    snprintf(err, errlen, "domain %d x %d x %d is too large", c->nx, c->ny, c->nz);
    return -1;
  }
  return 0;
}

void bench_print_config(const bench_config *c) {
  char every[64];
  if (c->output_every > 0)
    snprintf(every, sizeof every, "%d", c->output_every);
  else
    snprintf(every, sizeof every, "0 (as WRF's alarm rings, every %g s)", c->output_every_s);
  printf("nx = %d\nny = %d\nnz = %d\npx = %d\npy = %d\nsteps = %d\noutput_every = %s\n"
         "sweeps = %d\nframes_per_file = %d\ndt = %g\ndx = %g\ndy = %g\nstart = %s\n"
         "restart_every = %d\nnocolons = %d\ndomain = %d\nhints = %s\nplain = %s\nschema = %s\nout = %s\n"
         "memory_order = %s\ndecomp = %s\nhalo = %d\n",
         c->nx, c->ny, c->nz, c->px, c->py, c->steps, every, c->sweeps,
         c->frames_per_file, c->dt, c->dx, c->dy, c->start_date, c->restart_every, c->nocolons, c->domain,
         c->hints, c->plain[0] ? c->plain : "(no)", c->schema[0] ? c->schema : "(default)", c->out,
         c->xzy ? "xzy" : "zyx", c->cells ? "cells" : "box", c->halo);
}
