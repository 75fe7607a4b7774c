/* Bounded reads of text inputs (contract in text_file.h). */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno; the namelist library sets none */
#endif
#include "text_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int bench_text_is_regular(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int refuse(char *err, size_t errlen, const char *path, const char *why) {
  if (err && errlen) snprintf(err, errlen, "%s: %s", path, why);
  return -1;
}

int bench_text_read(const char *path, const char *what, char **text, size_t *len, char *err,
                    size_t errlen) {
  *text = NULL;
  *len = 0;
  char why[256];
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
    return refuse(err, errlen, path, why);
  }
  /* A regular file says its size; a device or a pipe is read up to the
   * bound and one byte more, which is how a larger one shows. */
  struct stat st;
  if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > BENCH_TEXT_MAX) {
    fclose(fp);
    snprintf(why, sizeof why, "%lld bytes, larger than the %s a %s may hold",
             (long long)st.st_size, BENCH_TEXT_MAX_TEXT, what);
    return refuse(err, errlen, path, why);
  }
  size_t cap = 1 << 16, n = 0, got;
  char *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
    n += got;
    if (n > BENCH_TEXT_MAX) break;
    if (n + 1 == cap) {
      size_t want = cap * 2 > BENCH_TEXT_MAX + 2 ? BENCH_TEXT_MAX + 2 : cap * 2;
      char *bigger = realloc(buf, want);
      if (!bigger) free(buf);
      buf = bigger;
      cap = want;
    }
  }
  int bad = ferror(fp);
  fclose(fp);
  if (!buf) snprintf(why, sizeof why, "out of memory reading the %s", what);
  else if (bad) snprintf(why, sizeof why, "read error");
  else if (n > BENCH_TEXT_MAX)
    snprintf(why, sizeof why, "larger than the %s a %s may hold (read stopped there)",
             BENCH_TEXT_MAX_TEXT, what);
  else if (memchr(buf, '\0', n))
    snprintf(why, sizeof why, "not a text file (contains NUL bytes)");
  else {
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
  }
  free(buf);
  return refuse(err, errlen, path, why);
}
