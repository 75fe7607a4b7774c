/* tessera-define-bench: the cost of define mode with many variables.
 *
 *   mpiexec -n 2 tessera-define-bench [--counts 1000,10000,100000]
 *       [--hints strategy=serial:backend=null] [--dir /tmp] [--atts 2]
 *       [--limit-us 0]
 *
 * For each count N it creates a file, defines three dimensions and N record
 * variables (each with --atts attributes and a decomposition), ends define
 * mode and closes the file, and prints the slowest rank's time of each phase
 * and the define time per variable. Linear cost shows as a flat "us/var"
 * column; a quadratic one grows tenfold with each tenfold N. With --limit-us L
 * the exit status is 1 when the define time per variable of any count
 * exceeds L microseconds (the bound issue 25 asks for, checked by hand or by
 * CI on a quiet machine, never by a test on a shared one).
 *
 * The hints go to tsr_init (so strategy=servers works: the last ranks
 * serve). The default backend is null, so the figures are Tessera's own (schema,
 * define log, agreement, shipping); --hints backend=netcdf or pnetcdf adds
 * the library's define and header write. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera.h"

typedef struct {
  char counts[256], hints[512], dir[400];
  int atts;
  double limit_us;
} options;

typedef struct {
  double def_s, enddef_s, close_s;
} times;

static double slowest(MPI_Comm comm, double t) {
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

static int usage(const char *prog, int rank) {
  if (rank == 0)
    fprintf(stderr,
            "usage: %s [--counts N,N,...] [--hints H] [--dir D] [--atts K] [--limit-us L]\n",
            prog);
  return 2;
}

static int parse(int argc, char **argv, options *o, int rank) {
  static const struct option longs[] = {{"counts", required_argument, NULL, 'c'},
                                        {"hints", required_argument, NULL, 'h'},
                                        {"dir", required_argument, NULL, 'd'},
                                        {"atts", required_argument, NULL, 'a'},
                                        {"limit-us", required_argument, NULL, 'l'},
                                        {NULL, 0, NULL, 0}};
  snprintf(o->counts, sizeof o->counts, "1000,10000,100000");
  snprintf(o->hints, sizeof o->hints, "strategy=serial:backend=null");
  snprintf(o->dir, sizeof o->dir, "/tmp");
  o->atts = 2;
  o->limit_us = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
    switch (c) {
    case 'c': snprintf(o->counts, sizeof o->counts, "%s", optarg); break;
    case 'h': snprintf(o->hints, sizeof o->hints, "%s", optarg); break;
    case 'd': snprintf(o->dir, sizeof o->dir, "%s", optarg); break;
    case 'a': o->atts = atoi(optarg); break;
    case 'l': o->limit_us = atof(optarg); break;
    default: return usage(argv[0], rank);
    }
  }
  return optind == argc && o->atts >= 0 ? 0 : usage(argv[0], rank);
}

/* Fails the run with the library's own sentence. */
static int check(int rc, const char *call, int rank) {
  if (rc && rank == 0) fprintf(stderr, "tessera-define-bench: %s: %s: %s\n", call,
                               tsr_errname(rc), tsr_last_error());
  return rc;
}

static void file_path(char *path, size_t cap, const options *o, long n) {
  snprintf(path, cap, "%s/tessera-define-bench-%ld.nc", o->dir, n);
}

/* One file with @p n variables; the phases' times on this rank. */
static int define_file(tsr_ctx *ctx, const options *o, const tsr_decomp *d, int n, int rank,
                       times *t) {
  char path[512];
  file_path(path, sizeof path, o, n);
  tsr_file *f = NULL;
  int rc = check(tsr_create(ctx, path, NULL, &f), "tsr_create", rank);
  if (rc) return rc;
  double t0 = MPI_Wtime();
  int dims[3];
  rc = tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]);
  if (!rc) rc = tsr_def_dim(f, "south_north", 4, &dims[1]);
  if (!rc) rc = tsr_def_dim(f, "west_east", 4, &dims[2]);
  for (int v = 0; v < n && !rc; v++) {
    char name[32];
    int id;
    snprintf(name, sizeof name, "V%07d", v);
    rc = tsr_def_var(f, name, TSR_FLOAT, 3, dims, &id);
    for (int a = 0; a < o->atts && !rc; a++) {
      char att[32];
      float value = (float)a;
      snprintf(att, sizeof att, "att%d", a);
      rc = tsr_put_att(f, id, att, TSR_FLOAT, 1, &value);
    }
    if (!rc) rc = tsr_def_var_decomp(f, id, d);
  }
  t->def_s = MPI_Wtime() - t0;
  if (check(rc, "define", rank)) {
    tsr_abort(&f);
    return rc;
  }
  t0 = MPI_Wtime();
  rc = check(tsr_enddef(f), "tsr_enddef", rank);
  t->enddef_s = MPI_Wtime() - t0;
  /* split leaves a piece per rank beside the path (strategy/split.c). */
  int split = strcmp(tsr_file_strategy(f), "split") == 0;
  t0 = MPI_Wtime();
  int crc = check(tsr_close(&f), "tsr_close", rank);
  t->close_s = MPI_Wtime() - t0;
  if (split) {
    char piece[600];
    snprintf(piece, sizeof piece, "%s.%04d", path, rank);
    unlink(piece);
  }
  return rc ? rc : crc;
}

/* --version and --help answer before MPI starts, so they work without mpiexec. */
static int early_option(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--version")) {
      printf("tessera-define-bench (Tessera) %s\n", tsr_inq_libvers());
      return 1;
    }
    if (!strcmp(argv[i], "--help")) {
      printf("usage: tessera-define-bench [--counts N,N,...] [--hints H] [--dir D] [--atts K]\n"
             "       [--limit-us L] [--version] [--help]\n"
             "The cost of define mode with many variables: per count N, a file with N\n"
             "record variables defined, ended and closed; the slowest rank's time per phase.\n");
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
  int rc = parse(argc, argv, &o, rank);
  if (rc) {
    MPI_Finalize();
    return rc;
  }
  /* The hints go to tsr_init, so that strategy=servers can take its ranks. */
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  if (check(tsr_init(MPI_COMM_WORLD, o.hints, &ctx, &model), "tsr_init", rank)) {
    MPI_Finalize();
    return 1;
  }
  if (model == MPI_COMM_NULL) { /* an I/O server: it served until the model finished */
    MPI_Finalize();
    return 0;
  }
  MPI_Comm_rank(model, &rank);
  MPI_Comm_size(model, &size);
  /* Every rank a strip of rows of the 4 x 4 field (some may hold none). */
  int64_t gsize[2] = {4, 4}, start[2], count[2] = {0, 4};
  start[0] = 4 * rank / size;
  count[0] = 4 * (rank + 1) / size - start[0];
  start[1] = 0;
  tsr_decomp *d = NULL;
  rc = check(tsr_decomp_box(ctx, 2, gsize, start, count, NULL, NULL, &d), "tsr_decomp_box", rank);
  if (rank == 0 && !rc)
    printf("hints %s, %d model ranks, %d attributes per variable; slowest rank's seconds\n"
           "%9s %10s %10s %10s %10s\n",
           o.hints, size, o.atts, "variables", "define", "enddef", "close", "define us/var");
  int over = 0;
  for (char *s = o.counts; !rc && *s;) {
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || n < 1) {
      rc = usage(argv[0], rank);
      break;
    }
    times t = {0, 0, 0};
    rc = define_file(ctx, &o, d, (int)n, rank, &t);
    double def = slowest(model, t.def_s), enddef = slowest(model, t.enddef_s),
           close = slowest(model, t.close_s);
    double per = 1e6 * def / (double)n;
    if (!rc && rank == 0)
      printf("%9ld %10.3f %10.3f %10.3f %10.2f\n", n, def, enddef, close, per);
    if (o.limit_us > 0 && per > o.limit_us) over = 1;
    s = *end == ',' ? end + 1 : end;
  }
  tsr_decomp_free(&d);
  tsr_finalize(&ctx);
  /* After tsr_finalize: I/O servers may still be writing before it. */
  for (char *s = o.counts; rank == 0 && *s;) {
    char *end, path[512];
    long n = strtol(s, &end, 10);
    if (end == s) break;
    file_path(path, sizeof path, &o, n);
    unlink(path);
    s = *end == ',' ? end + 1 : end;
  }
  MPI_Comm_free(&model);
  MPI_Finalize();
  if (rc) return 1;
  if (over && rank == 0)
    fprintf(stderr, "tessera-define-bench: define time per variable above --limit-us %g\n",
            o.limit_us);
  return over;
}
