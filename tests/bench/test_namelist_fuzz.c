/* Bounded fuzz of the bench's WRF namelist reader (apps/bench/namelist.c): a
 * seeded mutation loop over real namelists (the test inputs in
 * tests/bench/namelists), run on every CI build. Every input must either
 * parse, or be rejected with a message naming the source and a line
 * ("fuzz.input:LINE: ..."); never crash, never read past the text. Usage:
 * test_namelist_fuzz ITERATIONS SEED NAMELIST... Checks and verdict from
 * tsr_test.h (no MPI started). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namelist.h"
#include "tsr_fuzz.h"
#include "tsr_test.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_namelist_fuzz ITERATIONS SEED NAMELIST...\n");
    return 2;
  }
  long iters = atol(argv[1]);
  size_t nseeds = (size_t)(argc - 3);
  char **seeds = calloc(nseeds, sizeof *seeds);
  for (size_t i = 0; i < nseeds; i++)
    if (!(seeds[i] = tsr_fuzz_slurp(argv[3 + i]))) {
      fprintf(stderr, "cannot read %s\n", argv[3 + i]);
      return 2;
    }
  tsr_fuzz z = {strtoull(argv[2], NULL, 10) | 1, (const char *const *)seeds, nseeds,
                "&/=,.*'\"!\n \t0123456789eE+-_TFtfabcdxyz"};
  enum { CAP = 1 << 16 };
  char *buf = malloc(CAP + 1), err[512], hints[256];
  long ok = 0, rejected = 0;
  for (long it = 0; it < iters; it++) {
    const char *seed = seeds[tsr_fuzz_next(&z) % nseeds];
    size_t n = strlen(seed);
    if (n > CAP) n = CAP;
    memcpy(buf, seed, n);
    n = tsr_fuzz_mutate(&z, buf, n, CAP);
    buf[n] = '\0';
    bench_namelist nl;
    err[0] = '\0';
    int rc = bench_namelist_parse(buf, "fuzz.input", &nl, err, sizeof err);
    if (rc == 0) rc = bench_namelist_hints(&nl, "fuzz.input", hints, sizeof hints, err, sizeof err);
    if (rc == 0) {
      ok++;
    } else {
      int named = strncmp(err, "fuzz.input", 10) == 0;
      TSR_CHECKF(named, "rejected without naming the input: \"%s\"", err);
      if (named) rejected++;
    }
  }
  printf("namelist fuzz: %ld inputs, %ld accepted, %ld rejected with file and line\n", iters,
         ok, rejected);
  for (size_t i = 0; i < nseeds; i++) free(seeds[i]);
  free(seeds);
  free(buf);
  return tsr_test_verdict("namelist fuzz");
}
