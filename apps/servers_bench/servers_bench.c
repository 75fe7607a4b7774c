/* tessera-servers-bench: is the hand-off to the I/O servers as cheap as a
 * memcpy, and does it pay off against serial and direct at equal ranks?
 *
 * One launch runs the same small model three times on the same ranks:
 * `servers` (the last G*T ranks serve, the others compute), then `serial` and
 * `direct` (every rank computes). The model sweeps a 5-point stencil over its
 * tile of NVARS 3-D fields each step, agrees on a residual (as models do),
 * and writes a history file every K steps. It prints, per strategy, the wall
 * time, compute time, output time blocked per frame and the drain at
 * finalize; for `servers` it also times a memcpy of the same tile bytes on
 * the same rank into a warm buffer, and prints the ratio. `rma` is `servers`
 * again with transport=rma (servers fetch the ring with MPI_Get), `shm` with
 * transport=shm (servers on the node copy out of the ring in shared memory);
 * with --repeat R the transports run R times, alternating, and the ratios are
 * printed as median and range over the runs, since a loaded machine moves
 * single figures more than the transports differ. `f64` and `f32` hold the
 * model's fields in double and put them into the float variables with
 * tsr_put_typed, converted by the server (f64) or before the hand-off
 * (f32, precision=float): the bytes handed to the servers per frame show the
 * halving. This is a benchmark, not a test: CTest only runs it once as a
 * smoke test. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera.h"

typedef struct {
  int64_t nx, ny, nz;
  int nvars, steps, every, sweeps, groups, tasks, keep, repeat;
  char backend[16], dir[400], only[64], conc[32];
} options;

typedef struct {
  double wall, compute, blocked, blocked_put, drain, memcpy_s, sent, msgs;
  int frames, model_ranks;
  double med_blocked, med_put, med_memcpy; /* per frame: median over frames, max over ranks */
} result;

enum { MAXFRAMES = 4096 };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void usage(void) {
  fprintf(stderr,
          "usage: tessera-servers-bench [--nx N --ny N --nz N --vars N --steps N --every K\n"
          "       --sweeps N --groups G --tasks T --backend netcdf|pnetcdf --dir D --keep\n"
          "       --only servers|serial|direct|rma|shm|f64|f32|conc --repeat R\n"
          "       --concentrators per_node|N] [--version] [--help]\n");
}

/* A whole decimal int in [lo, INT_MAX]; -1 otherwise. */
static int parse_int(const char *v, int lo) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > INT_MAX) return -1;
  return (int)x;
}

/* Options through getopt_long (long names only). Every rank parses; the
 * caller prints the usage once. Returns 0, or -1 with a message in err. */
static int parse(int argc, char **argv, options *o, char *err, size_t errlen) {
  *o = (options){192, 192, 20, 4, 16, 2, 4, 1, 1, 0, 1, "netcdf", ".", "", ""};
  enum { O_NX = 256, O_NY, O_NZ, O_VARS, O_STEPS, O_EVERY, O_SWEEPS, O_GROUPS, O_TASKS,
         O_BACKEND, O_DIR, O_ONLY, O_KEEP, O_REPEAT, O_CONC };
  static const struct option longopts[] = {
      {"nx", required_argument, NULL, O_NX},         {"ny", required_argument, NULL, O_NY},
      {"nz", required_argument, NULL, O_NZ},         {"vars", required_argument, NULL, O_VARS},
      {"steps", required_argument, NULL, O_STEPS},   {"every", required_argument, NULL, O_EVERY},
      {"sweeps", required_argument, NULL, O_SWEEPS}, {"groups", required_argument, NULL, O_GROUPS},
      {"tasks", required_argument, NULL, O_TASKS},   {"backend", required_argument, NULL, O_BACKEND},
      {"dir", required_argument, NULL, O_DIR},       {"only", required_argument, NULL, O_ONLY},
      {"keep", no_argument, NULL, O_KEEP},           {"repeat", required_argument, NULL, O_REPEAT},
      {"concentrators", required_argument, NULL, O_CONC}, {NULL, 0, NULL, 0}};
  opterr = 0; /* messages come from rank 0 only, below */
  optind = 1;
  int c, idx;
  while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
    int min = 1, *field = NULL;
    switch (c) {
    case O_NX: case O_NY: case O_NZ: {
      int v = parse_int(optarg, c == O_NZ ? 1 : 4);
      if (v < 0) {
        snprintf(err, errlen, "--%s needs an integer >= %d, got '%s'", longopts[idx].name,
                 c == O_NZ ? 1 : 4, optarg);
        return -1;
      }
      *(c == O_NX ? &o->nx : c == O_NY ? &o->ny : &o->nz) = v;
      continue;
    }
    case O_VARS: field = &o->nvars; break;
    case O_STEPS: field = &o->steps; break;
    case O_EVERY: field = &o->every; break;
    case O_SWEEPS: field = &o->sweeps; min = 0; break;
    case O_GROUPS: field = &o->groups; break;
    case O_TASKS: field = &o->tasks; break;
    case O_REPEAT: field = &o->repeat; break;
    case O_BACKEND: snprintf(o->backend, sizeof o->backend, "%s", optarg); continue;
    case O_DIR: snprintf(o->dir, sizeof o->dir, "%s", optarg); continue;
    case O_ONLY: snprintf(o->only, sizeof o->only, "%s", optarg); continue;
    case O_CONC: snprintf(o->conc, sizeof o->conc, "%s", optarg); continue;
    case O_KEEP: o->keep = 1; continue;
    default:
      snprintf(err, errlen, "unknown option or missing value: %s", argv[optind - 1]);
      return -1;
    }
    int v = parse_int(optarg, min);
    if (v < 0) {
      snprintf(err, errlen, "--%s needs an integer >= %d, got '%s'", longopts[idx].name, min,
               optarg);
      return -1;
    }
    *field = v;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument: %s", argv[optind]);
    return -1;
  }
  return 0;
}

/* The model's tile of the (nz, ny, nx) domain on a 2-D process grid. */
typedef struct {
  int64_t start[3], count[3], elems;
} tile;

static tile my_tile(const options *o, MPI_Comm comm) {
  int rank, size, dims[2] = {0, 0};
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Dims_create(size, 2, dims);
  int py = rank / dims[1], px = rank % dims[1];
  tile t = {{0, o->ny * py / dims[0], o->nx * px / dims[1]}, {o->nz, 0, 0}, 0};
  t.count[1] = o->ny * (py + 1) / dims[0] - t.start[1];
  t.count[2] = o->nx * (px + 1) / dims[1] - t.start[2];
  t.elems = t.count[0] * t.count[1] * t.count[2];
  return t;
}

/* A few Jacobi-like sweeps: real memory traffic over the tile, like a
 * dynamics step; returns a residual for the model's global reduction. */
static double compute(float *f, float *tmp, const tile *t, int sweeps) {
  int64_t nz = t->count[0], ny = t->count[1], nx = t->count[2];
  double res = 0;
  for (int s = 0; s < sweeps; s++) {
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
          int64_t c = (k * ny + j) * nx + i;
          float n = j > 0 ? f[c - nx] : f[c], so = j + 1 < ny ? f[c + nx] : f[c];
          float w = i > 0 ? f[c - 1] : f[c], e = i + 1 < nx ? f[c + 1] : f[c];
          tmp[c] = 0.5f * f[c] + 0.125f * (n + so + w + e);
        }
    memcpy(f, tmp, (size_t)t->elems * sizeof *f);
  }
  for (int64_t c = 0; c < t->elems; c += 97) res += f[c];
  return res;
}

/* One history output: a new file with every field at frame 0. Returns the
 * time blocked in tsr_put alone through *put_s. */
static int output(tsr_ctx *ctx, const options *o, const char *strategy, int frame,
                  tsr_decomp *d, float *const *fields, double *const *dfields, double *put_s) {
  char path[512];
  snprintf(path, sizeof path, "%s/sb_%s_%03d.nc", o->dir, strategy, frame);
  tsr_file *f;
  int rc = tsr_create(ctx, path, NULL, &f);
  if (rc) return rc;
  int dT, dz, dy, dx, vid[64];
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dT);
  tsr_def_dim(f, "bottom_top", o->nz, &dz);
  tsr_def_dim(f, "south_north", o->ny, &dy);
  tsr_def_dim(f, "west_east", o->nx, &dx);
  int ids[4] = {dT, dz, dy, dx};
  for (int v = 0; v < o->nvars; v++) {
    char name[16];
    snprintf(name, sizeof name, "F%d", v);
    tsr_def_var(f, name, TSR_FLOAT, 4, ids, &vid[v]);
  }
  rc = tsr_enddef(f);
  double t0 = MPI_Wtime();
  for (int v = 0; v < o->nvars && !rc; v++)
    rc = dfields ? tsr_put_typed(f, vid[v], 0, d, TSR_DOUBLE, dfields[v])
                 : tsr_put(f, vid[v], 0, d, fields[v]);
  *put_s += MPI_Wtime() - t0;
  int rc2 = tsr_close(&f);
  return rc ? rc : rc2;
}

/* Servers: every file closed so far is finished and its servers' notes
 * are in (a flush waits for them), so tsr_get_stats then knows how many
 * messages the busiest server received. A tiny file, flushed and closed. */
static void settle(tsr_ctx *ctx, const options *o, const char *strategy) {
  char path[512];
  snprintf(path, sizeof path, "%s/sb_%s_settle.nc", o->dir, strategy);
  tsr_file *f;
  int dx, v;
  if (tsr_create(ctx, path, NULL, &f)) return;
  tsr_def_dim(f, "x", 1, &dx);
  tsr_def_var(f, "s", TSR_INT, 1, &dx, &v);
  if (!tsr_enddef(f)) tsr_flush(f);
  tsr_close(&f);
}

static int run(const options *o, const char *strategy, result *r) {
  memset(r, 0, sizeof *r);
  char hints[256];
  int f64 = !strcmp(strategy, "f64") || !strcmp(strategy, "f32");
  int conc = !strcmp(strategy, "conc");
  int servers = !strcmp(strategy, "servers") || !strcmp(strategy, "rma") ||
                !strcmp(strategy, "shm") || f64 || conc;
  const char *transport = !strcmp(strategy, "rma") || !strcmp(strategy, "shm") ? strategy : "p2p";
  if (servers)
    snprintf(hints, sizeof hints,
             "strategy=servers:io_groups=%d:io_tasks=%d:backend=%s:transport=%s%s%s%s", o->groups,
             o->tasks, o->backend, transport,
             strcmp(strategy, "f32") ? "" : ":precision=float", conc ? ":concentrators=" : "",
             conc ? o->conc : "");
  else
    snprintf(hints, sizeof hints, "strategy=%s", strategy);
  MPI_Barrier(MPI_COMM_WORLD);
  double t_start = MPI_Wtime();
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  int rc = tsr_init(MPI_COMM_WORLD, hints, &ctx, &model);
  double mine[12] = {0};
  if (!rc && model != MPI_COMM_NULL) {
    tile t = my_tile(o, model);
    size_t bytes = (size_t)t.elems * sizeof(float);
    float **fields = malloc((size_t)o->nvars * sizeof *fields);
    float *tmp = malloc(bytes + 4), *warm = malloc(bytes * (size_t)o->nvars + 4);
    double **dfields = f64 ? calloc((size_t)o->nvars, sizeof *dfields) : NULL;
    for (int v = 0; dfields && v < o->nvars; v++)
      dfields[v] = malloc((size_t)t.elems * sizeof(double) + 8);
    for (int v = 0; v < o->nvars; v++) {
      fields[v] = malloc(bytes + 4);
      for (int64_t c = 0; c < t.elems; c++) fields[v][c] = (float)((c * 31 + v) % 1000);
    }
    memset(tmp, 0, bytes);
    memset(warm, 1, bytes * (size_t)o->nvars); /* warm: every page touched once */
    int64_t g[3] = {o->nz, o->ny, o->nx};
    tsr_decomp *d = NULL;
    rc = tsr_decomp_box(ctx, 3, g, t.start, t.count, NULL, NULL, &d);
    int frame = 0;
    double compute_s = 0, blocked = 0, put_s = 0, copy_s = 0;
    static double fb[MAXFRAMES], fp[MAXFRAMES], fm[MAXFRAMES];
    for (int step = 1; step <= o->steps && !rc; step++) {
      double c0 = MPI_Wtime();
      double res = 0, all = 0;
      for (int v = 0; v < o->nvars; v++) res += compute(fields[v], tmp, &t, o->sweeps);
      MPI_Allreduce(&res, &all, 1, MPI_DOUBLE, MPI_SUM, model);
      compute_s += MPI_Wtime() - c0;
      if (step % o->every) continue;
      /* f64/f32: the model's state in double (made outside the timing). */
      for (int v = 0; dfields && v < o->nvars; v++)
        for (int64_t c = 0; c < t.elems; c++) dfields[v][c] = fields[v][c] + 1.0 / 3.0;
      double b0 = MPI_Wtime(), p0 = put_s;
      rc = output(ctx, o, strategy, frame, d, fields, dfields, &put_s);
      double dt = MPI_Wtime() - b0;
      blocked += dt;
      /* The same tile bytes, copied on the same rank into a warm buffer. */
      double m0 = MPI_Wtime();
      for (int v = 0; v < o->nvars; v++) memcpy(warm + (size_t)v * t.elems, fields[v], bytes);
      double dm = MPI_Wtime() - m0;
      copy_s += dm;
      if (frame < MAXFRAMES) {
        fb[frame] = dt;
        fp[frame] = put_s - p0;
        fm[frame] = dm;
      }
      frame++;
    }
    double end_compute = MPI_Wtime();
    tsr_decomp_free(&d);
    if (servers) settle(ctx, o, strategy); /* part of the drain */
    tsr_stats sts;
    if (tsr_get_stats(ctx, &sts) == 0) {
      mine[10] = (double)sts.server_bytes_sent;
      mine[11] = (double)sts.server_msgs_received;
    }
    int rf = tsr_finalize(&ctx); /* servers: waits until every file is on disk */
    if (!rc) rc = rf;
    mine[0] = compute_s;
    mine[1] = blocked;
    mine[2] = put_s;
    mine[3] = MPI_Wtime() - end_compute; /* drain */
    mine[4] = copy_s;
    int nf = frame < MAXFRAMES ? frame : MAXFRAMES;
    mine[5] = median(fb, nf);
    mine[6] = frame;
    mine[8] = median(fp, nf);
    mine[9] = median(fm, nf);
    mine[7] = 1;
    for (int v = 0; v < o->nvars; v++) free(fields[v]);
    free(fields);
    for (int v = 0; dfields && v < o->nvars; v++) free(dfields[v]);
    free(dfields);
    free(tmp);
    free(warm);
    MPI_Comm_free(&model);
  }
  double wall = MPI_Wtime() - t_start, maxs[12], sums[12];
  MPI_Allreduce(mine, maxs, 12, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(mine, sums, 12, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  *r = (result){wall,    maxs[0],      maxs[1],      maxs[2], maxs[3], maxs[4], sums[10],
                maxs[11], (int)maxs[6], (int)sums[7], maxs[5], maxs[8], maxs[9]};
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!o->keep && rank == 0) {
    char path[512];
    for (int fr = 0; fr < r->frames; fr++) {
      snprintf(path, sizeof path, "%s/sb_%s_%03d.nc", o->dir, strategy, fr);
      unlink(path);
    }
    snprintf(path, sizeof path, "%s/sb_%s_settle.nc", o->dir, strategy);
    unlink(path);
  }
  return rc;
}

/* --version and --help answer before MPI starts, so they work without mpiexec. */
static int early_option(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--version")) {
      printf("tessera-servers-bench (Tessera) %s\n", tsr_inq_libvers());
      return 1;
    }
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (early_option(argc, argv)) return 0;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  char err[256] = "";
  if (parse(argc, argv, &o, err, sizeof err)) {
    if (rank == 0) {
      fprintf(stderr, "tessera-servers-bench: %s\n", err);
      usage();
    }
    MPI_Finalize();
    return 2;
  }
  /* rma, shm: strategy=servers with transport=rma|shm; conc: with
   * concentrators (only with --concentrators). */
  enum { NS = 8, RMA = 3, F64 = 4, F32 = 5, CONC = 6, SHM = 7, NT = 4, MAXREP = 64 };
  const char *names[NS] = {"servers", "serial", "direct", "rma", "f64", "f32", "conc", "shm"};
  result r[NS];
  int ok[NS] = {0}, failed = 0;
  int reps = o.repeat < 1 ? 1 : o.repeat > MAXREP ? MAXREP : o.repeat;
  /* Per run of each transport: blocked/memcpy and tsr_put/memcpy (medians
   * over frames), compute time. */
  double ratio[NT][MAXREP], putr[NT][MAXREP], comp[NT][MAXREP], wall[NT][MAXREP];
  double msgs[NT][MAXREP];
  int nrep[NT] = {0, 0, 0, 0};
  for (int rep = 0; rep < reps; rep++)
    for (int s = 0; s < NS; s++) {
      int transport = s == 0 ? 0 : s == RMA ? 1 : s == CONC ? 2 : s == SHM ? 3 : -1;
      if (o.only[0] && strcmp(o.only, names[s])) continue;
      if (s == CONC && !o.conc[0]) continue;
      if (transport < 0 && rep > 0) continue; /* serial, direct, f64, f32: once */
      int rc = run(&o, names[s], &r[s]);
      ok[s] = rc == 0;
      if (rc && rc != TSR_ENOTBUILT) failed = 1;
      if (rc && rank == 0)
        fprintf(stderr, "%s: %s (%s)\n", names[s], tsr_strerror(rc), tsr_last_error());
      if (ok[s] && transport >= 0 && r[s].med_memcpy > 0) {
        int k = nrep[transport]++;
        ratio[transport][k] = r[s].med_blocked / r[s].med_memcpy;
        putr[transport][k] = r[s].med_put / r[s].med_memcpy;
        comp[transport][k] = r[s].compute;
        wall[transport][k] = r[s].wall;
        msgs[transport][k] = r[s].msgs;
      }
    }
  if (rank == 0) {
    double mb = (double)(o.nx * o.ny * o.nz) * o.nvars * 4 / 1048576.0;
    printf("tessera-servers-bench: %d ranks, %lldx%lldx%lld x %d vars (%.1f MB per frame), "
           "%d steps, output every %d, servers %dx%d backend=%s\n",
           size, (long long)o.nx, (long long)o.ny, (long long)o.nz, o.nvars, mb, o.steps,
           o.every, o.groups, o.tasks, o.backend);
    printf("%-8s %5s %8s %9s %9s %8s %22s %22s\n", "strategy", "model", "wall_s",
           "compute_s", "blocked_s", "drain_s", "blocked/frame mean|med", "put/frame mean|med");
    for (int s = 0; s < NS; s++) {
      if (!ok[s]) continue;
      double fr = r[s].frames ? r[s].frames : 1;
      printf("%-8s %5d %8.3f %9.3f %9.4f %8.4f %10.3f |%7.3f ms %10.3f |%7.3f ms\n", names[s],
             r[s].model_ranks, r[s].wall, r[s].compute, r[s].blocked, r[s].drain,
             1e3 * r[s].blocked / fr, 1e3 * r[s].med_blocked, 1e3 * r[s].blocked_put / fr,
             1e3 * r[s].med_put);
    }
    if (ok[0] && r[0].frames) {
      double fr = r[0].frames, cp = r[0].memcpy_s / fr, mc = r[0].med_memcpy;
      printf("servers: memcpy of the same tile bytes per frame: mean %.3f ms, median %.3f ms\n",
             1e3 * cp, 1e3 * mc);
      printf("servers: blocked/memcpy per frame: mean %.2f, median %.2f (tsr_put alone: mean "
             "%.2f, median %.2f)\n",
             cp > 0 ? r[0].blocked / fr / cp : 0, mc > 0 ? r[0].med_blocked / mc : 0,
             cp > 0 ? r[0].blocked_put / fr / cp : 0, mc > 0 ? r[0].med_put / mc : 0);
    }
    /* Side by side: the transports over every run (median [min..max]). */
    for (int tr = 0; tr < NT; tr++) {
      int n = nrep[tr];
      if (!n) continue;
      double a[MAXREP], b[MAXREP], c[MAXREP], w[MAXREP], m[MAXREP];
      memcpy(a, ratio[tr], (size_t)n * sizeof *a);
      memcpy(b, putr[tr], (size_t)n * sizeof *b);
      memcpy(c, comp[tr], (size_t)n * sizeof *c);
      memcpy(w, wall[tr], (size_t)n * sizeof *w);
      memcpy(m, msgs[tr], (size_t)n * sizeof *m);
      double ma = median(a, n), mbm = median(b, n), mcm = median(c, n), mw = median(w, n);
      double mm = median(m, n);
      char label[64];
      snprintf(label, sizeof label, "%s",
               tr == 0   ? "transport=p2p"
               : tr == 1 ? "transport=rma"
               : tr == 3 ? "transport=shm"
                         : "concentrators=");
      if (tr == 2) snprintf(label, sizeof label, "concentrators=%s", o.conc);
      printf("%s: %d runs: blocked/memcpy per frame median %.2f [%.2f..%.2f], "
             "tsr_put/memcpy %.2f [%.2f..%.2f], compute_s %.3f [%.3f..%.3f], wall_s %.3f "
             "[%.3f..%.3f], messages received by the busiest server %.0f [%.0f..%.0f]\n",
             label, n, ma, a[0], a[n - 1], mbm, b[0], b[n - 1], mcm, c[0], c[n - 1], mw, w[0],
             w[n - 1], mm, m[0], m[n - 1]);
    }
    if (nrep[0] && nrep[2]) {
      double a[MAXREP], b[MAXREP], m0[MAXREP], m2[MAXREP], w0[MAXREP], w2[MAXREP];
      memcpy(a, ratio[0], (size_t)nrep[0] * sizeof *a);
      memcpy(b, ratio[2], (size_t)nrep[2] * sizeof *b);
      memcpy(m0, msgs[0], (size_t)nrep[0] * sizeof *m0);
      memcpy(m2, msgs[2], (size_t)nrep[2] * sizeof *m2);
      memcpy(w0, wall[0], (size_t)nrep[0] * sizeof *w0);
      memcpy(w2, wall[2], (size_t)nrep[2] * sizeof *w2);
      double mb0 = median(a, nrep[0]), mb2 = median(b, nrep[2]);
      double mm0 = median(m0, nrep[0]), mm2 = median(m2, nrep[2]);
      double mw0 = median(w0, nrep[0]), mw2 = median(w2, nrep[2]);
      printf("concentrators=%s vs none (medians): messages per server %.3f, blocked/frame %.2f, "
             "wall %.2f\n",
             o.conc, mm0 > 0 ? mm2 / mm0 : 0, mb0 > 0 ? mb2 / mb0 : 0, mw0 > 0 ? mw2 / mw0 : 0);
    }
    /* Bytes handed to the servers per frame, all model ranks together. */
    for (int s = 0; s < NS; s++)
      if (ok[s] && r[s].sent > 0 && r[s].frames)
        printf("%s: bytes handed to the servers per frame %.0f%s\n", names[s],
               r[s].sent / r[s].frames,
               s == F64 ? " (double memory, converted by the servers)"
               : s == F32 ? " (double memory, precision=float: converted before the hand-off)"
                          : "");
    if (ok[F64] && ok[F32] && r[F64].sent > 0)
      printf("precision=float: bytes moved f32/f64 = %.3f\n", r[F32].sent / r[F64].sent);
    if (ok[0] && ok[1]) printf("wall servers/serial = %.2f\n", r[0].wall / r[1].wall);
    if (ok[0] && ok[2]) printf("wall servers/direct = %.2f\n", r[0].wall / r[2].wall);
  }
  MPI_Finalize();
  return failed;
}
