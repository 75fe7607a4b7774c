/* White-box test of checksum=crc32's sums (src/backend/sink_checksum.c):
 * blocks of a frame summed on whichever ranks hold them, in any order, with
 * halos around them in memory, chain into zlib's CRC-32 of the whole frame;
 * a frame that is not covered exactly once has no sum.
 *
 *   test_sink_checksum SCENARIO    (under mpiexec, any number of ranks)
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "backend/sink_checksum.h"
#include "core/schema.h"
#include "tsr_test.h"

enum { NY = 7, NX = 5, FRAMES = 3 };

/* T(Time, y, x) float and H(y, x) int: one record and one fixed variable. */
static void make_schema(tsr__schema *s) {
  tsr__schema_init(s);
  int t, y, x, v;
  TSR_CHECK_OK(tsr__schema_add_dim(s, "Time", TSR_UNLIMITED, &t));
  TSR_CHECK_OK(tsr__schema_add_dim(s, "y", NY, &y));
  TSR_CHECK_OK(tsr__schema_add_dim(s, "x", NX, &x));
  int d3[] = {t, y, x}, d2[] = {y, x};
  TSR_CHECK_OK(tsr__schema_add_var(s, "T", TSR_FLOAT, 3, d3, &v));
  TSR_CHECK_OK(tsr__schema_add_var(s, "H", TSR_INT, 2, d2, &v));
}

static float tval(int f, int j, int i) { return (float)(f * 1000 + j * 10 + i) + 0.25f; }

/* What the sums must be: CRC-32 of the whole frame, little-endian (x86). */
static unsigned want_t(int f) {
  float a[NY * NX];
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) a[j * NX + i] = tval(f, j, i);
  return (unsigned)crc32_z(0, (const Bytef *)a, sizeof a);
}

static unsigned want_h(void) {
  int a[NY * NX];
  for (int k = 0; k < NY * NX; k++) a[k] = k - 17;
  return (unsigned)crc32_z(0, (const Bytef *)a, sizeof a);
}

/* Rank r of n owns the columns [x0, x1) of every row (a tile cut across the
 * rows, so that no block is contiguous in the frame), held in memory with a
 * halo of 1 around it; frames are summed last to first. */
static void sum_tiles(tsr__sums *sums, const tsr__schema *s, int skip_frame) {
  int me = tsr_test_rank(), n = tsr_test_nranks();
  int64_t x0 = (int64_t)NX * me / n, x1 = (int64_t)NX * (me + 1) / n, w = x1 - x0;
  if (w == 0) return;
  int64_t mshape[2] = {NY + 2, w + 2}, moff[2] = {1, 1};
  float *tile = calloc((size_t)(NY + 2) * (size_t)(w + 2), sizeof *tile);
  for (int f = FRAMES - 1; f >= 0; f--) {
    if (f == skip_frame) continue;
    for (int j = 0; j < NY; j++)
      for (int64_t i = 0; i < w; i++) tile[(j + 1) * (w + 2) + i + 1] = tval(f, j, (int)(x0 + i));
    int64_t start[2] = {0, x0}, count[2] = {NY, w};
    TSR_CHECK_OK(tsr__sums_add(sums, s, 0, f, start, count, tile,
                               (tsr__memview){.mshape = mshape, .moffset = moff}));
  }
  free(tile);
  /* H: whole rows, contiguous, from the last rank's rows upward. */
  int64_t y0 = (int64_t)NY * me / n, y1 = (int64_t)NY * (me + 1) / n;
  if (y1 > y0) {
    int h[NY * NX];
    for (int64_t k = 0; k < (y1 - y0) * NX; k++) h[k] = (int)(y0 * NX + k) - 17;
    int64_t start[2] = {y0, 0}, count[2] = {y1 - y0, NX};
    TSR_CHECK_OK(tsr__sums_add(sums, s, 1, 0, start, count, h, (tsr__memview){0}));
  }
}

static void check_result(const tsr__schema *s, tsr__sums_result *r, int missing_frame) {
  char want[64];
  char *p = want;
  for (int f = 0; f < FRAMES; f++)
    p += f == missing_frame ? sprintf(p, f ? " -" : "-") : sprintf(p, f ? " %08x" : "%08x", want_t(f));
  TSR_CHECK_EQ_STR(r->att[0], want);
  snprintf(want, sizeof want, "%08x", want_h());
  TSR_CHECK_EQ_STR(r->att[1], want);
  if (tsr_test_rank() != 0) {
    TSR_CHECK_NULL(r->manifest);
    return;
  }
  /* One line per frame; H only in frame 0's; no T in the missing frame's. */
  char line[256];
  snprintf(line, sizeof line,
           "{\"file\": \"out \\\"1\\\".nc\", \"frame\": 0, \"frames\": 3, \"hash\": \"crc32\", "
           "\"vars\": {\"T\": \"%08x\", \"H\": \"%08x\"}}\n",
           want_t(0), want_h());
  TSR_CHECK(r->manifest && strncmp(r->manifest, line, strlen(line)) == 0);
  TSR_CHECK(r->manifest && strstr(r->manifest, "\"frame\": 2, \"frames\": 3") != NULL);
  if (missing_frame >= 0 && r->manifest) {
    snprintf(line, sizeof line, "\"frame\": %d, \"frames\": 3, \"hash\": \"crc32\", \"vars\": {}}",
             missing_frame);
    TSR_CHECK(strstr(r->manifest, line) != NULL);
  }
  (void)s;
}

static void tiles_chain(void) {
  tsr__schema s;
  make_schema(&s);
  tsr__sums *sums = tsr__sums_new();
  TSR_REQUIRE(sums != NULL);
  sum_tiles(sums, &s, -1);
  tsr__sums_result r;
  TSR_CHECK_OK(tsr__sums_finish(sums, MPI_COMM_WORLD, &s, "out \"1\".nc", &r));
  check_result(&s, &r, -1);
  tsr__sums_result_free(&r, s.nvars);
  tsr__sums_free(sums);
  tsr__schema_free(&s);
}

/* Frame 1 of T never written: no sum for it, the others intact. */
static void gap_has_no_sum(void) {
  tsr__schema s;
  make_schema(&s);
  tsr__sums *sums = tsr__sums_new();
  sum_tiles(sums, &s, 1);
  tsr__sums_result r;
  TSR_CHECK_OK(tsr__sums_finish(sums, MPI_COMM_WORLD, &s, "out \"1\".nc", &r));
  check_result(&s, &r, 1);
  tsr__sums_result_free(&r, s.nvars);
  tsr__sums_free(sums);
  tsr__schema_free(&s);
}

/* A block written twice (rank 0 writes frame 0 of T again): covered more
 * than once, so no sum for that frame. */
static void overlap_has_no_sum(void) {
  tsr__schema s;
  make_schema(&s);
  tsr__sums *sums = tsr__sums_new();
  sum_tiles(sums, &s, -1);
  if (tsr_test_rank() == 0) {
    float row[NX];
    for (int i = 0; i < NX; i++) row[i] = tval(0, 3, i);
    int64_t start[2] = {3, 0}, count[2] = {1, NX};
    TSR_CHECK_OK(tsr__sums_add(sums, &s, 0, 0, start, count, row, (tsr__memview){0}));
  }
  tsr__sums_result r;
  TSR_CHECK_OK(tsr__sums_finish(sums, MPI_COMM_WORLD, &s, "x.nc", &r));
  TSR_CHECK(r.att[0] && strncmp(r.att[0], "- ", 2) == 0);
  tsr__sums_result_free(&r, s.nvars);
  tsr__sums_free(sums);
  tsr__schema_free(&s);
}

/* The classic backends' placeholder and the padding over it. */
static void placeholder_fits(void) {
  tsr__schema s;
  make_schema(&s);
  char *p = tsr__sums_placeholder(&s, 0, 3), *q = tsr__sums_placeholder(&s, 1, 3);
  TSR_CHECK_EQ_STR(p, "-------- -------- --------");
  TSR_CHECK_EQ_STR(q, "--------");
  char out[64];
  TSR_CHECK(tsr__sums_fit("0123abcd 89abcdef", strlen(p), out));
  TSR_CHECK_EQ_STR(out, "0123abcd 89abcdef         ");
  TSR_CHECK(!tsr__sums_fit("0123abcd 89abcdef", strlen(q), out));
  free(p);
  free(q);
  tsr__schema_free(&s);
}

static const tsr_test_scenario SCENARIOS[] = {
    {"tiles_chain", tiles_chain, 0},
    {"gap_has_no_sum", gap_has_no_sum, 0},
    {"overlap_has_no_sum", overlap_has_no_sum, 0},
    {"placeholder_fits", placeholder_fits, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "sink_checksum", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
