/* Bounded fuzz of the hint parser: a seeded mutation loop over valid hint
 * strings (flip, insert, delete, duplicate, splice bytes), run on every CI
 * build. Every input must return 0 or TSR_EHINT/TSR_ENOMEM with a message
 * (never crash, never leave a partial result), and whatever parses must
 * format back to a string that parses to the same hints. Usage:
 * test_hints_fuzz [iterations] [seed]. Checks and verdict from tsr_test.h
 * (no MPI started). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hints.h"
#include "tsr_fuzz.h"
#include "tessera.h"
#include "tsr_test.h"

static const char *const seeds[] = {
    "strategy=aggregate:aggregators=4:stride=2:cb_buffer_size=16m",
    "wrfout*:strategy=servers:io_groups=2:io_tasks=2:backend=pnetcdf,wrfrst*:strategy=direct",
    "strategy=serial:slab_bytes=1m:writer=0,hints_strict=0:unknown=1",
    "format=cdf5:buffer_bytes=0:striping_unit=1048576:striping_factor=4:romio_cb_write=enable",
    "run/wrf*:strategy=split:clobber=force,strategy=direct:nc_var_align_size=4k",
    "io_groups=1:io_tasks=3:server_ranks=first:server_pick=idle:frames_per_outfile=6",
    "exchange=alltoall:strategy=aggregate, *:strategy=serial",
};
#define NSEEDS (sizeof seeds / sizeof seeds[0])

static const char alphabet[] = "=:,*?[]-_.+ \t09azAZkmg\x01\xff";
int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  tsr_fuzz z = {argc > 2 ? strtoull(argv[2], NULL, 10) : 0x9e3779b97f4a7c15ull, seeds, NSEEDS,
                alphabet};
  if (!z.state) z.state = 1;
  long ok = 0, bad = 0;
  char buf[1024], err[512], text[4096];
  for (long i = 0; i < iters; i++) {
    const char *seed = seeds[tsr_fuzz_next(&z) % NSEEDS];
    size_t n = strlen(seed);
    memcpy(buf, seed, n);
    n = tsr_fuzz_mutate(&z, buf, n, sizeof buf - 1);
    buf[n] = '\0';
    tsr__hints h, before;
    tsr__hints_defaults(&h);
    before = h;
    err[0] = '\0';
    int rc = tsr__hints_parse(buf, (tsr_fuzz_next(&z) & 1) ? "run/wrfout_d01" : NULL, &h, err, sizeof err);
    if (rc == 0) {
      ok++;
      /* Round trip: the formatted hints parse back to the same values. */
      tsr__hints again;
      tsr__hints_defaults(&again);
      tsr__hints_format(&h, text, sizeof text);
      h.set = again.set = 0;
      int again_rc = tsr__hints_parse(text, NULL, &again, err, sizeof err);
      TSR_CHECKF(again_rc == 0, "'%s' formatted as '%s' does not parse: %s", buf, text, err);
    } else {
      int unchanged = memcmp(&h, &before, sizeof h) == 0;
      int rejected = (rc == TSR_EHINT || rc == TSR_ENOMEM) && err[0] && unchanged;
      TSR_CHECKF(rejected, "'%s' -> %s, message '%s', hints %s", buf, tsr_errname(rc), err,
                 unchanged ? "unchanged" : "changed");
      if (rejected) bad++;
    }
  }
  printf("hint fuzz: %ld inputs, %ld accepted, %ld rejected with a message\n", iters, ok, bad);
  return tsr_test_verdict("hint fuzz");
}
