/* strategy=servers: what the servers report and how frames_per_outfile
 * spreads a stream over the groups. With TESSERA_STATS_FILE set, every file
 * closed through the servers gets a JSON record whose writer side comes from
 * the servers' close notes: writers_on io_servers, the servers that wrote it
 * (their ranks), non-zero writer time, requests and bytes.
 *
 * - "fpo": io_groups=2, io_tasks=1, netcdf: stream X is six one-frame files
 *   with frames_per_outfile=2, so groups take them 0,0,1,1,0,0; stream Y is
 *   three two-frame files with frames_per_outfile=2, so each file moves on.
 *   The group of each file is read from its record's writer ranks; every
 *   file is read back and checked value by value.
 * - "streams": the same layout, WRF-like names of three domains written in
 *   turn, one frame per file, frames_per_outfile=2: d01, d02, d03 are three
 *   streams (digits after a letter count) and the dates are not, so each
 *   domain's first two files stay where its first went: groups 0,1,0 0,1,0
 *   1,0,1 (plain round-robin would give 0,1,0 1,0,1 ..., one stream
 *   0,0,1 1,0,0 ...).
 * - "parallel" (4+ ranks): io_groups=1, io_tasks=2, pnetcdf: both servers of
 *   the group write the file and both appear in the record; the file
 *   appears under its name only when the servers closed it. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>
#include <unistd.h>

#include "srv_fields.h"

#define MAXREC 64
typedef struct {
  char file[512];
  int writers, io_ranks, nranks, ranks[8], on_servers;
  double writer_max;
  long long writes, bytes_written;
} record;

/* The few fields checked, from one JSON line of the statistics file. */
static int parse_record(const char *line, record *r) {
  memset(r, 0, sizeof *r);
  const char *p = strstr(line, "\"file\": \"");
  if (!p || sscanf(p, "\"file\": \"%511[^\"]\"", r->file) != 1) return 0;
  if ((p = strstr(line, "\"io_ranks\": "))) sscanf(p, "\"io_ranks\": %d", &r->io_ranks);
  if ((p = strstr(line, "\"writers\": "))) sscanf(p, "\"writers\": %d", &r->writers);
  if ((p = strstr(line, "\"writer_ranks\": ["))) {
    p += strlen("\"writer_ranks\": [");
    int n, off;
    while (r->nranks < 8 && sscanf(p, "%d%n", &n, &off) == 1) {
      r->ranks[r->nranks++] = n;
      p += off;
      if (*p == ',') p++;
    }
  }
  r->on_servers = strstr(line, "\"writers_on\": \"io_servers\"") != NULL;
  if ((p = strstr(line, "\"writer_s\": {\"min\": ")))
    sscanf(p, "\"writer_s\": {\"min\": %*f, \"max\": %lf", &r->writer_max);
  if ((p = strstr(line, "\"TSR_WRITES\": "))) sscanf(p, "\"TSR_WRITES\": %lld", &r->writes);
  if ((p = strstr(line, "\"TSR_BYTES_WRITTEN\": ")))
    sscanf(p, "\"TSR_BYTES_WRITTEN\": %lld", &r->bytes_written);
  return 1;
}

static int read_records(const char *path, record *recs) {
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  char line[8192];
  int n = 0;
  while (n < MAXREC && fgets(line, sizeof line, fp))
    if (parse_record(line, &recs[n])) n++;
  fclose(fp);
  return n;
}

static const record *find_record(const record *recs, int n, const char *file) {
  for (int i = 0; i < n; i++)
    if (strcmp(recs[i].file, file) == 0) return &recs[i];
  fprintf(stderr, "no statistics record for %s\n", file);
  return NULL;
}

/* The writer side of a record says: these servers wrote it, for real. */
static void check_writer_side(const record *r, int io_ranks, int writers, int first_rank) {
  if (!r) {
    TU_EQ(0, 1);
    return;
  }
  TU_EQ(r->on_servers, 1);
  TU_EQ(r->io_ranks, io_ranks);
  TU_EQ(r->writers, writers);
  TU_EQ(r->nranks, writers);
  for (int i = 0; i < r->nranks; i++) TU_EQ(r->ranks[i], first_rank + i);
  TU_EQ(r->writer_max > 0, 1);
  TU_EQ(r->writes > 0, 1);
  TU_EQ(r->bytes_written > 0, 1);
}

static void run_fpo(const char *dir, const char *stats, int np) {
  const int G = 2, M = np - G;
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TU_OK(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=2:io_tasks=1", &ctx, &model));
  if (model == MPI_COMM_NULL) return; /* a server: served until the model finalized */
  decomps D;
  TU_OK(make_decomps(ctx, model, K_EVEN, &D));
  const char *hints = "backend=netcdf:frames_per_outfile=2";
  char xs[6][512], ys[3][512];
  for (int k = 0; k < 6; k++) { /* stream X: one frame per file */
    wfile w;
    snprintf(xs[k], sizeof xs[k], "%s/fpo_np%d_X_%04d.nc", dir, np, k);
    TU_OK(open_file(ctx, xs[k], hints, &D, k, &w));
    TU_OK(put_frame(&w, &D, 0));
    TU_OK(tsr_close(&w.f));
  }
  for (int k = 0; k < 3; k++) { /* stream Y: two frames per file */
    wfile w;
    snprintf(ys[k], sizeof ys[k], "%s/fpo_np%d_Y_%04d.nc", dir, np, k);
    TU_OK(open_file(ctx, ys[k], hints, &D, 10 + 2 * k, &w));
    TU_OK(put_frame(&w, &D, 0));
    TU_OK(put_frame(&w, &D, 1));
    TU_OK(tsr_close(&w.f));
  }
  free_decomps(&D);
  TU_OK(tsr_finalize(&ctx));
  if (D.rank == 0) {
    record recs[MAXREC];
    int n = read_records(stats, recs);
    /* X: two files per group; Y: each file on the next group after the
     * last one used (X's last was group 0). */
    static const int xgroup[6] = {0, 0, 1, 1, 0, 0}, ygroup[3] = {1, 0, 1};
    for (int k = 0; k < 6; k++) {
      check_writer_side(find_record(recs, n, xs[k]), G, 1, M + xgroup[k]);
      verify(xs[k], NULL, 1, k, K_EVEN, xs[k]);
    }
    for (int k = 0; k < 3; k++) {
      check_writer_side(find_record(recs, n, ys[k]), G, 1, M + ygroup[k]);
      verify(ys[k], NULL, 2, 10 + 2 * k, K_EVEN, ys[k]);
    }
  }
  MPI_Comm_free(&model);
}

static void run_streams(const char *dir, const char *stats, int np) {
  const int G = 2, M = np - G, NF = 9;
  static const int group[9] = {0, 1, 0, 0, 1, 0, 1, 0, 1};
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TU_OK(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=2:io_tasks=1", &ctx, &model));
  if (model == MPI_COMM_NULL) return;
  decomps D;
  TU_OK(make_decomps(ctx, model, K_HOLES, &D));
  char paths[9][512];
  for (int k = 0; k < NF; k++) { /* d01 t0, d02 t0, d03 t0, d01 t1, ... */
    wfile w;
    snprintf(paths[k], sizeof paths[k], "%s/wrfout_np%d_d%02d_2026-01-01_%02d:00:00", dir, np,
             1 + k % 3, k / 3);
    TU_OK(open_file(ctx, paths[k], "backend=netcdf:frames_per_outfile=2", &D, k, &w));
    TU_OK(put_frame(&w, &D, 0));
    TU_OK(tsr_close(&w.f));
  }
  free_decomps(&D);
  TU_OK(tsr_finalize(&ctx));
  if (D.rank == 0) {
    record recs[MAXREC];
    int n = read_records(stats, recs);
    for (int k = 0; k < NF; k++) {
      check_writer_side(find_record(recs, n, paths[k]), G, 1, M + group[k]);
      verify(paths[k], NULL, 1, k, K_HOLES, paths[k]);
    }
  }
  MPI_Comm_free(&model);
}

static void run_parallel(const char *dir, const char *stats, int np) {
  const int T = 2, M = np - T;
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TU_OK(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=1:io_tasks=2", &ctx, &model));
  if (model == MPI_COMM_NULL) return;
  decomps D;
  TU_OK(make_decomps(ctx, model, K_UNEVEN, &D));
  char path[512], tmp[600];
  snprintf(path, sizeof path, "%s/par_%s_np%d.nc", dir, kind_name[K_UNEVEN], np);
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", path);
  if (D.rank == 0) unlink(path); /* left by an earlier run */
  MPI_Barrier(model);
  wfile w;
  int rc = open_file(ctx, path, "backend=pnetcdf", &D, 0, &w);
  if (rc != TSR_ENOTBUILT) { /* pnetcdf not built: the same answer everywhere */
    TU_OK(rc);
    TU_OK(put_frame(&w, &D, 0));
    TU_OK(tsr_flush(w.f));
    /* Written but open on the servers: only the temporary exists. */
    if (D.rank == 0) {
      TU_EQ(access(path, F_OK) == 0, 0);
      TU_EQ(access(tmp, F_OK) == 0, 1);
    }
    /* With statistics on, the close waits for the servers' notes: the file
     * is in place when it returns. */
    TU_OK(tsr_close(&w.f));
    if (D.rank == 0) {
      TU_EQ(access(path, F_OK) == 0, 1);
      TU_EQ(access(tmp, F_OK) == 0, 0);
    }
  }
  free_decomps(&D);
  TU_OK(tsr_finalize(&ctx));
  if (D.rank == 0 && rc != TSR_ENOTBUILT) {
    record recs[MAXREC];
    int n = read_records(stats, recs);
    check_writer_side(find_record(recs, n, path), T, T, M);
    verify(path, NULL, 1, 0, K_UNEVEN, path);
  }
  MPI_Comm_free(&model);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *scenario = argc > 2 ? argv[2] : "fpo";
  char stats[600];
  int np;
  tu_init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  snprintf(stats, sizeof stats, "%s/servers_stats_%s_np%d.jsonl", dir, scenario, np);
  /* Read once per process, at the first statistics: set before any file. */
  setenv("TESSERA_STATS_FILE", stats, 1);
  if (tu_rank == 0) unlink(stats);
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(scenario, "fpo") == 0 && np >= 3) run_fpo(dir, stats, np);
  else if (strcmp(scenario, "streams") == 0 && np >= 3) run_streams(dir, stats, np);
  else if (strcmp(scenario, "parallel") == 0 && np >= 4) run_parallel(dir, stats, np);
  else if (tu_rank == 0) fprintf(stderr, "scenario %s needs more ranks\n", scenario);
  MPI_Barrier(MPI_COMM_WORLD);
  return tu_finish(scenario);
}
