/* File-system primitives under staging and the drain (contract in tier/fs.h).
 * They lived in stage.c; they sit in a file of their own because the drain's
 * jobs (drain_jobs.c), to which stage.c hands finished files, need them too:
 * with them here, stage.c calls drain_jobs.c and both call this file, never
 * each other. */
#include "tier/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera.h"

int tsr__fs_errno_code(int e) {
  return e == ENOSPC || e == EDQUOT || e == EFBIG ? TSR_ENOSPC : e == ENOMEM ? TSR_ENOMEM : TSR_EACCES;
}

/* The stage's own checks (destination probe, marker) keep EIO as TSR_EACCES,
 * as they always have; the copy and the log report a failing device. */
int tsr__tier_errno_code(int e) { return e == EIO ? TSR_EIO : tsr__fs_errno_code(e); }

int tsr__write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int tsr__promote(const char *tmp, const char *final, int *oserr, char *msg, size_t msglen) {
  if (rename(tmp, final) == 0) return 0;
  int e = errno;
  *oserr = e;
  snprintf(msg, msglen, "cannot rename %s to %s: %s", tmp, final, strerror(e));
  unlink(tmp);
  return e == ENOSPC || e == EDQUOT ? TSR_ENOSPC : TSR_EACCES;
}

int tsr__stage_made(const char *staged, struct timespec *made) {
  size_t n = strlen(staged) + sizeof TSR__DEST_SUFFIX;
  char *marker = malloc(n);
  struct stat sb;
  int from_marker = 0;
  if (marker) {
    snprintf(marker, n, "%s%s", staged, TSR__DEST_SUFFIX);
    from_marker = lstat(marker, &sb) == 0;
    free(marker);
  }
  if (!from_marker && lstat(staged, &sb) != 0) return -1;
  *made = sb.st_mtim;
  return from_marker;
}

static int later(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

int tsr__promote_made(const char *tmp, const char *final, const struct timespec *made,
                      int *oserr, char *msg, size_t msglen) {
  const struct timespec times[2] = {*made, *made};
  if (utimensat(AT_FDCWD, tmp, times, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    *oserr = e;
    snprintf(msg, msglen, "cannot set the time of %s: %s", tmp, strerror(e));
    unlink(tmp);
    return tsr__fs_errno_code(e);
  }
  struct stat sb;
  if (lstat(final, &sb) == 0 && later(&sb.st_mtim, made)) {
    char when[32] = "", mine[32] = "";
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&sb.st_mtim.tv_sec, &tm));
    strftime(mine, sizeof mine, "%Y-%m-%d %H:%M:%S", localtime_r(&made->tv_sec, &tm));
    *oserr = EEXIST;
    snprintf(msg, msglen, "%s is newer (%s) than the copy completed at %s: not replaced "
             "(the older copy stays staged; remove one of the two, then run "
             "`tessera stage recover`)", final, when, mine);
    unlink(tmp);
    return TSR_EBUSY;
  }
  return tsr__promote(tmp, final, oserr, msg, msglen);
}

/* ---- checksum: four 64-bit lanes over 32-byte stripes (the xxHash64 round
 * structure), so it runs near memory speed and the drain stays I/O bound. */

#define P1 11400714785074694791ull
#define P2 14029467366897019727ull
#define P3 1609587929392839161ull

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t round64(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }

void tsr__sum64_init(tsr__sum64 *c) {
  memset(c, 0, sizeof *c);
  c->lane[0] = P1 + P2;
  c->lane[1] = P2;
  c->lane[2] = 0;
  c->lane[3] = (uint64_t)0 - P1;
}

static void stripe(tsr__sum64 *c, const unsigned char *p) {
  for (int i = 0; i < 4; i++) {
    uint64_t v;
    memcpy(&v, p + 8 * i, 8);
    c->lane[i] = round64(c->lane[i], v);
  }
}

void tsr__sum64_update(tsr__sum64 *c, const void *data, size_t n) {
  const unsigned char *p = data;
  c->total += n;
  if (c->ntail) {
    size_t k = 32 - c->ntail < n ? 32 - c->ntail : n;
    memcpy(c->tail + c->ntail, p, k);
    c->ntail += k;
    p += k;
    n -= k;
    if (c->ntail < 32) return;
    stripe(c, c->tail);
    c->ntail = 0;
  }
  for (; n >= 32; p += 32, n -= 32) stripe(c, p);
  memcpy(c->tail, p, n);
  c->ntail = n;
}

uint64_t tsr__sum64_final(const tsr__sum64 *c) {
  uint64_t h = rotl(c->lane[0], 1) + rotl(c->lane[1], 7) + rotl(c->lane[2], 12) +
               rotl(c->lane[3], 18);
  for (int i = 0; i < 4; i++) h = (h ^ round64(0, c->lane[i])) * P1 + P3;
  h += c->total;
  for (size_t i = 0; i < c->ntail; i++) h = rotl(h ^ (c->tail[i] * P3), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  return h;
}
