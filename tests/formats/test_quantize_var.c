/* tsr_def_var_quantize: per-variable quantization in format=netcdf4, through
 * each strategy (the servers get it in the schema they are sent).
 *
 * One file, hint quantize=bitround:12 for all, and three float variables:
 *   A  tsr_def_var_quantize(BITROUND, 4): 4 bits, not the hint's 12;
 *   B  tsr_def_var_quantize(NONE): exact, although the hint quantizes;
 *   C  nothing: the hint's 12 bits.
 * Read back with NetCDF-C: NetCDF's own record of the setting
 * (nc_inq_var_quantize) and the values (B bit for bit; A and C within
 * half a unit of their last kept bit, and A coarser than C). Bad calls give
 * their documented codes on every rank. */
#include <math.h>
#include <netcdf.h>
#include <netcdf_meta.h>

#include "tsr_test.h"

enum { NY = 6, NX = 8 };

static float value(int y, int x) { return 1000.0f + 0.123456789f * (float)(y * NX + x); }

static const char *dir(void) { return tsr_test_arg(0, "."); }

/* Within half a unit of the last of @p bits kept mantissa bits. */
static int near(float got, float want, int bits) {
  int e;
  frexpf(want, &e);
  return fabsf(got - want) <= ldexpf(1.0f, e - bits - 1);
}

static void write_read(const char *strategy) {
  char init[128] = "", hints[256], path[512];
  int servers = strcmp(strategy, "servers") == 0;
  if (servers) snprintf(init, sizeof init, "strategy=servers:io_groups=1:io_tasks=1");
  tsr_ctx *ctx;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, init[0] ? init : NULL, &ctx, &model));
  if (model == MPI_COMM_NULL) return; /* a server: it served until the model finalized */
  int me, P;
  MPI_Comm_rank(model, &me);
  MPI_Comm_size(model, &P);
  snprintf(hints, sizeof hints, "strategy=%s:format=netcdf4:quantize=bitround:12", strategy);
  snprintf(path, sizeof path, "%s/quantize_%s_np%d.nc", dir(), strategy, tsr_test_nranks());
  tsr_test_case("%s", path);
  tsr_file *f;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("netcdf4 or the strategy is not built");
    tsr_finalize(&ctx);
    MPI_Comm_free(&model);
    return;
  }
  TSR_CHECK_OK(rc);
  int dims[2], va, vb, vc, vi;
  TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dims[0]));
  TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dims[1]));
  TSR_CHECK_OK(tsr_def_var(f, "A", TSR_FLOAT, 2, dims, &va));
  TSR_CHECK_OK(tsr_def_var(f, "B", TSR_FLOAT, 2, dims, &vb));
  TSR_CHECK_OK(tsr_def_var(f, "C", TSR_FLOAT, 2, dims, &vc));
  TSR_CHECK_OK(tsr_def_var(f, "I", TSR_INT, 2, dims, &vi));
  TSR_CHECK_OK(tsr_def_var_quantize(f, va, TSR_QUANTIZE_BITROUND, 4));
  TSR_CHECK_OK(tsr_def_var_quantize(f, vb, TSR_QUANTIZE_NONE, 0));
  /* The documented refusals (the same on every rank, so enddef agrees). */
  TSR_CHECK_RC(tsr_def_var_quantize(f, vi, TSR_QUANTIZE_BITROUND, 4), TSR_ETYPE);
  TSR_CHECK_RC(tsr_def_var_quantize(f, vc, TSR_QUANTIZE_BITROUND, 24), TSR_EINVAL);
  TSR_CHECK_RC(tsr_def_var_quantize(f, vc, TSR_QUANTIZE_GRANULARBR, 8), TSR_EINVAL);
  TSR_CHECK_RC(tsr_def_var_quantize(f, vc, (tsr_quantize_mode)7, 4), TSR_EINVAL);
  TSR_CHECK_RC(tsr_def_var_quantize(f, 99, TSR_QUANTIZE_BITROUND, 4), TSR_EBADID);
  TSR_CHECK_OK(tsr_enddef(f));
  TSR_CHECK_RC(tsr_def_var_quantize(f, va, TSR_QUANTIZE_BITROUND, 4), TSR_EMODE);
  /* Row slabs; every variable gets the same values. */
  int64_t y0 = (int64_t)NY * me / P, y1 = (int64_t)NY * (me + 1) / P;
  int64_t gsize[2] = {NY, NX}, start[2] = {y0, 0}, count[2] = {y1 - y0, NX};
  tsr_decomp *d;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, gsize, start, count, NULL, NULL, &d));
  float buf[NY * NX];
  int ibuf[NY * NX];
  for (int64_t y = y0; y < y1; y++)
    for (int x = 0; x < NX; x++) {
      buf[(y - y0) * NX + x] = value((int)y, x);
      ibuf[(y - y0) * NX + x] = (int)(y * NX + x);
    }
  TSR_CHECK_OK(tsr_put(f, va, 0, d, buf));
  TSR_CHECK_OK(tsr_put(f, vb, 0, d, buf));
  TSR_CHECK_OK(tsr_put(f, vc, 0, d, buf));
  TSR_CHECK_OK(tsr_put(f, vi, 0, d, ibuf));
  TSR_CHECK_OK(tsr_close(&f));
  tsr_decomp_free(&d);
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* servers: the file is written when this returns */
  MPI_Comm_free(&model);
  if (me != 0) return;
  int nc, id[3];
  TSR_CHECK_EQ_INT(nc_open(path, NC_NOWRITE, &nc), NC_NOERR);
  const char *names[3] = {"A", "B", "C"};
  const int want_mode[3] = {NC_QUANTIZE_BITROUND, NC_NOQUANTIZE, NC_QUANTIZE_BITROUND};
  const int want_nsd[3] = {4, 0, 12};
  float got[3][NY * NX];
  for (int i = 0; i < 3; i++) {
    int mode = -1, nsd = -1;
    TSR_CHECK_EQ_INT(nc_inq_varid(nc, names[i], &id[i]), NC_NOERR);
    TSR_CHECK_EQ_INT(nc_inq_var_quantize(nc, id[i], &mode, &nsd), NC_NOERR);
    tsr_test_case("%s %s", path, names[i]);
    TSR_CHECK_EQ_INT(mode, want_mode[i]);
    if (want_mode[i] != NC_NOQUANTIZE) TSR_CHECK_EQ_INT(nsd, want_nsd[i]);
    TSR_CHECK_EQ_INT(nc_get_var_float(nc, id[i], got[i]), NC_NOERR);
  }
  nc_close(nc);
  long bad_a = 0, bad_b = 0, bad_c = 0, coarser = 0;
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++) {
      float w = value(y, x);
      int g = y * NX + x;
      bad_a += !near(got[0][g], w, 4);
      bad_b += memcmp(&got[1][g], &w, sizeof w) != 0;
      bad_c += !near(got[2][g], w, 12);
      coarser += fabsf(got[0][g] - w) > fabsf(got[2][g] - w);
    }
  tsr_test_case("%s values", path);
  TSR_CHECK_EQ_INT((int)bad_a, 0);
  TSR_CHECK_EQ_INT((int)bad_b, 0);
  TSR_CHECK_EQ_INT((int)bad_c, 0);
  TSR_CHECK(coarser > 0);
}

static void serial(void) { write_read("serial"); }
static void direct(void) { write_read("direct"); }
static void aggregate(void) { write_read("aggregate"); }
static void servers(void) { write_read("servers"); }

static const tsr_test_scenario SCENARIOS[] = {
    {"serial", serial, 0},
    {"direct", direct, 0},
    {"aggregate", aggregate, 0},
    {"servers", servers, 2},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "quantize_var", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
