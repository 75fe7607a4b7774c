/* A strategy is one registry row for writing and reading (issue 26): for
 * every registered strategy, tsr_open with strategy=<name> reads through the
 * read side of that strategy's row (its `read` ops, strategy/strategy.h) and
 * gets back what the same strategy wrote; a row without a read side is
 * TSR_EHINT naming it; without strategy= the reader is the registry's
 * default. White-box: it compares the reader's ops with the rows'. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "strategy/strategy.h"
#include "tsr_fixtures.h"
#include "tsr_test.h"

enum { NY = 8, NX = 6 };

static int rows_decomp(tsr_ctx *ctx, tsr_decomp **d) {
  int64_t g[2] = {NY, NX}, st[2], ct[2];
  tsr_test_rows(NY, NX, st, ct);
  return tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, d);
}

/* One float field (y, x) of check values, written with @p hints. */
static int write_field(tsr_ctx *ctx, tsr_decomp *d, const char *path, const char *hints) {
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) return rc;
  int dy, dx, v, dims[2];
  TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dx));
  dims[0] = dy, dims[1] = dx;
  TSR_CHECK_OK(tsr_def_var(f, "T", TSR_FLOAT, 2, dims, &v));
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  rc = tsr_enddef(f);
  int64_t st[2], ct[2];
  tsr_test_rows(NY, NX, st, ct);
  float buf[NY * NX];
  for (int64_t j = 0; j < ct[0]; j++)
    for (int64_t i = 0; i < NX; i++) buf[j * NX + i] = (float)tsr_test_value(0, 0, 0, st[0] + j, i);
  if (!rc) rc = tsr_put(f, v, 0, d, buf);
  int crc = tsr_close(&f);
  return rc ? rc : crc;
}

static void check_field(tsr_file *f, tsr_decomp *d, const char *name) {
  int64_t st[2], ct[2];
  tsr_test_rows(NY, NX, st, ct);
  float buf[NY * NX];
  memset(buf, 0, sizeof buf);
  TSR_CHECK_OK(tsr_get(f, 0, 0, d, buf));
  int bad = 0;
  for (int64_t j = 0; j < ct[0]; j++)
    for (int64_t i = 0; i < NX; i++)
      bad += buf[j * NX + i] != (float)tsr_test_value(0, 0, 0, st[0] + j, i);
  TSR_CHECKF(bad == 0, "%s: %d values differ", name, bad);
}

/* Every row: the file its strategy wrote, read with strategy=<name>. */
static void rows(void) {
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_REQUIRE(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model) == 0);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(rows_decomp(ctx, &d));
  char path[512], hints[96], msg[256];
  const tsr__read_ops *each = NULL;
  const char *name = NULL;
  tsr_test_case("default");
  TSR_CHECK_OK(tsr__strategy_reader("", &each, &name, msg, sizeof msg));
  TSR_CHECK(each != NULL);
  tsr_test_path(path, sizeof path, "rows_default");
  TSR_CHECK_OK(write_field(ctx, d, path, "strategy=serial"));
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_open(ctx, path, NULL, &f));
  TSR_CHECK(tsr__reader_ops(f) == each);
  TSR_CHECK_EQ_STR(tsr_file_strategy(f), "");
  if (f) check_field(f, d, "default");
  TSR_CHECK_OK(tsr_close(&f));
  for (int i = 0; i < tsr__strategy_count(); i++) {
    const char *s = tsr__strategy_name_at(i);
    const tsr__strategy_ops *ops = NULL;
    tsr_test_case("%s", s);
    TSR_CHECK_OK(tsr__strategy_find(s, &ops));
    if (!ops) continue;
    snprintf(hints, sizeof hints, "strategy=%s", s);
    if (!ops->read) { /* no read side: refused, by name, on an existing file */
      tsr_test_path(path, sizeof path, "rows_default");
      f = (tsr_file *)&f;
      TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), TSR_EHINT);
      TSR_CHECK_NULL(f);
      TSR_CHECK(strstr(tsr_last_error(), hints) != NULL);
      continue;
    }
    if (ops->needs_server_ranks) continue; /* a writer on ranks tsr_init did not set aside */
    snprintf(path, sizeof path, "%s/rows_%s_np%d.nc", tsr_test_arg(0, "."), s, tsr_test_nranks());
    int rc = write_field(ctx, d, path, hints);
    if (rc == TSR_ENOTBUILT) { /* direct and aggregate need PnetCDF */
      if (tsr_test_rank() == 0) printf("rows: strategy %s is not built, not read\n", s);
      continue;
    }
    TSR_CHECK_OK(rc);
    f = NULL;
    TSR_CHECK_OK(tsr_open(ctx, path, hints, &f));
    TSR_CHECK(tsr__reader_ops(f) == ops->read); /* the row's read side, no other */
    TSR_CHECK_EQ_STR(tsr_file_strategy(f), s);
    if (f) check_field(f, d, s);
    TSR_CHECK_OK(tsr_close(&f));
  }
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx));
}

static const tsr_test_scenario SCENARIOS[] = {
    {"rows", rows, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "read_rows", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
