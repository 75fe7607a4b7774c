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
 * The JSON lines go to argv[2] (default SCRATCH/stats.np<N>.jsonl); rank 0
 * reads them back and checks the counters. tests/python/test_stats_c.py runs
 * this program too and validates the lines against docs/stats.schema.json.
 * The pass-through is also checked white-box: the MPI_Info the pnetcdf
 * backend's file_info reports for a file created with MPI-IO hints. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../c/test_util.h"
#include "backend/backend.h"
#include "core/hints.h"
#include "core/schema.h"

enum { NT = 2, NZ = 8, NY = 16, NX = 32, VAR_BYTES = NZ * NY * NX * 4 };

static int nranks;
static char scratch[512], stats_path[600];

/* ---- writing one file ---- */

static int write_file(tsr_ctx *ctx, tsr_decomp *d, const char *name, const char *hints,
                      const float *buf) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s.np%d.nc", scratch, name, nranks);
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  TU_EQ(rc, 0);
  if (rc) return rc;
  int dims[4], v;
  TU_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dims[0]));
  TU_OK(tsr_def_dim(f, "bottom_top", NZ, &dims[1]));
  TU_OK(tsr_def_dim(f, "south_north", NY, &dims[2]));
  TU_OK(tsr_def_dim(f, "west_east", NX, &dims[3]));
  TU_OK(tsr_def_var(f, "T", TSR_FLOAT, 4, dims, &v));
  TU_OK(tsr_def_var_decomp(f, v, d));
  TU_OK(tsr_enddef(f));
  for (int t = 0; t < NT; t++) TU_OK(tsr_put(f, v, t, d, buf));
  rc = tsr_close(&f);
  TU_EQ(rc, 0);
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

#define FIELD_EQ(line, key, want)                                                       \
  do {                                                                                  \
    long long got_ = field(line, key), want_ = (long long)(want);                       \
    if (got_ == want_) tu_pass++;                                                       \
    else {                                                                              \
      tu_fail++;                                                                        \
      fprintf(stderr, "test_stats.c:%d: record %d: %s = %lld, expected %lld\n", __LINE__, \
              rec, key, got_, want_);                                                   \
    }                                                                                   \
  } while (0)
#define HAS(line, text)                                                                      \
  do {                                                                                       \
    if (has(line, text)) tu_pass++;                                                          \
    else {                                                                                   \
      tu_fail++;                                                                             \
      fprintf(stderr, "test_stats.c:%d: record %d lacks %s\n", __LINE__, rec, text);         \
    }                                                                                        \
  } while (0)

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
  if (l[strlen(l) - 1] == '\n') tu_pass++;
  else tu_fail++;
}

/* Darshan's bucket of a request of @p bytes (the sizes used here). */
static const char *bucket_key(long long bytes) {
  if (bytes < 10240) return "TSR_SIZE_WRITE_1K_10K";
  if (bytes < 102400) return "TSR_SIZE_WRITE_10K_100K";
  return "TSR_SIZE_WRITE_100K_1M";
}

static int aggregators(void) { return nranks >= 4 ? 4 : nranks >= 2 ? 2 : 1; }

static void check_records(int expect) {
  FILE *fp = fopen(stats_path, "r");
  TU_EQ(fp != NULL, 1);
  if (!fp) return;
  char line[8192];
  int rec = 0;
  while (fgets(line, sizeof line, fp)) {
    const char *l = line;
    switch (rec) {
    case 0: /* serial, slab_bytes=4k */
      check_common(l, rec, "serial");
      FIELD_EQ(l, "writers", 1);
      HAS(l, "\"writer_ranks\": [0]");
      FIELD_EQ(l, "TSR_WRITES", NT * (VAR_BYTES / 4096));
      FIELD_EQ(l, "TSR_SIZE_WRITE_1K_10K", NT * (VAR_BYTES / 4096));
      FIELD_EQ(l, "TSR_WRITES_WITH_OFFSET", 0); /* serial NetCDF reports no offsets */
      FIELD_EQ(l, "TSR_CONSEC_WRITES", 0);
      FIELD_EQ(l, "rearranged_bytes", (long long)NT * (NY - NY / nranks) * NZ * NX * 4);
      break;
#ifdef TESSERA_HAVE_PNETCDF
    case 1: /* direct */
      check_common(l, rec, "direct");
      FIELD_EQ(l, "writers", nranks);
      FIELD_EQ(l, "TSR_WRITES", NT * nranks);
      FIELD_EQ(l, "rearranged_bytes", 0);
      break;
    case 2: /* aggregate, aggregators=N from tsr_create */
      check_common(l, rec, "aggregate");
      FIELD_EQ(l, "writers", aggregators());
      FIELD_EQ(l, "TSR_WRITES", NT * aggregators());
      FIELD_EQ(l, bucket_key(VAR_BYTES / aggregators()), NT * aggregators());
      break;
    case 3: /* aggregate, TESSERA_HINTS=aggregators=1 over tsr_create's N */
      check_common(l, rec, "aggregate");
      FIELD_EQ(l, "writers", 1);
      FIELD_EQ(l, "TSR_WRITES", NT);
      FIELD_EQ(l, "TSR_SIZE_WRITE_10K_100K", NT);
      FIELD_EQ(l, "TSR_WRITES_WITH_OFFSET", NT);
      FIELD_EQ(l, "TSR_CONSEC_WRITES", NT - 1); /* one record variable: frames back to back */      break;
    case 4: /* direct, TESSERA_HINTS passes cb_nodes=1 to MPI-IO */
      check_common(l, rec, "direct");
      FIELD_EQ(l, "mpiio_cb_nodes", 1);
      FIELD_EQ(l, "cb_buffer_size", 8 << 20);
      FIELD_EQ(l, "stripe_size", 65536);
      FIELD_EQ(l, "TSR_FILE_ALIGNMENT", 65536);
      HAS(l, "cb_nodes=1");
      break;
#endif
    case 5: /* split */
      check_common(l, rec, "split");
      FIELD_EQ(l, "writers", nranks);
      FIELD_EQ(l, "TSR_WRITES", NT * nranks);
      break;
    default: break;
    }
    rec++;
#ifndef TESSERA_HAVE_PNETCDF
    if (rec == 1) rec = 5;
#endif
  }
  fclose(fp);
  TU_EQ(rec, expect);
}

/* ---- the pnetcdf backend reports the MPI-IO hints back (white-box) ---- */

#ifdef TESSERA_HAVE_PNETCDF
static void check_passthrough(void) {
  const tsr__backend_ops *ops = NULL;
  TU_EQ(tsr__backend_find("pnetcdf", &ops), 0);
  if (!ops || !ops->file_info) {
    TU_EQ(ops && ops->file_info, 1);
    return;
  }
  tsr__hints h;
  tsr__hints_defaults(&h);
  char err[256] = "";
  TU_EQ(tsr__hints_parse("strategy=direct:romio_cb_write=enable:cb_nodes=1:cb_buffer_size=8m",
                         "x.nc", &h, err, sizeof err),
        0);
  tsr__schema s;
  tsr__schema_init(&s);
  s.format = 2;
  int dim, var;
  TU_EQ(tsr__schema_add_dim(&s, "x", 8, &dim), 0);
  TU_EQ(tsr__schema_add_var(&s, "v", TSR_FLOAT, 1, &dim, &var), 0);
  char path[700];
  snprintf(path, sizeof path, "%s/passthrough.np%d.nc", scratch, nranks);
  tsr__bfile *bf = NULL;
  tsr__berr berr = {0};
  int rc = ops->create(MPI_COMM_WORLD, path, &s, &h, &bf, &berr);
  TU_EQ(rc, 0);
  if (!rc) {
    MPI_Info info = ops->file_info(bf);
    TU_EQ(info != MPI_INFO_NULL, 1);
    const char *keys[][2] = {
        {"romio_cb_write", "enable"}, {"cb_nodes", "1"}, {"cb_buffer_size", "8388608"}};
    for (size_t k = 0; info != MPI_INFO_NULL && k < sizeof keys / sizeof keys[0]; k++) {
      char val[256] = "";
      int flag = 0;
      MPI_Info_get(info, keys[k][0], (int)sizeof val - 1, val, &flag);
      if (flag && strcmp(val, keys[k][1]) == 0) tu_pass++;
      else {
        tu_fail++;
        fprintf(stderr, "[rank %d] MPI_Info %s = '%s' (set: %d), expected '%s'\n", tu_rank,
                keys[k][0], val, flag, keys[k][1]);
      }
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    TU_EQ(ops->close(bf, &berr), 0);
  }
  tsr__schema_free(&s);
}
#endif

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  snprintf(scratch, sizeof scratch, "%s", argc > 1 ? argv[1] : ".");
  if (argc > 2) snprintf(stats_path, sizeof stats_path, "%s", argv[2]);
  else snprintf(stats_path, sizeof stats_path, "%s/stats.np%d.jsonl", scratch, nranks);
  /* Before the library reads the environment (once, at the first file). */
  setenv("TESSERA_STATS_FILE", stats_path, 1);
  unsetenv("TESSERA_HINTS");
  if (tu_rank == 0) unlink(stats_path);
  MPI_Barrier(MPI_COMM_WORLD);

  tsr_ctx *ctx = NULL;
  MPI_Comm mcomm;
  TU_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &mcomm));
  /* Rows of y split over the ranks. */
  int64_t gsize[3] = {NZ, NY, NX}, start[3] = {0, 0, 0}, count[3] = {NZ, 0, NX};
  start[1] = (int64_t)NY * tu_rank / nranks;
  count[1] = (int64_t)NY * (tu_rank + 1) / nranks - start[1];
  tsr_decomp *d = NULL;
  TU_OK(tsr_decomp_box(ctx, 3, gsize, start, count, NULL, NULL, &d));
  float *buf = calloc((size_t)(NZ * NX * (count[1] ? count[1] : 1)), sizeof(float));
  int expect = 0;
  char hints[128];
  write_file(ctx, d, "serial", "strategy=serial:slab_bytes=4k", buf);
  expect++;
#ifdef TESSERA_HAVE_PNETCDF
  check_passthrough();
  write_file(ctx, d, "direct", "strategy=direct", buf);
  snprintf(hints, sizeof hints, "strategy=aggregate:aggregators=%d", aggregators());
  write_file(ctx, d, "aggregate", hints, buf);
  setenv("TESSERA_HINTS", "aggregators=1", 1);
  write_file(ctx, d, "aggregate_env", hints, buf);
  setenv("TESSERA_HINTS", "cb_nodes=1:romio_cb_write=enable:cb_buffer_size=8m:striping_unit=64k", 1);
  write_file(ctx, d, "direct_env", "strategy=direct", buf);
  unsetenv("TESSERA_HINTS");
  expect += 4;
#else
  (void)hints;
#endif
  write_file(ctx, d, "split", "strategy=split", buf);
  expect++;
  tsr_decomp_free(&d);
  TU_OK(tsr_finalize(&ctx));
  free(buf);
  if (tu_rank == 0) check_records(expect);
  return tu_finish("test_stats");
}
