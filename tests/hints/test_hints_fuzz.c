/* Bounded fuzz of the hint parser: a seeded mutation loop over valid hint
 * strings (flip, insert, delete, duplicate, splice bytes), run on every CI
 * build. Every input must return 0 or TSR_EHINT/TSR_ENOMEM with a message
 * (never crash, never leave a partial result), and whatever parses must
 * format back to a string that parses to the same hints. Usage:
 * test_hints_fuzz [iterations] [seed]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hints.h"
#include "tessera.h"

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

static uint64_t rng;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static const char alphabet[] = "=:,*?[]-_.+ \t09azAZkmg\x01\xff";

static size_t mutate(char *buf, size_t n, size_t cap) {
  int rounds = 1 + (int)(next() % 4);
  for (int r = 0; r < rounds; r++) {
    size_t at = n ? next() % n : 0;
    switch (next() % 5) {
    case 0: /* replace a byte */
      if (n) buf[at] = alphabet[next() % (sizeof alphabet - 1)];
      break;
    case 1: /* insert a byte */
      if (n + 1 < cap) {
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = alphabet[next() % (sizeof alphabet - 1)];
        n++;
      }
      break;
    case 2: /* delete a run */
      if (n) {
        size_t len = 1 + next() % 8;
        if (at + len > n) len = n - at;
        memmove(buf + at, buf + at + len, n - at - len);
        n -= len;
      }
      break;
    case 3: /* duplicate a run */
      if (n && n * 2 < cap) {
        size_t len = 1 + next() % (n - at);
        memmove(buf + at + len, buf + at, n - at);
        n += len;
      }
      break;
    default: { /* splice in part of another seed */
      const char *o = seeds[next() % NSEEDS];
      size_t len = strlen(o), from = next() % len, take = 1 + next() % (len - from);
      if (n + take < cap) {
        memmove(buf + at + take, buf + at, n - at);
        memcpy(buf + at, o + from, take);
        n += take;
      }
    }
    }
  }
  return n;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 0x9e3779b97f4a7c15ull;
  if (!rng) rng = 1;
  long ok = 0, bad = 0, fails = 0;
  char buf[1024], err[512], text[4096];
  for (long i = 0; i < iters; i++) {
    const char *seed = seeds[next() % NSEEDS];
    size_t n = strlen(seed);
    memcpy(buf, seed, n);
    n = mutate(buf, n, sizeof buf - 1);
    buf[n] = '\0';
    tsr__hints h, before;
    tsr__hints_defaults(&h);
    before = h;
    err[0] = '\0';
    int rc = tsr__hints_parse(buf, (next() & 1) ? "run/wrfout_d01" : NULL, &h, err, sizeof err);
    if (rc == 0) {
      ok++;
      /* Round trip: the formatted hints parse back to the same values. */
      tsr__hints again;
      tsr__hints_defaults(&again);
      tsr__hints_format(&h, text, sizeof text);
      h.set = again.set = 0;
      if (tsr__hints_parse(text, NULL, &again, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: '%s' formatted as '%s' does not parse: %s\n", buf, text, err);
        fails++;
      }
    } else if ((rc == TSR_EHINT || rc == TSR_ENOMEM) && err[0] &&
               memcmp(&h, &before, sizeof h) == 0) {
      bad++;
    } else {
      fprintf(stderr, "FAIL: '%s' -> %s, message '%s', hints %s\n", buf, tsr_errname(rc), err,
              memcmp(&h, &before, sizeof h) ? "changed" : "unchanged");
      fails++;
    }
  }
  printf("hint fuzz: %ld inputs, %ld accepted, %ld rejected with a message; %ld passed, %ld failed\n",
         iters, ok, bad, ok + bad - 0, fails);
  return fails ? 1 : 0;
}
