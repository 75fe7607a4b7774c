/* Staging, the jobs the tier feeds the drain (contract in tier/drain_jobs.h):
 * a staged file copied to its final path, a staged log converted into it;
 * and the verified copy both the drain and the stage-in use. */
#include "tier/drain_jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera.h"
#include "tier/drain.h"
#include "tier/drain_convert.h"
#include "tier/fs.h"
#include "tier/manifest.h"
#include "tier/safe_names.h"
#include "tier/stage.h"

static int fail(int code, int e, char *msg, size_t msglen, const char *what, const char *path) {
  snprintf(msg, msglen, "drain: %s %s: %s", what, path, strerror(e));
  return code ? code : tsr__tier_errno_code(e);
}

static ssize_t read_full(int fd, char *buf, size_t cap) {
  size_t got = 0;
  while (got < cap) {
    ssize_t r = read(fd, buf + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Checksum and size of what @p fd holds from its start. */
static int sum_file(int fd, char *buf, size_t cap, uint64_t *sum, int64_t *size) {
  tsr__sum64 c;
  tsr__sum64_init(&c);
  if (lseek(fd, 0, SEEK_SET) != 0) return -1;
  for (;;) {
    ssize_t r = read_full(fd, buf, cap);
    if (r < 0) return -1;
    if (r == 0) break;
    tsr__sum64_update(&c, buf, (size_t)r);
  }
  *sum = tsr__sum64_final(&c);
  *size = (int64_t)c.total;
  return 0;
}

int tsr__copy_verified(const char *src, const char *final, const struct timespec *made,
                       char *buf, size_t cap, char *msg, size_t msglen) {
  size_t n = strlen(final) + sizeof TSR__STAGE_TMP_SUFFIX;
  char *tmp = malloc(n);
  int rc = 0, in = -1, out = -1;
  if (!tmp) {
    snprintf(msg, msglen, "drain: out of memory");
    return TSR_ENOMEM;
  }
  snprintf(tmp, n, "%s%s", final, TSR__STAGE_TMP_SUFFIX);
  in = open(src, O_RDONLY);
  if (in < 0) {
    rc = fail(0, errno, msg, msglen, "cannot open", src);
    goto done;
  }
  out = tsr__name_create(tmp, O_RDWR, 0666); /* read back to verify; never through a link */
  if (out < 0) {
    rc = fail(0, errno, msg, msglen, "cannot create", tmp);
    goto done;
  }
  tsr__sum64 c;
  tsr__sum64_init(&c);
  for (;;) {
    ssize_t r = read_full(in, buf, cap);
    if (r < 0) {
      rc = fail(0, errno, msg, msglen, "cannot read", src);
      goto done;
    }
    if (r == 0) break;
    tsr__sum64_update(&c, buf, (size_t)r);
    if (tsr__write_full(out, buf, (size_t)r) != 0) {
      rc = fail(0, errno, msg, msglen, "cannot write", tmp);
      goto done;
    }
  }
  /* On disk before the name says so: the source copy may go away next. */
  if (fsync(out) != 0) {
    rc = fail(0, errno, msg, msglen, "cannot sync", tmp);
    goto done;
  }
  uint64_t sum_copy;
  int64_t size_copy;
  if (sum_file(out, buf, cap, &sum_copy, &size_copy) != 0) {
    rc = fail(0, errno, msg, msglen, "cannot read back", tmp);
    goto done;
  }
  if (size_copy != (int64_t)c.total || sum_copy != tsr__sum64_final(&c)) {
    snprintf(msg, msglen, "drain: copy %s of %s does not verify (%lld of %lld bytes, checksum %s)",
             tmp, src, (long long)size_copy, (long long)c.total,
             sum_copy == tsr__sum64_final(&c) ? "equal" : "differs");
    rc = TSR_EIO;
    goto done;
  }
  int cl = close(out);
  out = -1;
  if (cl != 0) {
    rc = fail(0, errno, msg, msglen, "cannot close", tmp);
    goto done;
  }
  int oserr = 0;
  rc = made ? tsr__promote_made(tmp, final, made, &oserr, msg, msglen)
            : tsr__promote(tmp, final, &oserr, msg, msglen);
done:
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (rc) unlink(tmp); /* a failed copy never stays; the source always does */
  free(tmp);
  return rc;
}

/* The staged file is at @p final: its manifest lines, then the staged copy
 * and its marker go (in that order, so a crash in between leaves a marker
 * whose destination is complete). */
static int placed(const char *staged, const char *final, char *msg, size_t msglen) {
  size_t m = strlen(staged) + sizeof TSR__DEST_SUFFIX;
  char *marker = malloc(m);
  if (!marker) return fail(TSR_ENOMEM, ENOMEM, msg, msglen, "no memory for the marker of", staged);
  snprintf(marker, m, "%s%s", staged, TSR__DEST_SUFFIX);
  /* Its manifest lines (checksum=) once the file is complete at its place:
   * a reader of the manifest never meets a frame of a file still copying. */
  int rc = tsr__manifest_from_marker(marker, final, msg, msglen);
  if (rc) {
    free(marker);
    return rc;
  }
  /* The final file is complete: now, and only now, the staged copy goes;
   * its marker last, so a crash in between leaves a marker whose staged
   * file is gone and whose destination is complete (recover removes it). */
  tsr__name_remove(staged);
  unlink(marker);
  free(marker);
  return 0;
}

/* A job's argument: the staged name and the final path. */
typedef struct {
  char *staged, *final;
} staged_job;

static void staged_free(void *arg) {
  staged_job *j = arg;
  free(j->staged);
  free(j->final);
  free(j);
}

/* The bytes now at the final path, for the drain's totals. */
static int64_t final_bytes(const char *final) {
  struct stat sb;
  return stat(final, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* A staged file: copied and verified, carrying the time of its marker. */
static int copy_run(void *arg, char *buf, size_t cap, int64_t *bytes, char *msg, size_t msglen) {
  const staged_job *j = arg;
  struct timespec made;
  if (tsr__stage_made(j->staged, &made) < 0)
    return fail(0, errno, msg, msglen, "cannot find", j->staged);
  int rc = tsr__copy_verified(j->staged, j->final, &made, buf, cap, msg, msglen);
  if (!rc) rc = placed(j->staged, j->final, msg, msglen);
  if (!rc) *bytes = final_bytes(j->final);
  return rc;
}

/* A staged log (stage_format=log): converted by tessera-convert, which finds
 * the marker's time itself and writes, syncs, verifies and renames as the
 * copy does. */
static int convert_run(void *arg, char *buf, size_t cap, int64_t *bytes, char *msg,
                       size_t msglen) {
  const staged_job *j = arg;
  (void)buf, (void)cap;
  int rc = tsr__drain_convert(j->staged, j->final, msg, msglen);
  if (!rc) rc = placed(j->staged, j->final, msg, msglen);
  if (!rc) *bytes = final_bytes(j->final);
  return rc;
}

int tsr__drain_staged(const char *staged, const char *final, int at_finalize) {
  staged_job *j = calloc(1, sizeof *j);
  if (j) {
    j->staged = strdup(staged);
    j->final = strdup(final);
  }
  if (!j || !j->staged || !j->final) {
    if (j) staged_free(j);
    return TSR_ENOMEM;
  }
  /* A log is a directory; a staged file is a file (tier/safe_names.h makes
   * both without following links). */
  struct stat sb;
  int is_log = lstat(staged, &sb) == 0 && S_ISDIR(sb.st_mode);
  tsr__drain_job work = {is_log ? convert_run : copy_run, staged_free, j};
  return tsr__drain_submit(&work, at_finalize);
}
