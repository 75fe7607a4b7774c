/* A seeded mutation engine for the bounded fuzz tests (hint strings, WRF
 * namelists): xorshift random numbers, and byte-level mutations of a seed
 * input: replace, insert, delete or duplicate a run, or splice in part of
 * another seed. Header-only, so each fuzz test stays one file. */
#ifndef TSR_TEST_FUZZ_H
#define TSR_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t state;
  const char *const *seeds; /* inputs to splice from */
  size_t nseeds;
  const char *alphabet; /* bytes that replace or insert */
} tsr_fuzz;

static inline uint32_t tsr_fuzz_next(tsr_fuzz *z) {
  z->state ^= z->state << 13;
  z->state ^= z->state >> 7;
  z->state ^= z->state << 17;
  return (uint32_t)(z->state >> 16);
}

/* Mutate buf (n bytes, capacity cap) one to four times; returns the new length. */
static inline size_t tsr_fuzz_mutate(tsr_fuzz *z, char *buf, size_t n, size_t cap) {
  size_t na = strlen(z->alphabet);
  int rounds = 1 + (int)(tsr_fuzz_next(z) % 4);
  for (int r = 0; r < rounds; r++) {
    size_t at = n ? tsr_fuzz_next(z) % n : 0;
    switch (tsr_fuzz_next(z) % 5) {
    case 0: /* replace a byte */
      if (n) buf[at] = z->alphabet[tsr_fuzz_next(z) % na];
      break;
    case 1: /* insert a byte */
      if (n + 1 < cap) {
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = z->alphabet[tsr_fuzz_next(z) % na];
        n++;
      }
      break;
    case 2: /* delete a run */
      if (n) {
        size_t len = 1 + tsr_fuzz_next(z) % 8;
        if (at + len > n) len = n - at;
        memmove(buf + at, buf + at + len, n - at - len);
        n -= len;
      }
      break;
    case 3: /* duplicate a run */
      if (n && n * 2 < cap) {
        size_t len = 1 + tsr_fuzz_next(z) % (n - at);
        memmove(buf + at + len, buf + at, n - at);
        n += len;
      }
      break;
    default: { /* splice in part of another seed */
      const char *o = z->seeds[tsr_fuzz_next(z) % z->nseeds];
      size_t len = strlen(o);
      if (!len) break;
      size_t from = tsr_fuzz_next(z) % len, take = 1 + tsr_fuzz_next(z) % (len - from);
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

/* A seed file's text, NUL-terminated (malloc'd; NULL if unreadable). */
static inline char *tsr_fuzz_slurp(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  if (n < 0) n = 0;
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) n = 0;
  if (s) s[n] = '\0';
  fclose(fp);
  return s;
}

#endif
