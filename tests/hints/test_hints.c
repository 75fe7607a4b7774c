/* White-box tests of the hint parser (src/api/hints.c, contract in
 * src/core/hints.h). No MPI_Init: the parser never touches MPI. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "core/hints.h"
#include "strategy/strategy.h"
#include "tessera.h"
#include "tsr_test.h"

static char err[512];

/* The checks are tsr_test.h's; a substring check of the parser's message: */
#define CHECK_ERR_HAS(needle)                                                                  \
  TSR_CHECKF(strstr(err, (needle)) != NULL, "err is \"%s\", want it to contain \"%s\"", err, \
             (needle))

/* Parse text for path into a fresh default hint set. */
static tsr__hints H;
static int P(const char *text, const char *path) {
  tsr__hints_defaults(&H);
  int rc = tsr__hints_parse(text, path, &H, err, sizeof err);
  /* Failures after this name the last input parsed and its message. */
  tsr_test_case("after P('%.100s', %s): err \"%.100s\"", text ? text : "(null)", path ? path : "NULL",
                err);
  return rc;
}

/* Expect text to fail with exactly msg (or, with msg starting '~', to contain the rest). */
#define BAD(text, msg)                                                                         \
  do {                                                                                         \
    TSR_CHECK_EQ_INT(P(text, "wrfout_d01"), TSR_EHINT);                                               \
    if ((msg)[0] == '~')                                                                       \
      CHECK_ERR_HAS((msg) + 1);                                                               \
    else                                                                                       \
      TSR_CHECK_EQ_STR(err, msg);                                                                     \
  } while (0)

static const char *fmt(const tsr__hints *h) {
  static char buf[4096];
  tsr__hints_format(h, buf, sizeof buf);
  return buf;
}

static void test_defaults(void) {
  tsr__hints h;
  memset(&h, 0x5a, sizeof h);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(h.set, 0);
  TSR_CHECK_EQ_STR(h.strategy, "");
  TSR_CHECK_EQ_STR(h.backend, "");
  TSR_CHECK_EQ_INT(h.format, 2);
  TSR_CHECK_EQ_INT(h.slab_bytes, 64ll << 20);
  TSR_CHECK_EQ_INT(h.buffer_bytes, 128ll << 20);
  TSR_CHECK_EQ_INT(h.aggregators, 0);
  TSR_CHECK_EQ_INT(h.stride, 0);
  TSR_CHECK_EQ_INT(h.io_groups, 0);
  TSR_CHECK_EQ_INT(h.io_tasks, 0);
  TSR_CHECK_EQ_INT(h.server_ranks_first, 0);
  TSR_CHECK_EQ_INT(h.server_pick_idle, 0);
  TSR_CHECK_EQ_INT(h.strict, 1);
  TSR_CHECK_EQ_INT(h.writer, 0);
  TSR_CHECK_EQ_INT(h.exchange_alltoall, 0);
  TSR_CHECK_EQ_INT(h.frames_per_outfile, 1);
  TSR_CHECK_EQ_INT(h.npass, 0);
  TSR_CHECK_EQ_STR(fmt(&h), "");
}

static void test_parse_size(void) {
  static const struct {
    const char *s;
    long long want; /* -1: must fail */
  } cases[] = {
      {"0", 0},
      {"1024", 1024},
      {"1k", 1024},
      {"1K", 1024},
      {"2m", 2ll << 20},
      {"2M", 2ll << 20},
      {"3g", 3ll << 30},
      {"3G", 3ll << 30},
      {"8191g", 8191ll << 30},
      {"9223372036854775807", 9223372036854775807ll},
      {"8589934591g", 8589934591ll << 30},
      {"9223372036854775808", -1},
      {"99999999999999999999999", -1},
      {"8589934592g", -1},
      {"9007199254740992k", -1},
      {"-1", -1},
      {"-1k", -1},
      {"+1", -1},
      {"", -1},
      {"k", -1},
      {"1kb", -1},
      {"1kk", -1},
      {"1t", -1},
      {"1.5m", -1},
      {" 1", -1},
      {"1 ", -1},
      {"0x10", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t v = 77;
    int rc = tsr__parse_size(cases[i].s, &v);
    snprintf(err, sizeof err, "tsr__parse_size(\"%s\")", cases[i].s);
    TSR_CHECK_EQ_INT(rc, cases[i].want < 0 ? -1 : 0);
    TSR_CHECK_EQ_INT(v, cases[i].want < 0 ? 77 : cases[i].want); /* unchanged on failure */
  }
  int64_t v = 0;
  TSR_CHECK_EQ_INT(tsr__parse_size(NULL, &v), -1);
}

static void test_every_key(void) {
  TSR_CHECK_EQ_INT(P("strategy=serial", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "serial");
  TSR_CHECK_EQ_INT(H.set, TSR__H_STRATEGY);
  TSR_CHECK_EQ_INT(P("strategy=direct", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "direct");
  TSR_CHECK_EQ_INT(P("strategy=aggregate", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "aggregate");
  TSR_CHECK_EQ_INT(P("strategy=split", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "split");
  TSR_CHECK_EQ_INT(P("strategy=servers", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "servers");
  TSR_CHECK_EQ_INT(P("strategy=Servers", NULL), 0); /* enumerated values ignore ASCII case */
  TSR_CHECK_EQ_STR(H.strategy, "servers");

  TSR_CHECK_EQ_INT(P("backend=netcdf", NULL), 0);
  TSR_CHECK_EQ_STR(H.backend, "netcdf");
  TSR_CHECK_EQ_INT(P("backend=pnetcdf", NULL), 0);
  TSR_CHECK_EQ_STR(H.backend, "pnetcdf");
  TSR_CHECK_EQ_INT(P("backend=NULL", NULL), 0);
  TSR_CHECK_EQ_STR(H.backend, "null");
  TSR_CHECK_EQ_INT(H.set, TSR__H_BACKEND);

  TSR_CHECK_EQ_INT(P("format=cdf5", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 5);
  TSR_CHECK_EQ_INT(H.set, TSR__H_FORMAT);
  TSR_CHECK_EQ_INT(P("format=64bit_data", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 5);
  TSR_CHECK_EQ_INT(P("format=cdf5,format=cdf2", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 2);
  TSR_CHECK_EQ_INT(P("format=cdf5,format=64bit_offset", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 2);

  TSR_CHECK_EQ_INT(P("slab_bytes=1k", NULL), 0);
  TSR_CHECK_EQ_INT(H.slab_bytes, 1024);
  TSR_CHECK_EQ_INT(P("slab_bytes=3m", NULL), 0);
  TSR_CHECK_EQ_INT(H.slab_bytes, 3 << 20);
  TSR_CHECK_EQ_INT(H.set, TSR__H_SLAB);
  TSR_CHECK_EQ_INT(P("buffer_bytes=0", NULL), 0);
  TSR_CHECK_EQ_INT(H.buffer_bytes, 0);
  TSR_CHECK_EQ_INT(P("buffer_bytes=5G", NULL), 0);
  TSR_CHECK_EQ_INT(H.buffer_bytes, 5ll << 30);
  TSR_CHECK_EQ_INT(H.set, TSR__H_BUFFER);

  TSR_CHECK_EQ_INT(P("aggregators=4:stride=2:io_groups=3:io_tasks=5:writer=7:frames_per_outfile=12", NULL), 0);
  TSR_CHECK_EQ_INT(H.aggregators, 4);
  TSR_CHECK_EQ_INT(H.stride, 2);
  TSR_CHECK_EQ_INT(H.io_groups, 3);
  TSR_CHECK_EQ_INT(H.io_tasks, 5);
  TSR_CHECK_EQ_INT(H.writer, 7);
  TSR_CHECK_EQ_INT(H.frames_per_outfile, 12);
  TSR_CHECK_EQ_INT(H.set, TSR__H_AGGREGATORS | TSR__H_STRIDE | TSR__H_IO_GROUPS | TSR__H_IO_TASKS |
                       TSR__H_WRITER | TSR__H_FRAMES_PER_OUTFILE);
  TSR_CHECK_EQ_INT(P("writer=0:aggregators=2147483647", NULL), 0);
  TSR_CHECK_EQ_INT(H.writer, 0);
  TSR_CHECK_EQ_INT(H.aggregators, 2147483647);

  TSR_CHECK_EQ_INT(P("server_ranks=first:server_pick=idle:exchange=alltoall:hints_strict=0", NULL), 0);
  TSR_CHECK_EQ_INT(H.server_ranks_first, 1);
  TSR_CHECK_EQ_INT(H.server_pick_idle, 1);
  TSR_CHECK_EQ_INT(H.exchange_alltoall, 1);
  TSR_CHECK_EQ_INT(H.strict, 0);
  TSR_CHECK_EQ_INT(H.set, TSR__H_SERVER_RANKS | TSR__H_SERVER_PICK | TSR__H_EXCHANGE | TSR__H_STRICT);
  TSR_CHECK_EQ_INT(P("io_placement=nodes", NULL), 0);
  TSR_CHECK_EQ_INT(H.io_placement_nodes, 1);
  TSR_CHECK_EQ_INT(P("io_placement=ranks", NULL), 0);
  TSR_CHECK_EQ_INT(H.io_placement_nodes, 0);
  TSR_CHECK_EQ_INT(P("server_ranks=last:server_pick=roundrobin:exchange=p2p:hints_strict=1", NULL), 0);
  TSR_CHECK_EQ_INT(H.server_ranks_first, 0);
  TSR_CHECK_EQ_INT(H.server_pick_idle, 0);
  TSR_CHECK_EQ_INT(H.exchange_alltoall, 0);
  TSR_CHECK_EQ_INT(H.strict, 1);

  /* Whitespace around tokens, keys and values is trimmed. */
  TSR_CHECK_EQ_INT(P("  strategy = aggregate :\taggregators= 3 , stride =2\n", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "aggregate");
  TSR_CHECK_EQ_INT(H.aggregators, 3);
  TSR_CHECK_EQ_INT(H.stride, 2);
  /* Later unglobbed groups override earlier ones. */
  TSR_CHECK_EQ_INT(P("stride=1,stride=2", NULL), 0);
  TSR_CHECK_EQ_INT(H.stride, 2);
}

static void test_empty(void) {
  tsr__hints_defaults(&H);
  H.stride = 9;
  TSR_CHECK_EQ_INT(tsr__hints_parse(NULL, "x", &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(tsr__hints_parse("", "x", &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(tsr__hints_parse(" \t ", NULL, &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(H.stride, 9);
  TSR_CHECK_EQ_INT(H.set, 0);
  TSR_CHECK_EQ_INT(tsr__hints_parse("stride=1", NULL, &H, NULL, 0), 0); /* err may be NULL */
  TSR_CHECK_EQ_INT(tsr__hints_parse("stride=x", NULL, &H, NULL, 0), TSR_EHINT);
}

static void test_bad_values(void) {
  BAD("aggregators=+2", "hint 'aggregators=+2': expected an integer >= 1");
  BAD("buffer_bytes=1048576g",
      "~hint 'buffer_bytes=1048576g': more than this process may allocate (");
  BAD("slab_bytes=1048576g", "~each rank would allocate it");
  BAD("aggregators=abc", "hint 'aggregators=abc': expected an integer >= 1");
  BAD("aggregators=0", "hint 'aggregators=0': expected an integer >= 1");
  BAD("aggregators=4k", "hint 'aggregators=4k': expected an integer >= 1");
  BAD("aggregators=2147483648", "hint 'aggregators=2147483648': expected an integer >= 1");
  BAD("aggregators=99999999999999999999999", "~hint 'aggregators=9999");
  BAD("aggregators=1.5", "hint 'aggregators=1.5': expected an integer >= 1");
  BAD("stride=-1", "hint 'stride=-1': expected an integer >= 1");
  BAD("io_groups=0", "hint 'io_groups=0': expected an integer >= 1");
  BAD("io_tasks=x", "hint 'io_tasks=x': expected an integer >= 1");
  BAD("writer=-1", "hint 'writer=-1': expected an integer >= 0");
  BAD("frames_per_outfile=0", "hint 'frames_per_outfile=0': expected an integer >= 1");
  BAD("slab_bytes=512", "hint 'slab_bytes=512': expected a size >= 1k (bytes, optional suffix k, m or g)");
  BAD("slab_bytes=-1k", "~hint 'slab_bytes=-1k': expected a size >= 1k");
  BAD("buffer_bytes=-5", "hint 'buffer_bytes=-5': expected a size >= 0 (bytes, optional suffix k, m or g)");
  BAD("buffer_bytes=1x", "~hint 'buffer_bytes=1x': expected a size");
  BAD("buffer_bytes=9223372036854775808", "~hint 'buffer_bytes=9223372036854775808'");
  BAD("buffer_bytes=16777216t", "~hint 'buffer_bytes=16777216t'");
  BAD("strategy=fast", "hint 'strategy=fast': expected serial, direct, aggregate, split or servers");
  BAD("backend=hdf5", "hint 'backend=hdf5': expected netcdf, pnetcdf, netcdf4, grib2, zarr or null");
  BAD("format=cdf3", "hint 'format=cdf3': expected cdf2, cdf5, netcdf4, grib2, zarr, 64bit_offset or 64bit_data");
  BAD("server_ranks=middle", "hint 'server_ranks=middle': expected last or first");
  BAD("io_placement=racks", "hint 'io_placement=racks': expected ranks or nodes");
  BAD("server_pick=random", "hint 'server_pick=random': expected roundrobin or idle");
  BAD("hints_strict=2", "hint 'hints_strict=2': expected 0 or 1");
  BAD("exchange=bcast", "hint 'exchange=bcast': expected p2p or alltoall");
  BAD("strategy=", "hint 'strategy=': missing value");
  /* A failed parse leaves h untouched, even fields set before the bad key. */
  tsr__hints_defaults(&H);
  TSR_CHECK_EQ_INT(tsr__hints_parse("stride=2:aggregators=0", NULL, &H, err, sizeof err), TSR_EHINT);
  TSR_CHECK_EQ_INT(H.stride, 0);
  TSR_CHECK_EQ_INT(H.set, 0);
}

static void test_bad_syntax(void) {
  BAD(",,", "~empty group");
  BAD("strategy=serial,", "~empty group");
  BAD(",strategy=serial", "~empty group");
  BAD("strategy=serial, ,stride=2", "~empty group");
  BAD("wrfout*", "hint group 'wrfout*' has no key=value");
  BAD("stride=2,wrfout*", "hint group 'wrfout*' has no key=value");
  BAD("wrfout*:", "~has an empty key=value");
  BAD("strategy=serial::stride=2", "~has an empty key=value");
  BAD("=serial", "hint '=serial': missing key before '='");
  BAD("wrfout*: =serial", "hint '=serial': missing key before '='");
  BAD("strategy=serial:strategy=direct",
      "hint 'strategy=direct': key 'strategy' appears twice in one group");
  BAD("cb_nodes=2:cb_nodes=4", "hint 'cb_nodes=4': key 'cb_nodes' appears twice in one group");
  BAD("stride=2:aggregators=1:stride=2", "~key 'stride' appears twice");
  BAD("caf\xc3\xa9=1", "hint key 'caf\\xc3\\xa9' contains a non-ASCII byte");
  BAD("strat\xe9gy=serial", "~non-ASCII");
  BAD("stra tegy=serial", "~hint key 'stra tegy' contains ' '");
  BAD("romio_cb_write=en\x01", "~value contains a non-ASCII or control byte");
  BAD("aggregators=2:strategy", "~hint 'strategy' in group 'aggregators=2:strategy' is not key=value");
  BAD("wrfout*:rst*:stride=1", "~hint 'rst*' in group");
  BAD("foo=1", "unknown hint key 'foo'");
  BAD("wrfrst*:foo=1", "unknown hint key 'foo'"); /* groups are validated even when not applying */
  /* Duplicates across groups are overrides, not errors. */
  TSR_CHECK_EQ_INT(P("strategy=serial,strategy=direct", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "direct");
}

/* A string of about 1 MiB made of rep repeated, with a prefix. */
static char *big(const char *prefix, const char *rep, const char *suffix) {
  size_t n = 1 << 20, pl = strlen(prefix), rl = strlen(rep), sl = strlen(suffix);
  char *s = malloc(n + pl + rl + sl + 1);
  if (!s) exit(2);
  memcpy(s, prefix, pl);
  size_t o = pl;
  while (o < n) memcpy(s + o, rep, rl), o += rl;
  memcpy(s + o, suffix, sl + 1);
  return s;
}

static void test_big(void) {
  clock_t t0 = clock();
  char *s = big("stride=1", ",stride=2", "");
  TSR_CHECK_EQ_INT(P(s, "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.stride, 2);
  free(s);
  s = big("wrfout*:stride=3", ",stride=2", "");
  TSR_CHECK_EQ_INT(P(s, "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.stride, 3);
  free(s);
  s = big("hints_strict=0", ":k=1", ""); /* many unknown keys, one group */
  TSR_CHECK_EQ_INT(P(s, NULL), 0);
  TSR_CHECK_EQ_INT(H.strict, 0);
  free(s);
  s = big("", "k=1:", "hints_strict=0"); /* hints_strict=0 at the very end still counts */
  TSR_CHECK_EQ_INT(P(s, NULL), 0);
  free(s);
  s = big("a", "b", "=1"); /* one 1 MiB unknown key */
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("unknown hint key 'abbbb");
  TSR_CHECK_EQ_INT(strlen(err) < 200, 1);
  free(s);
  s = big("strategy=", "x", ""); /* one 1 MiB value */
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("hint 'strategy=xxx");
  free(s);
  s = big("romio_cb_write=", "x", "");
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("value is longer than 255 characters");
  free(s);
  s = big("aggregators=1", ":aggregators=1", "");
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("appears twice");
  free(s);
  s = big("", ",", "");
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("empty group");
  free(s);
  s = big("", "*a", "");  /* a glob alone, and far too long for fnmatch */
  TSR_CHECK_EQ_INT(P(s, "aaaa"), TSR_EHINT);
  CHECK_ERR_HAS("longer than 4096");
  free(s);
  s = big("", "*a", ":stride=1");
  TSR_CHECK_EQ_INT(P(s, "aaaa"), TSR_EHINT);
  free(s);
  s = big("", "=", "");
  TSR_CHECK_EQ_INT(P(s, NULL), TSR_EHINT);
  CHECK_ERR_HAS("missing key before '='");
  free(s);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  snprintf(err, sizeof err, "1 MiB strings took %.2f s", secs);
  TSR_CHECK_EQ_INT(secs < 5.0, 1);
}

static void test_globs(void) {
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=servers", "wrfout_d01"), 0);
  TSR_CHECK_EQ_STR(H.strategy, "servers");
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=servers", "run/out/wrfout_d01"), 0); /* base name */
  TSR_CHECK_EQ_STR(H.strategy, "servers");
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=servers", "wrfrst_d01"), 0);
  TSR_CHECK_EQ_STR(H.strategy, "");
  TSR_CHECK_EQ_INT(H.set, 0);
  TSR_CHECK_EQ_INT(P("run/*/wrfout*:stride=4", "run/a/wrfout_d01"), 0); /* full path */
  TSR_CHECK_EQ_INT(H.stride, 4);
  TSR_CHECK_EQ_INT(P("wrfout_d0?_*:stride=4", "wrfout_d01_2026-01-01_00:00:00"), 0);
  TSR_CHECK_EQ_INT(H.stride, 4);
  TSR_CHECK_EQ_INT(P("*.nc:stride=5", "out/x.nc"), 0);
  TSR_CHECK_EQ_INT(H.stride, 5);
  /* First matching globbed group wins; later matches are ignored. */
  TSR_CHECK_EQ_INT(P("wrf*:aggregators=2,wrfout*:aggregators=4:stride=3", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.aggregators, 2);
  TSR_CHECK_EQ_INT(H.stride, 0);
  TSR_CHECK_EQ_INT(P("wrfrst*:aggregators=9,wrfout*:aggregators=4,wrf*:aggregators=2", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.aggregators, 4);
  /* The globbed group applies over every unglobbed group, wherever it stands. */
  TSR_CHECK_EQ_INT(P("wrfout*:stride=3,stride=1:aggregators=6", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.stride, 3);
  TSR_CHECK_EQ_INT(H.aggregators, 6);
  TSR_CHECK_EQ_INT(P("wrfout*:stride=3,stride=1:aggregators=6", "history.nc"), 0);
  TSR_CHECK_EQ_INT(H.stride, 1);
  /* The design's example string. */
  const char *ex = "wrfout*:strategy=servers:io_groups=2:io_tasks=2:backend=pnetcdf,"
                   "wrfrst*:strategy=aggregate:aggregators=4";
  TSR_CHECK_EQ_INT(P(ex, "wrfrst_d01_2026-01-01_00:00:00"), 0);
  TSR_CHECK_EQ_STR(fmt(&H), "strategy=aggregate:aggregators=4");
  TSR_CHECK_EQ_INT(P(ex, "wrfout_d01"), 0);
  TSR_CHECK_EQ_STR(fmt(&H), "strategy=servers:backend=pnetcdf:io_groups=2:io_tasks=2");
}

/* Expect text to fail with path NULL, naming key. */
#define BAD_NULL(text, key)                                                                    \
  do {                                                                                         \
    TSR_CHECK_EQ_INT(P(text, NULL), TSR_EHINT);                                                       \
    CHECK_ERR_HAS("hint '" key "=");                                                          \
    CHECK_ERR_HAS("conflicts with " key "=");                                                 \
  } while (0)

static void test_path_null(void) {
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=servers:io_groups=2:io_tasks=3:server_ranks=first:aggregators=7:"
              "server_pick=idle",
              NULL),
            0);
  TSR_CHECK_EQ_STR(H.strategy, "servers");
  TSR_CHECK_EQ_INT(H.io_groups, 2);
  TSR_CHECK_EQ_INT(H.io_tasks, 3);
  TSR_CHECK_EQ_INT(H.server_ranks_first, 1);
  TSR_CHECK_EQ_INT(H.aggregators, 0); /* not a layout key */
  TSR_CHECK_EQ_INT(H.server_pick_idle, 0);
  TSR_CHECK_EQ_INT(H.set, TSR__H_STRATEGY | TSR__H_IO_GROUPS | TSR__H_IO_TASKS | TSR__H_SERVER_RANKS);
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=aggregate", NULL), 0); /* only strategy=servers is layout */
  TSR_CHECK_EQ_INT(H.set, 0);
  TSR_CHECK_EQ_INT(P("strategy=aggregate:aggregators=2,wrfout*:strategy=servers:io_groups=1:io_tasks=1", NULL), 0);
  TSR_CHECK_EQ_STR(H.strategy, "servers");
  TSR_CHECK_EQ_INT(H.aggregators, 2);
  TSR_CHECK_EQ_INT(P("wrfout*:strategy=servers:io_groups=2:io_tasks=2:backend=pnetcdf,"
              "wrfrst*:strategy=aggregate:aggregators=4",
              NULL),
            0);
  TSR_CHECK_EQ_STR(fmt(&H), "strategy=servers:io_groups=2:io_tasks=2");
  BAD_NULL("wrfout*:io_groups=2,wrfrst*:io_groups=4", "io_groups");
  BAD_NULL("wrfout*:server_ranks=first,wrfrst*:server_ranks=last", "server_ranks");
  BAD_NULL("io_tasks=1,wrfout*:io_tasks=2", "io_tasks");
  /* The same strings are fine once a file is named: only one group applies. */
  TSR_CHECK_EQ_INT(P("wrfout*:io_groups=2,wrfrst*:io_groups=4", "wrfrst_d01"), 0);
  TSR_CHECK_EQ_INT(H.io_groups, 4);
  TSR_CHECK_EQ_INT(P("io_tasks=1,wrfout*:io_tasks=2", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.io_tasks, 2);
  /* Agreeing groups are fine; later unglobbed groups still override earlier ones. */
  TSR_CHECK_EQ_INT(P("io_groups=3,io_groups=2,wrfout*:io_groups=2,wrfrst*:io_groups=2:io_tasks=4", NULL), 0);
  TSR_CHECK_EQ_INT(H.io_groups, 2);
  TSR_CHECK_EQ_INT(H.io_tasks, 4);
}

static void test_strict(void) {
  BAD("strategy=serial:foo=1", "unknown hint key 'foo'");
  TSR_CHECK_EQ_INT(P("hints_strict=0:foo=1", NULL), 0);
  TSR_CHECK_EQ_INT(H.strict, 0);
  TSR_CHECK_EQ_INT(P("foo=1:hints_strict=0:strategy=split", NULL), 0); /* first pass finds it */
  TSR_CHECK_EQ_STR(H.strategy, "split");
  TSR_CHECK_EQ_INT(H.set, TSR__H_STRICT | TSR__H_STRATEGY);
  TSR_CHECK_EQ_INT(P("foo=1,hints_strict=0", "x"), 0);
  TSR_CHECK_EQ_INT(P("hints_strict=0,foo=1,hints_strict=1", "x"), TSR_EHINT); /* the merged value counts */
  TSR_CHECK_EQ_INT(P("foo=1,wrfout*:hints_strict=0", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(P("foo=1,wrfout*:hints_strict=0", "wrfrst_d01"), TSR_EHINT);
  /* A group that does not apply may excuse its own keys... */
  TSR_CHECK_EQ_INT(P("wrfout*:hints_strict=0:newkey=1", NULL), 0);
  TSR_CHECK_EQ_INT(H.strict, 1);
  TSR_CHECK_EQ_INT(P("wrfout*:newkey=1:hints_strict=0", "wrfrst_d01"), 0);
  /* ...but not another group's. */
  TSR_CHECK_EQ_INT(P("wrfout*:hints_strict=0,wrfrst*:newkey=1", NULL), TSR_EHINT);
  /* An earlier source's hints_strict=0 is in h already. */
  tsr__hints_defaults(&H);
  H.strict = 0;
  TSR_CHECK_EQ_INT(tsr__hints_parse("foo=1:stride=2", NULL, &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(H.stride, 2);
  TSR_CHECK_EQ_INT(tsr__hints_parse("hints_strict=1:foo=1", NULL, &H, err, sizeof err), TSR_EHINT);
  /* Leniency covers unknown keys only, never malformed hints. */
  TSR_CHECK_EQ_INT(P("hints_strict=0:=x", NULL), TSR_EHINT);
  TSR_CHECK_EQ_INT(P("hints_strict=0:aggregators=x", NULL), TSR_EHINT);
  TSR_CHECK_EQ_INT(P("hints_strict=0:foo=1:foo=2", NULL), 0);
  TSR_CHECK_EQ_INT(P("hints_strict=0:f\xc3\xb6o=1", NULL), TSR_EHINT);
}

static void test_passthrough(void) {
  TSR_CHECK_EQ_INT(P("cb_nodes=4:striping_unit=1m:romio_cb_write=enable:nc_var_align_size=1k:"
              "cb_buffer_size=16m:striping_factor=8:ind_wr_buffer_size=512k:nc_ibuf_size=2g:"
              "nc_header_read_chunk_size=256k:cb_config_list=*",
              NULL),
            0);
  TSR_CHECK_EQ_INT(H.npass, 10);
  TSR_CHECK_EQ_INT(H.set, 0);
  TSR_CHECK_EQ_STR(H.pass[0].key, "cb_nodes");
  TSR_CHECK_EQ_STR(H.pass[0].value, "4");
  TSR_CHECK_EQ_STR(H.pass[1].key, "striping_unit");
  TSR_CHECK_EQ_STR(H.pass[1].value, "1048576");
  TSR_CHECK_EQ_STR(H.pass[2].value, "enable");
  TSR_CHECK_EQ_STR(H.pass[3].value, "1024");
  TSR_CHECK_EQ_STR(H.pass[4].value, "16777216");
  TSR_CHECK_EQ_STR(H.pass[5].value, "8");
  TSR_CHECK_EQ_STR(H.pass[6].value, "524288");
  TSR_CHECK_EQ_STR(H.pass[7].value, "2147483648");
  TSR_CHECK_EQ_STR(H.pass[8].value, "262144");
  TSR_CHECK_EQ_STR(H.pass[9].value, "*");
  /* Every listed key passes, and so do romio_, cb_ and nc_ prefixed ones. */
  TSR_CHECK_EQ_INT(P("romio_cb_read=disable:romio_ds_write=disable:romio_ds_read=automatic:"
              "romio_no_indep_rw=true:ind_rd_buffer_size=4m:collective_buffering=true:"
              "direct_write=true:direct_read=false:nc_header_align_size=1m:nc_record_align_size=4k:"
              "nc_in_place_swap=enable:pnetcdf_subfiling=disable:nc_num_subfiles=2:"
              "romio_lustre_co_ratio=2:cb_pfr=disable:nc_burst_buf=enable",
              NULL),
            0);
  TSR_CHECK_EQ_INT(H.npass, 16);
  TSR_CHECK_EQ_STR(H.pass[4].value, "4194304");
  TSR_CHECK_EQ_STR(H.pass[15].key, "nc_burst_buf");
  /* A later group (or source) replaces the value in place. */
  TSR_CHECK_EQ_INT(P("cb_nodes=4:striping_unit=1m,cb_nodes=8", NULL), 0);
  TSR_CHECK_EQ_INT(H.npass, 2);
  TSR_CHECK_EQ_STR(H.pass[0].key, "cb_nodes");
  TSR_CHECK_EQ_STR(H.pass[0].value, "8");
  TSR_CHECK_EQ_STR(fmt(&H), "cb_nodes=8:striping_unit=1048576");
  tsr__hints_defaults(&H);
  TSR_CHECK_EQ_INT(tsr__hints_parse("striping_unit=1m", NULL, &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(tsr__hints_parse("striping_unit=4m:cb_nodes=2", NULL, &H, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(H.npass, 2);
  TSR_CHECK_EQ_STR(H.pass[0].value, "4194304");
  /* Globbed groups carry pass-through keys too. */
  TSR_CHECK_EQ_INT(P("cb_nodes=2,wrfout*:cb_nodes=16", "wrfout_d01"), 0);
  TSR_CHECK_EQ_STR(H.pass[0].value, "16");
  TSR_CHECK_EQ_INT(P("wrfout*:cb_nodes=16", NULL), 0);
  TSR_CHECK_EQ_INT(H.npass, 0);
  BAD("cb_nodes=-1", "~hint 'cb_nodes=-1': expected a size");
  BAD("striping_unit=abc", "~hint 'striping_unit=abc'");
  BAD("cb_buffer_size=2g", "~hint 'cb_buffer_size=2g': expected a size <= 2147483647");
  BAD("nc_var_align_size=1.5k", "~hint 'nc_var_align_size=1.5k'");
  BAD("romio_cb_write=", "hint 'romio_cb_write=': missing value");
  BAD("romio_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
      "~is longer than 63 characters");
  /* At most TSR__MAX_PASSTHROUGH keys, in one group or over several. */
  char buf[2048];
  size_t o = 0;
  for (int i = 0; i <= TSR__MAX_PASSTHROUGH; i++)
    o += (size_t)snprintf(buf + o, sizeof buf - o, "%sromio_k%d=1", i ? ":" : "", i);
  BAD(buf, "~more than 32 pass-through hints");
  for (size_t i = 0; i < o; i++)
    if (buf[i] == ':') buf[i] = ',';
  BAD(buf, "~more than 32 pass-through hints");
  char *last = strrchr(buf, ',');
  *last = '\0';
  TSR_CHECK_EQ_INT(P(buf, NULL), 0);
  TSR_CHECK_EQ_INT(H.npass, TSR__MAX_PASSTHROUGH);
  strcat(buf, ",romio_k0=2"); /* replacing keeps the count */
  TSR_CHECK_EQ_INT(P(buf, NULL), 0);
  TSR_CHECK_EQ_INT(H.npass, TSR__MAX_PASSTHROUGH);
  TSR_CHECK_EQ_STR(H.pass[0].value, "2");
}

static void test_resolve(void) {
  tsr__hints h;
  unsetenv("TESSERA_HINTS");
  tsr__hints_defaults(&h);
  h.io_tasks = 7; /* resolve does not reset defaults */
  TSR_CHECK_EQ_INT(tsr__hints_resolve("aggregators=1:stride=5", "aggregators=2:writer=1", "f.nc", &h, err,
                               sizeof err),
            0);
  TSR_CHECK_EQ_INT(h.aggregators, 2);
  TSR_CHECK_EQ_INT(h.stride, 5);
  TSR_CHECK_EQ_INT(h.writer, 1);
  TSR_CHECK_EQ_INT(h.io_tasks, 7);
  setenv("TESSERA_HINTS", "aggregators=3:cb_nodes=2", 1);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(tsr__hints_resolve("aggregators=1:stride=5:cb_nodes=8", "aggregators=2:writer=1", "f.nc",
                               &h, err, sizeof err),
            0);
  TSR_CHECK_EQ_INT(h.aggregators, 3);
  TSR_CHECK_EQ_INT(h.stride, 5);
  TSR_CHECK_EQ_INT(h.writer, 1);
  TSR_CHECK_EQ_STR(fmt(&h), "aggregators=3:stride=5:writer=1:cb_nodes=2");
  /* The environment's globs see the path too. */
  setenv("TESSERA_HINTS", "wrfout*:strategy=servers:io_groups=1:io_tasks=2,x*:aggregators=5", 1);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(tsr__hints_resolve("strategy=serial", NULL, NULL, &h, err, sizeof err), 0);
  TSR_CHECK_EQ_STR(h.strategy, "servers");
  TSR_CHECK_EQ_INT(h.aggregators, 0);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(tsr__hints_resolve("strategy=serial", "aggregators=2", "x.nc", &h, err, sizeof err), 0);
  TSR_CHECK_EQ_STR(h.strategy, "serial");
  TSR_CHECK_EQ_INT(h.aggregators, 5);
  /* hints_strict=0 in a later source excuses unknown keys in an earlier one. */
  setenv("TESSERA_HINTS", "hints_strict=0", 1);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(tsr__hints_resolve("foo=1", "bar=2:stride=3", "f", &h, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(h.stride, 3);
  TSR_CHECK_EQ_INT(h.strict, 0);
  /* Errors say which source they came from, and leave h untouched. */
  setenv("TESSERA_HINTS", "stride=0", 1);
  tsr__hints_defaults(&h);
  TSR_CHECK_EQ_INT(tsr__hints_resolve("aggregators=2", NULL, "f", &h, err, sizeof err), TSR_EHINT);
  TSR_CHECK_EQ_STR(err, "hint 'stride=0': expected an integer >= 1 (in TESSERA_HINTS)");
  TSR_CHECK_EQ_INT(h.aggregators, 0);
  unsetenv("TESSERA_HINTS");
  TSR_CHECK_EQ_INT(tsr__hints_resolve("foo=1", NULL, "f", &h, err, sizeof err), TSR_EHINT);
  TSR_CHECK_EQ_STR(err, "unknown hint key 'foo' (in tsr_init hints)");
  TSR_CHECK_EQ_INT(tsr__hints_resolve(NULL, "foo=1", "f", &h, err, sizeof err), TSR_EHINT);
  TSR_CHECK_EQ_STR(err, "unknown hint key 'foo' (in tsr_create hints)");
  TSR_CHECK_EQ_INT(tsr__hints_resolve(NULL, NULL, NULL, &h, err, sizeof err), 0);
  TSR_CHECK_EQ_INT(h.set, 0);
}

static void test_format(void) {
  TSR_CHECK_EQ_INT(P("aggregators=2:strategy=aggregate", NULL), 0);
  TSR_CHECK_EQ_STR(fmt(&H), "strategy=aggregate:aggregators=2");
  const char *all = "strategy=servers:backend=null:format=cdf5:slab_bytes=1m:buffer_bytes=1536k:"
                    "aggregators=3:stride=2:io_groups=2:io_tasks=4:server_ranks=first:"
                    "server_pick=idle:hints_strict=0:writer=1:exchange=alltoall:"
                    "frames_per_outfile=6:cb_nodes=4:romio_cb_write=enable";
  TSR_CHECK_EQ_INT(P(all, NULL), 0);
  TSR_CHECK_EQ_STR(fmt(&H), all);
  TSR_CHECK_EQ_INT(P("format=64bit_data:slab_bytes=1025:buffer_bytes=2048m", NULL), 0);
  TSR_CHECK_EQ_STR(fmt(&H), "format=cdf5:slab_bytes=1025:buffer_bytes=2g");
  /* Round trip: the formatted string parses back to the same hints. */
  TSR_CHECK_EQ_INT(P(all, NULL), 0);
  tsr__hints a = H;
  char text[1024];
  tsr__hints_format(&a, text, sizeof text);
  TSR_CHECK_EQ_INT(P(text, NULL), 0);
  TSR_CHECK_EQ_INT(memcmp(&a, &H, sizeof a) == 0, 1);
  /* A short buffer truncates, always terminated. */
  char small[10];
  memset(small, 'z', sizeof small);
  tsr__hints_format(&a, small, sizeof small);
  TSR_CHECK_EQ_STR(small, "strategy=");
  tsr__hints_format(&a, small, 1);
  TSR_CHECK_EQ_STR(small, "");
}

/* Every key set at once prints in the order of core/hint_keys.h, which is the
 * order of the key table before it moved there (TESSERA_HINTS_DISPLAY shows
 * this string), and parses back to the same hints. */
static void test_format_every_key(void) {
  const char *all =
      "strategy=servers:backend=null:format=netcdf4:slab_bytes=1m:buffer_bytes=1536k:"
      "aggregators=3:stride=2:io_groups=2:io_tasks=4:server_ranks=first:io_placement=nodes:"
      "server_pick=idle:hints_strict=0:writer=1:exchange=alltoall:frames_per_outfile=6:"
      "clobber=force:safe_mode=1:put_mode=deferred:deflate=1:shuffle=1:quantize=bitround:12:"
      "zstd=5:chunks=1x64x64:grib_bits=12:grib_packing=ccsds:transport=rma:"
      "server_buffer_bytes=1m:concentrators=per_node:precision=float:null_delay_ms=3:"
      "stage_dir=/tmp/stage:stage_min_bytes=4k:stage_drain=finalize:stage_format=log:"
      "checksum=crc32:reduce=T2/max@6+T/mean@6:reduce_prefix=xtrm:cb_nodes=4";
  TSR_CHECK_EQ_INT(P(all, NULL), 0);
  TSR_CHECK_EQ_STR(fmt(&H), all);
  tsr__hints a = H;
  TSR_CHECK_EQ_INT(P(fmt(&a), NULL), 0);
  TSR_CHECK_EQ_INT(memcmp(&a, &H, sizeof a), 0);
}

/* Every name the registries hold parses as a hint and is kept as given; the
 * parser knows no name of its own. */
static void test_registries(void) {
  char text[64];
  TSR_CHECK_EQ_INT(tsr__strategy_count() >= 5, 1);
  for (int i = 0; i < tsr__strategy_count(); i++) {
    snprintf(text, sizeof text, "strategy=%s", tsr__strategy_name_at(i));
    TSR_CHECK_EQ_INT(P(text, NULL), 0);
    TSR_CHECK_EQ_STR(H.strategy, tsr__strategy_name_at(i));
  }
  /* A strategy is one row, its read side included: the reader tsr_open
   * takes for strategy=<name> is the row's `read`, or a row without one is
   * refused by name; the strategies that read each rank's tile share the
   * default's read side, the registry's for no strategy=. */
  const tsr__read_ops *each = NULL, *rd;
  const char *as = NULL;
  char msg[256] = "";
  TSR_CHECK_OK(tsr__strategy_reader("", &each, &as, msg, sizeof msg));
  TSR_CHECK(each && each->setup && each->opened && each->get);
  TSR_CHECK_EQ_STR(as, "");
  int readers = 0;
  for (int i = 0; i < tsr__strategy_count(); i++) {
    const char *name = tsr__strategy_name_at(i);
    const tsr__strategy_ops *ops = NULL;
    TSR_CHECK_OK(tsr__strategy_find(name, &ops));
    if (!ops) continue;
    msg[0] = '\0';
    int rc = tsr__strategy_reader(name, &rd, &as, msg, sizeof msg);
    if (ops->read) {
      readers++;
      TSR_CHECK_OK(rc);
      TSR_CHECK(rd == ops->read);
      TSR_CHECK_EQ_STR(as, name);
      TSR_CHECK(rd->setup && rd->opened && rd->get);
    } else {
      TSR_CHECK_RC(rc, TSR_EHINT);
      TSR_CHECK(rd == NULL);
      snprintf(text, sizeof text, "strategy=%s does not read files", name);
      TSR_CHECK(strstr(msg, text) == msg);
    }
  }
  TSR_CHECK(readers >= 4); /* serial, direct, aggregate, split */
  TSR_CHECK_OK(tsr__strategy_reader("direct", &rd, &as, msg, sizeof msg));
  TSR_CHECK(rd == each); /* direct reads as every rank its own tile */
  /* The message lists the names that read, in the registry's order, as it
   * did when core held the list. */
  TSR_CHECK_RC(tsr__strategy_reader("servers", &rd, &as, msg, sizeof msg), TSR_EHINT);
  TSR_CHECK_EQ_STR(msg, "strategy=servers does not read files: use strategy=serial, direct, "
                        "aggregate or split");
  TSR_CHECK_EQ_INT(tsr__backend_count() >= 3, 1);
  for (int i = 0; i < tsr__backend_count(); i++) {
    snprintf(text, sizeof text, "backend=%s", tsr__backend_name_at(i));
    TSR_CHECK_EQ_INT(P(text, NULL), 0);
    TSR_CHECK_EQ_STR(H.backend, tsr__backend_name_at(i));
  }
}

/* The storage keys of netCDF-4 and GRIB2: quantize's value holds a ':' and
 * runs on over the next token; chunks is a list; both print back in the form
 * the parser takes. */
static void test_storage_keys(void) {
  TSR_CHECK_EQ_INT(P("format=netcdf4:quantize=bitround:12:deflate=1:shuffle=1:chunks=1x64x64", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 3);
  TSR_CHECK_EQ_INT(H.quantize.mode, TSR__QUANTIZE_BITROUND);
  TSR_CHECK_EQ_INT(H.quantize.nsd, 12);
  TSR_CHECK_EQ_INT(H.deflate, 1);
  TSR_CHECK_EQ_INT(H.shuffle, 1);
  TSR_CHECK_EQ_INT(H.chunks.n, 3);
  TSR_CHECK_EQ_INT(H.chunks.len[2], 64);
  TSR_CHECK_EQ_STR(fmt(&H), "format=netcdf4:deflate=1:shuffle=1:quantize=bitround:12:chunks=1x64x64");
  tsr__hints first = H;
  TSR_CHECK_EQ_INT(P(fmt(&first), NULL), 0); /* what format prints parses to the same hints */
  TSR_CHECK_EQ_INT(memcmp(&first, &H, sizeof H), 0);
  TSR_CHECK_EQ_INT(P("quantize=granularbr:3:zstd=5:chunks=contiguous", NULL), 0);
  TSR_CHECK_EQ_INT(H.quantize.mode, TSR__QUANTIZE_GRANULARBR);
  TSR_CHECK_EQ_INT(H.zstd, 5);
  TSR_CHECK_EQ_INT(H.chunks.n, TSR__CHUNKS_CONTIGUOUS);
  TSR_CHECK_EQ_STR(fmt(&H), "quantize=granularbr:3:zstd=5:chunks=contiguous");
  TSR_CHECK_EQ_INT(P("format=grib2:grib_bits=12:grib_packing=ccsds", NULL), 0);
  TSR_CHECK_EQ_INT(H.format, 16);
  TSR_CHECK_EQ_INT(H.grib_bits, 12);
  TSR_CHECK_EQ_INT(H.grib_packing_ccsds, 1);
  BAD("deflate=10", "hint 'deflate=10': expected 0, 1, 2, 3, 4, 5, 6, 7, 8 or 9");
  BAD("quantize=bitround", "~hint 'quantize=bitround': expected none, bitround:N");
  BAD("quantize=bitround:0", "~expected none, bitround:N");
  BAD("quantize=bitround:53", "~expected none, bitround:N");
  BAD("quantize=bitgroom:16", "~expected none, bitround:N");
  BAD("quantize=round:3", "~expected none, bitround:N");
  BAD("quantize=bitround:12:strategy", "~hint 'quantize=bitround:12:strategy'");
  BAD("chunks=0x4", "~hint 'chunks=0x4': expected auto, contiguous or chunk lengths");
  BAD("chunks=4x", "~expected auto, contiguous or chunk lengths");
  BAD("chunks=1x1x1x1x1x1x1x1x1", "~expected auto, contiguous or chunk lengths");
  BAD("zstd=0", "~hint 'zstd=0': expected 1, 2,");
  BAD("grib_packing=jpeg", "hint 'grib_packing=jpeg': expected simple or ccsds");
}

/* reduce=: items joined by '+', a period after '@' the same for all; the
 * glob of the group names the stream; printed back as given. */
static void test_reduce_keys(void) {
  TSR_CHECK_EQ_INT(P("wrfout*:reduce=T2/max@6+T2/min@6+T/mean@6:reduce_prefix=wrfx", "wrfout_d01"), 0);
  TSR_CHECK_EQ_INT(H.reduce.n, 3);
  TSR_CHECK_EQ_INT(H.reduce.period, 6);
  TSR_CHECK_EQ_STR(H.reduce.item[2].var, "T");
  TSR_CHECK_EQ_INT(H.reduce.item[2].op, TSR__RED_MEAN);
  TSR_CHECK_EQ_STR(H.reduce.glob, "wrfout*");
  TSR_CHECK_EQ_STR(H.reduce_prefix, "wrfx");
  TSR_CHECK_EQ_STR(fmt(&H), "reduce=T2/max@6+T2/min@6+T/mean@6:reduce_prefix=wrfx");
  TSR_CHECK_EQ_INT(P("reduce=T2/count+T2/std+T2/sum", NULL), 0);
  TSR_CHECK_EQ_INT(H.reduce.period, 0);
  TSR_CHECK_EQ_STR(H.reduce.glob, "");
  TSR_CHECK_EQ_STR(H.reduce_prefix, "wrfxtrm");
  TSR_CHECK_EQ_INT(P("wrfrst*:reduce=T2/max", "wrfout_d01"), 0); /* checked, not applied */
  TSR_CHECK_EQ_INT(H.reduce.n, 0);
  BAD("reduce=T2/median", "~hint 'reduce=T2/median': expected none or items VAR/OP[@N]");
  BAD("reduce=T2/max@0", "~expected none or items");
  BAD("reduce=T2/max@-1", "~expected none or items");
  BAD("reduce=T2/max@6+T2/min@3", "~expected none or items");
  BAD("reduce=T2/max+T2/max", "~expected none or items");
  BAD("reduce=T2/max+", "~expected none or items");
  BAD("reduce=/max", "~expected none or items");
  BAD("reduce=T2", "~expected none or items");
  BAD("reduce_prefix=wrf_x", "~hint 'reduce_prefix=wrf_x': expected a name");
}

int main(void) {
  /* The ambient environment must not leak into the expectations. */
  unsetenv("TESSERA_HINTS");
  unsetenv("TESSERA_VERBOSE");
  tsr_test_case("%s", "test_defaults");
  test_defaults();
  tsr_test_case("%s", "test_registries");
  test_registries();
  tsr_test_case("%s", "test_parse_size");
  test_parse_size();
  tsr_test_case("%s", "test_every_key");
  test_every_key();
  tsr_test_case("%s", "test_empty");
  test_empty();
  tsr_test_case("%s", "test_bad_values");
  test_bad_values();
  tsr_test_case("%s", "test_bad_syntax");
  test_bad_syntax();
  tsr_test_case("%s", "test_big");
  test_big();
  tsr_test_case("%s", "test_globs");
  test_globs();
  tsr_test_case("%s", "test_path_null");
  test_path_null();
  tsr_test_case("%s", "test_strict");
  test_strict();
  tsr_test_case("%s", "test_passthrough");
  test_passthrough();
  tsr_test_case("%s", "test_resolve");
  test_resolve();
  tsr_test_case("%s", "test_format");
  test_format();
  tsr_test_case("%s", "test_format_every_key");
  test_format_every_key();
  test_storage_keys();
  tsr_test_case("%s", "test_reduce_keys");
  test_reduce_keys();
  return tsr_test_verdict("hints");
}
