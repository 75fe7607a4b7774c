/* Exclusive output: while a file is being written, rank 0 holds an advisory
 * lock (fcntl) on `<path>.tessera-lock`, so a second job creating the same
 * path gets TSR_EBUSY instead of interleaving its data with ours. The lock
 * dies with the process, so a killed job leaves at most a stale lock file,
 * which the next run takes over. File systems without POSIX locks (ENOLCK,
 * ENOSYS, EOPNOTSUPP: some Lustre and NFS mounts) get no exclusivity; the
 * hint clobber=force skips the lock on purpose. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"

#define LOCK_SUFFIX ".tessera-lock"

static char *lock_path(const char *path) {
  size_t n = strlen(path) + sizeof LOCK_SUFFIX;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s%s", path, LOCK_SUFFIX);
  return p;
}

int tsr__lock_take(const char *path, int *fd, char *msg, size_t msglen) {
  *fd = -1;
  char *lp = lock_path(path);
  if (!lp) return TSR_ENOMEM;
  /* Never through a link: one planted at the lock's name is removed (it is
   * nobody's lock; a lock is a plain file) and the open tried once more. */
  int d = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (d < 0 && errno == ELOOP && unlink(lp) == 0)
    d = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (d < 0) {
    snprintf(msg, msglen, "cannot create %s: %s", lp, strerror(errno));
    free(lp);
    return TSR_EACCES;
  }
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fcntl(d, F_SETLK, &fl) != 0) {
    int e = errno;
    if (e == EACCES || e == EAGAIN) {
      snprintf(msg, msglen,
               "'%s' is being written by another job (it holds the lock on %s); "
               "use the hint clobber=force to write anyway", path, lp);
      close(d);
      free(lp);
      return TSR_EBUSY;
    }
    TSR_LOG("no advisory locks on the file system of %s (%s): writing without exclusivity", lp,
            strerror(e));
  }
  free(lp);
  *fd = d;
  return 0;
}

void tsr__lock_release(const char *path, int *fd) {
  if (*fd < 0) return;
  char *lp = lock_path(path);
  /* Unlink while still holding the lock: a job waiting on it then sees a
   * file that no longer has a name, and takes a fresh one. */
  if (lp) unlink(lp);
  free(lp);
  close(*fd);
  *fd = -1;
}
