/* Bounded fuzz of the bench's CDL schema reader (apps/bench/schema_cdl.c:
 * ncgen into a template, then the NetCDF inquiry that maps it onto the
 * bench's schema, then bench_schema_resize): a seeded mutation loop over
 * small CDL headers, run on every CI build. Each input is one ncgen run, so
 * the count is small (ncgen's start-up dominates: < 10 s in all).
 *
 * Mutations are both byte-level (tests/common/tsr_fuzz.h) and CDL-aware,
 * because random bytes rarely get past ncgen's parser: numbers become edge
 * values (0, -1, 2^31, 2^32, UNLIMITED), types become other types (string,
 * int64, ...), lines are duplicated or dropped. Every input must load, or be
 * rejected with -1 and a message, with the schema left empty; never crash,
 * and never leave the template behind in the work directory (it did, when
 * ncgen failed after creating it: found by this test).
 *
 * Usage: test_cdl_fuzz ITERATIONS SEED WORKDIR [CDL...] (the files join the
 * built-in seeds). MPI on one rank (the reader is collective). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "tsr_fuzz.h"
#include "tsr_test.h"

/* A WRF-like header (staggered and record dimensions, Times, attributes of
 * several types) and corner cases the reader must accept. The templates are
 * CDF-2 (ncgen -k nc6): the extended types (ubyte, int64, ...) come only
 * from the type mutation, and must be rejected cleanly. */
static const char *const builtin[] = {
    "netcdf wrf {\ndimensions:\n\tTime = UNLIMITED ;\n\tDateStrLen = 19 ;\n"
    "\twest_east = 8 ;\n\tsouth_north = 6 ;\n\tbottom_top = 3 ;\n\twest_east_stag = 9 ;\n"
    "\tbottom_top_stag = 4 ;\nvariables:\n\tchar Times(Time, DateStrLen) ;\n"
    "\tfloat U(Time, bottom_top, south_north, west_east_stag) ;\n"
    "\t\tU:FieldType = 104 ;\n\t\tU:MemoryOrder = \"XYZ\" ;\n\t\tU:stagger = \"X\" ;\n"
    "\tfloat W(Time, bottom_top_stag, south_north, west_east) ;\n"
    "\tdouble ZNU(Time, bottom_top) ;\n\tint ISLTYP(Time, south_north, west_east) ;\n"
    "\t\tISLTYP:missing = -999 ;\n\n// global attributes:\n"
    "\t\t:TITLE = \"fuzz\" ;\n\t\t:DX = 3000.f ;\n\t\t:GRIDS = 1s, 2s ;\n}\n",
    "netcdf empty {\n}\n",
    "netcdf fixed {\ndimensions:\n\twest_east = 4 ;\n\tsouth_north = 4 ;\n\tlevels = 2 ;\n"
    "variables:\n\tshort MASK(levels, south_north, west_east) ;\n\tdouble COUNT ;\n"
    "\tbyte FLAG(levels) ;\n\t\tFLAG:flag_values = 0b, 1b ;\n}\n",
};
enum { NBUILTIN = sizeof builtin / sizeof builtin[0] };

static const char *const numbers[] = {"0",          "1",          "-1",        "2147483647",
                                      "2147483648", "2000000000", "4294967296", "UNLIMITED",
                                      "1e30",       "257",        "9223372036854775807"};
static const char *const types[] = {"char",  "byte",  "ubyte",  "short", "ushort", "int",
                                    "uint",  "int64", "uint64", "float", "double", "string"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Replace buf[at, at+len) with @p with; returns the new length. */
static size_t replace(char *buf, size_t n, size_t cap, size_t at, size_t len, const char *with) {
  size_t w = strlen(with);
  if (n - len + w >= cap) return n;
  memmove(buf + at + w, buf + at + len, n - at - len);
  memcpy(buf + at, with, w);
  return n - len + w;
}

static int word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The k-th (mod count) token that @p match accepts: its start and length. */
static int pick_token(tsr_fuzz *z, const char *buf, size_t n, int (*match)(const char *, size_t),
                      size_t *at, size_t *len) {
  size_t starts[512], lens[512], m = 0;
  for (size_t i = 0; i < n && m < 512;) {
    size_t j = i;
    while (j < n && word_char(buf[j])) j++;
    if (j > i && (i == 0 || !word_char(buf[i - 1])) && match(buf + i, j - i)) {
      starts[m] = i;
      lens[m++] = j - i;
    }
    i = j > i ? j : i + 1;
  }
  if (!m) return 0;
  size_t k = tsr_fuzz_next(z) % m;
  *at = starts[k];
  *len = lens[k];
  return 1;
}

static int is_number(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

static int is_type(const char *s, size_t len) {
  for (size_t i = 0; i < COUNT(types); i++)
    if (strlen(types[i]) == len && !strncmp(s, types[i], len)) return 1;
  return 0;
}

/* A line (from @p at to its newline, included): its start and length. */
static void line_at(const char *buf, size_t n, size_t at, size_t *start, size_t *len) {
  size_t a = at, b = at;
  while (a > 0 && buf[a - 1] != '\n') a--;
  while (b < n && buf[b] != '\n') b++;
  *start = a;
  *len = b - a + (b < n);
}

static size_t mutate_cdl(tsr_fuzz *z, char *buf, size_t n, size_t cap) {
  size_t at, len;
  switch (tsr_fuzz_next(z) % 5) {
  case 0:
    if (pick_token(z, buf, n, is_number, &at, &len))
      return replace(buf, n, cap, at, len, numbers[tsr_fuzz_next(z) % COUNT(numbers)]);
    return n;
  case 1:
    if (pick_token(z, buf, n, is_type, &at, &len))
      return replace(buf, n, cap, at, len, types[tsr_fuzz_next(z) % COUNT(types)]);
    return n;
  case 2: /* drop a line */
    if (!n) return n;
    line_at(buf, n, tsr_fuzz_next(z) % n, &at, &len);
    return replace(buf, n, cap, at, len, "");
  case 3: { /* duplicate a line (a dimension or variable defined twice) */
    if (!n) return n;
    line_at(buf, n, tsr_fuzz_next(z) % n, &at, &len);
    char line[512];
    if (len >= sizeof line) return n;
    memcpy(line, buf + at, len);
    line[len] = '\0';
    return replace(buf, n, cap, at, 0, line);
  }
  default:
    return tsr_fuzz_mutate(z, buf, n, cap);
  }
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_cdl_fuzz ITERATIONS SEED WORKDIR [CDL...]\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  tsr_test_.program = "cdl_fuzz";
  long iters = atol(argv[1]);
  const char *dir = argv[3];
  size_t nseeds = NBUILTIN + (size_t)(argc - 4);
  const char **seeds = calloc(nseeds, sizeof *seeds);
  for (size_t i = 0; i < NBUILTIN; i++) seeds[i] = builtin[i];
  for (int i = 4; i < argc; i++)
    if (!(seeds[NBUILTIN + (size_t)(i - 4)] = tsr_fuzz_slurp(argv[i]))) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  tsr_fuzz z = {strtoull(argv[2], NULL, 10) | 1, seeds, nseeds,
                "{}();:=,\"\n \t0123456789-_.ULfsb"};
  char input[BENCH_PATH], tmpl[BENCH_PATH], err[BENCH_ERR];
  snprintf(input, sizeof input, "%s/cdl_fuzz_%d.cdl", dir, (int)getpid());
  snprintf(tmpl, sizeof tmpl, "%s/.tessera-bench-schema-%d.nc", dir, (int)getpid());
  enum { CAP = 1 << 16 };
  char *buf = malloc(CAP + 1);
  long ok = 0, rejected = 0;
  /* Iteration -1 .. -nseeds: the seeds as they are must load (else ncgen is
   * missing and the fuzz would only ever see rejections). */
  for (long it = -(long)nseeds; it < iters; it++) {
    const char *seed = it < 0 ? seeds[-it - 1] : seeds[tsr_fuzz_next(&z) % nseeds];
    size_t n = strlen(seed);
    if (n > CAP) n = CAP;
    memcpy(buf, seed, n);
    if (it >= 0) {
      int rounds = 1 + (int)(tsr_fuzz_next(&z) % 3);
      for (int r = 0; r < rounds; r++) n = mutate_cdl(&z, buf, n, CAP);
    }
    buf[n] = '\0';
    FILE *fp = fopen(input, "wb");
    if (!fp || fwrite(buf, 1, n, fp) != n) {
      fprintf(stderr, "cannot write %s\n", input);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fclose(fp);
    bench_schema s;
    err[0] = '\0';
    int rc = bench_schema_load_cdl(input, dir, MPI_COMM_WORLD, &s, err, sizeof err);
    if (rc) TSR_CHECKF(s.ndims == 0 && s.nvars == 0 && s.gatts.n == 0,
                       "input %ld rejected, but the schema is not left empty", it);
    if (rc == 0) rc = bench_schema_resize(&s, 13, 9, 4, err, sizeof err);
    if (it < 0) TSR_CHECKF(rc == 0, "seed %ld does not load: %s", -it - 1, err);
    if (rc == 0) {
      ok++;
    } else {
      int clean = rc == -1 && err[0];
      TSR_CHECKF(clean, "input %ld -> %d, message '%s':\n%s", it, rc, err, buf);
      rejected += clean;
    }
    TSR_CHECKF(!exists(tmpl), "input %ld left the template %s:\n%s", it, tmpl, buf);
    remove(tmpl);
    bench_schema_free(&s);
  }
  remove(input);
  printf("cdl fuzz: %ld inputs, %ld loaded, %ld rejected with a message\n", iters + (long)nseeds,
         ok, rejected);
  free(buf);
  int code = tsr_test_verdict("cdl fuzz");
  MPI_Finalize();
  return code;
}
