#define _POSIX_C_SOURCE 200809L
/* Statistics and hint pass-through, checked against runs whose requests are
 * known in advance (docs/statistics.md):
 *
 *   serial    slab_bytes=4k, a 16 KiB variable -> 4 requests of 4096 bytes
 *             per frame, one writer, slabs back to back in the file
 *   direct    one request per rank per variable and frame, every rank writes
 *   aggregate aggregators=N -> N writers, N requests per variable and frame
 *   split     one request per rank per variable and frame
 *   env       TESSERA_HINTS alone changes aggregators and cb_nodes
 *
 * Scenarios serial, direct (with the pass-through and TESSERA_HINTS runs),
 * aggregate (with its TESSERA_HINTS run) and split; direct and aggregate are
 * skipped when not built. `all` runs the four in one process into one file:
 * tests/python/test_stats_c.py runs it so, validating the lines against
 * docs/stats.schema.json.
 *
 * Arguments after the scenario: SCRATCH [STATS_FILE]; the JSON lines go to
 * STATS_FILE (default SCRATCH/stats.<scenario>.np<N>.jsonl) and rank 0 reads
 * back those of its scenario and checks the counters. The pass-through is
 * also checked white-box: the MPI_Info the pnetcdf backend's file_info
 * reports for a file created with MPI-IO hints. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/hints.h"
#include "core/mpiio_taken.h"
#include "core/schema.h"
#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NT = 2, NZ = 8, NY = 16, NX = 32, VAR_BYTES = NZ * NY * NX * 4 };

static int nranks;
static char scratch[512], stats_path[600];
/* Lines of the stats file that earlier scenarios of this process wrote. */
static int lines_before;

/* ---- writing one file ---- */

static int write_file(tsr_ctx *ctx, tsr_decomp *d, const char *name, const char *hints,
                      const float *buf) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s.np%d.nc", scratch, name, nranks);
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc == TSR_ENOTBUILT) return rc; /* the scenario skips */
  TSR_CHECK_RC(rc, 0);
  if (rc) return rc;
  int dims[4], v;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
  TSR_CHECK_OK(tsr_def_dim(f, "bottom_top", NZ, &dims[1]));
  TSR_CHECK_OK(tsr_def_dim(f, "south_north", NY, &dims[2]));
  TSR_CHECK_OK(tsr_def_dim(f, "west_east", NX, &dims[3]));
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 4, dims, &v));
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  TSR_CHECK_OK(tsr_enddef(f));
  for (int t = 0; t < NT; t++) TSR_CHECK_OK(tsr_put(f, v, t, d, buf));
  rc = tsr_close(&f);
  TSR_CHECK_RC(rc, 0);
  return rc;
}

/* ---- reading the records back (rank 0) ---- */

/* The number after "key": in line, or -1 when absent / not a number. */
static long long field(const char *line, const char *key) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(line, pat);
  if (!p) return -1;
  p += strlen(pat);
  if (*p < '0' || *p > '9') return -1;
  return strtoll(p, NULL, 10);
}

static int has(const char *line, const char *text) { return strstr(line, text) != NULL; }

/* A number or a text in record @p rec (its index in the file, for messages). */
#define FIELD_EQ(line, key, want) TSR_CHECK_EQ_INT(field(line, key), want)
#define HAS(line, text) TSR_CHECKF(has(line, text), "record %d lacks %s", rec, text)

static void check_common(const char *l, int rec, const char *strategy) {
  char s[64];
  snprintf(s, sizeof s, "\"strategy\": \"%s\"", strategy);
  HAS(l, s);
  HAS(l, "\"tessera_stats\": 1");
  FIELD_EQ(l, "model_ranks", nranks);
  FIELD_EQ(l, "bytes", (long long)NT * VAR_BYTES);
  FIELD_EQ(l, "frames", NT);
  FIELD_EQ(l, "variables", 1);
  FIELD_EQ(l, "TSR_BYTES_WRITTEN", (long long)NT * VAR_BYTES);
  HAS(l, "\"blocked_s\": {\"min\": ");
  TSR_CHECKF(l[strlen(l) - 1] == '\n', "record %d is cut short", rec);
}

/* Darshan's bucket of a request of @p bytes (the sizes used here). */
static const char *bucket_key(long long bytes) {
  if (bytes < 10240) return "TSR_SIZE_WRITE_1K_10K";
  if (bytes < 102400) return "TSR_SIZE_WRITE_10K_100K";
  return "TSR_SIZE_WRITE_100K_1M";
}

static int aggregators(void) { return nranks >= 4 ? 4 : nranks >= 2 ? 2 : 1; }

/* What one tsr_create..tsr_close run of this program writes. */
typedef enum { R_SERIAL, R_DIRECT, R_AGGREGATE, R_AGGREGATE_ENV, R_DIRECT_ENV, R_SPLIT } run_id;
static const char *const RUN_NAME[] = {"serial",        "direct",     "aggregate",
                                       "aggregate_env", "direct_env", "split"};

static void check_record(run_id run, const char *l, int rec) {
  tsr_test_case("record %d (%s)", rec, RUN_NAME[run]);
  switch (run) {
  case R_SERIAL: /* slab_bytes=4k */
    check_common(l, rec, "serial");
    FIELD_EQ(l, "writers", 1);
    HAS(l, "\"writer_ranks\": [0]");
    FIELD_EQ(l, "TSR_WRITES", NT * (VAR_BYTES / 4096));
    FIELD_EQ(l, "TSR_SIZE_WRITE_1K_10K", NT * (VAR_BYTES / 4096));
    FIELD_EQ(l, "TSR_WRITES_WITH_OFFSET", 0); /* serial NetCDF reports no offsets */
    FIELD_EQ(l, "TSR_CONSEC_WRITES", 0);
    FIELD_EQ(l, "rearranged_bytes", (long long)NT * (NY - NY / nranks) * NZ * NX * 4);
    break;
  case R_DIRECT:
    check_common(l, rec, "direct");
    FIELD_EQ(l, "writers", nranks);
    FIELD_EQ(l, "TSR_WRITES", NT * nranks);
    FIELD_EQ(l, "rearranged_bytes", 0);
    break;
  case R_AGGREGATE: /* aggregators=N from tsr_create */
    check_common(l, rec, "aggregate");
    FIELD_EQ(l, "writers", aggregators());
    FIELD_EQ(l, "TSR_WRITES", NT * aggregators());
    FIELD_EQ(l, bucket_key(VAR_BYTES / aggregators()), NT * aggregators());
    break;
  case R_AGGREGATE_ENV: /* TESSERA_HINTS=aggregators=1 over tsr_create's N */
    check_common(l, rec, "aggregate");
    FIELD_EQ(l, "writers", 1);
    FIELD_EQ(l, "TSR_WRITES", NT);
    FIELD_EQ(l, "TSR_SIZE_WRITE_10K_100K", NT);
    /* One writer writes through the serial backend (aggregate.c, a_want),
     * which, as for strategy=serial, knows no file offsets to count. */
    FIELD_EQ(l, "TSR_WRITES_WITH_OFFSET", 0);
    FIELD_EQ(l, "TSR_CONSEC_WRITES", 0);
    break;
  case R_DIRECT_ENV: /* TESSERA_HINTS passes cb_nodes=1 to MPI-IO */
    check_common(l, rec, "direct");
    FIELD_EQ(l, "mpiio_cb_nodes", 1);
    FIELD_EQ(l, "cb_buffer_size", 8 << 20);
    FIELD_EQ(l, "stripe_size", 65536);
    FIELD_EQ(l, "TSR_FILE_ALIGNMENT", 65536);
    HAS(l, "cb_nodes=1");
    break;
  case R_SPLIT:
    check_common(l, rec, "split");
    FIELD_EQ(l, "writers", nranks);
    FIELD_EQ(l, "TSR_WRITES", NT * nranks);
    break;
  }
  tsr_test_case("%s", "");
}

/* Rank 0: the records after the first lines_before are those of runs[]. */
static void check_records(const run_id *runs, int n) {
  FILE *fp = fopen(stats_path, "r");
  TSR_CHECKF(fp != NULL, "cannot open %s", stats_path);
  if (!fp) return;
  char line[8192];
  int rec = 0;
  while (fgets(line, sizeof line, fp)) {
    if (rec >= lines_before && rec - lines_before < n) check_record(runs[rec - lines_before], line, rec);
    rec++;
  }
  fclose(fp);
  TSR_CHECK_EQ_INT(rec - lines_before, n);
}

/* ---- the pnetcdf backend reports the MPI-IO hints back (white-box) ---- */

static void check_passthrough(void) {
  const tsr__backend_ops *ops = NULL;
  TSR_CHECK_EQ_INT(tsr__backend_find("pnetcdf", &ops), 0);
  if (!ops || !ops->file_info) {
    TSR_CHECK(ops && ops->file_info);
    return;
  }
  tsr__hints h;
  tsr__hints_defaults(&h);
  char err[256] = "";
  TSR_CHECK_EQ_INT(tsr__hints_parse("strategy=direct:romio_cb_write=enable:cb_nodes=1:cb_buffer_size=8m",
                         "x.nc", &h, err, sizeof err),
        0);
  tsr__schema s;
  tsr__schema_init(&s);
  s.format = 2;
  int dim, var;
  TSR_CHECK_EQ_INT(tsr__schema_add_dim(&s, "x", 8, &dim), 0);
  TSR_CHECK_EQ_INT(tsr__schema_add_var(&s, "v", TSR_FLOAT, 1, &dim, &var), 0);
  char path[700];
  snprintf(path, sizeof path, "%s/passthrough.np%d.nc", scratch, nranks);
  tsr__bfile *bf = NULL;
  tsr__berr berr = {0};
  int rc = ops->create(MPI_COMM_WORLD, path, &s, &h, &bf, &berr);
  TSR_CHECK_EQ_INT(rc, 0);
  if (!rc) {
    MPI_Info info = ops->file_info(bf);
    TSR_CHECK(info != MPI_INFO_NULL);
    const char *keys[][2] = {
        {"romio_cb_write", "enable"}, {"cb_nodes", "1"}, {"cb_buffer_size", "8388608"}};
    for (size_t k = 0; info != MPI_INFO_NULL && k < sizeof keys / sizeof keys[0]; k++) {
      char val[256] = "";
      int flag = 0;
      MPI_Info_get(info, keys[k][0], (int)sizeof val - 1, val, &flag);
      TSR_CHECKF(flag && strcmp(val, keys[k][1]) == 0, "MPI_Info %s = '%s' (set: %d), expected '%s'",
                 keys[k][0], val, flag, keys[k][1]);
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    TSR_CHECK_EQ_INT(ops->close(bf, &berr), 0);
  }
  tsr__schema_free(&s);
}

/* Hints the MPI-IO layer did not take (core/mpiio_taken.c): a value held
 * differently, or not held, is named; sizes compare by value (1m = 1048576)
 * and words without case (ENABLE = enable). */
static void check_not_taken(void) {
  tsr__hints h;
  tsr__hints_defaults(&h);
  char err[256] = "";
  TSR_CHECK_EQ_INT(tsr__hints_parse("cb_buffer_size=1m:romio_cb_write=ENABLE:striping_factor=8:"
                                    "cb_nodes=4:romio_ds_write=disable",
                                    "x.nc", &h, err, sizeof err),
                   0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", "1048576");
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "cb_nodes", "1"); /* striping_factor and romio_ds_write: not held */
  tsr__sbuf why = {0};
  uint32_t mask = tsr__mpiio_not_taken(&h, info, &why);
  tsr_test_case("%s", "not taken: the mask");
  TSR_CHECK_EQ_INT((int)mask, (1 << 2) | (1 << 3) | (1 << 4));
  tsr_test_case("%s", "not taken: what each holds");
  TSR_CHECK_EQ_STR(why.s ? why.s : "", "striping_factor=8 (holds nothing), cb_nodes=4 (holds 1), "
                                       "romio_ds_write=disable (holds nothing)");
  tsr__sbuf list = {0};
  tsr__mpiio_not_taken_list(&h, mask, &list);
  tsr_test_case("%s", "not taken: the list every rank can print");
  TSR_CHECK_EQ_STR(list.s ? list.s : "", "striping_factor=8, cb_nodes=4, romio_ds_write=disable");
  tsr_test_case("%s", "no info: nothing to say");
  TSR_CHECK_EQ_INT((int)tsr__mpiio_not_taken(&h, MPI_INFO_NULL, NULL), 0);
  free(why.s);
  free(list.s);
  MPI_Info_free(&info);
}

/* The stats file of this process: named once, before the library reads the
 * environment (once, at the first file), and emptied. */
static void stats_file_once(void) {
  static int done;
  if (done) return;
  done = 1;
  nranks = tsr_test_nranks();
  snprintf(scratch, sizeof scratch, "%s", tsr_test_arg(0, "."));
  if (tsr_test_arg(1, NULL))
    snprintf(stats_path, sizeof stats_path, "%s", tsr_test_arg(1, NULL));
  else
    snprintf(stats_path, sizeof stats_path, "%s/stats.%s.np%d.jsonl", scratch, tsr_test_.scenario,
             nranks);
  setenv("TESSERA_STATS_FILE", stats_path, 1);
  unsetenv("TESSERA_HINTS");
  if (tsr_test_rank() == 0) unlink(stats_path);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* One scenario: a context, rows of y split over the ranks, the runs of
 * @p strategy, then rank 0 checks their records. */
static void run_scenario(const char *strategy) {
  stats_file_once();
  tsr_ctx *ctx = NULL;
  MPI_Comm mcomm = MPI_COMM_NULL;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &mcomm));
  int64_t gsize[3] = {NZ, NY, NX}, start[3] = {0, 0, 0}, count[3] = {NZ, 0, NX};
  tsr_test_split1(NY, nranks, tsr_test_rank(), &start[1], &count[1]);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 3, gsize, start, count, NULL, NULL, &d));
  float *buf = calloc((size_t)(NZ * NX * (count[1] ? count[1] : 1)), sizeof(float));
  run_id runs[3];
  int n = 0, rc = 0;
  char hints[128];
  if (strcmp(strategy, "serial") == 0) {
    write_file(ctx, d, "serial", "strategy=serial:slab_bytes=4k", buf);
    runs[n++] = R_SERIAL;
  } else if (strcmp(strategy, "direct") == 0) {
    rc = write_file(ctx, d, "direct", "strategy=direct", buf);
    if (rc != TSR_ENOTBUILT) {
      runs[n++] = R_DIRECT;
      check_passthrough();
      check_not_taken();
      setenv("TESSERA_HINTS",
             "cb_nodes=1:romio_cb_write=enable:cb_buffer_size=8m:striping_unit=64k", 1);
      write_file(ctx, d, "direct_env", "strategy=direct", buf);
      unsetenv("TESSERA_HINTS");
      runs[n++] = R_DIRECT_ENV;
    }
  } else if (strcmp(strategy, "aggregate") == 0) {
    snprintf(hints, sizeof hints, "strategy=aggregate:aggregators=%d", aggregators());
    rc = write_file(ctx, d, "aggregate", hints, buf);
    if (rc != TSR_ENOTBUILT) {
      runs[n++] = R_AGGREGATE;
      setenv("TESSERA_HINTS", "aggregators=1", 1);
      write_file(ctx, d, "aggregate_env", hints, buf);
      unsetenv("TESSERA_HINTS");
      runs[n++] = R_AGGREGATE_ENV;
    }
  } else {
    write_file(ctx, d, "split", "strategy=split", buf);
    runs[n++] = R_SPLIT;
  }
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx));
  if (mcomm != MPI_COMM_NULL) MPI_Comm_free(&mcomm);
  free(buf);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("strategy %s is not built into this library", strategy);
    return;
  }
  if (tsr_test_rank() == 0) check_records(runs, n);
  lines_before += n;
}

static void serial(void) { run_scenario("serial"); }
static void direct(void) { run_scenario("direct"); }
static void aggregate(void) { run_scenario("aggregate"); }
static void split(void) { run_scenario("split"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"serial", serial, 0}, {"direct", direct, 0}, {"aggregate", aggregate, 0}, {"split", split, 0},
};

int main(int argc, char **argv) {
  /* The form before scenarios, `test_stats SCRATCH [STATS_FILE]`, as
   * tests/python/test_stats_c.py still calls it: the same as `all`. */
  char all[] = "all";
  char *args[5] = {argv[0], all, argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL, NULL};
  if (argc > 1 && argc <= 3 && strchr(argv[1], '/') != NULL)
    return tsr_test_main(argc + 1, args, "stats", SCENARIOS, 4);
  return tsr_test_main(argc, argv, "stats", SCENARIOS, (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
