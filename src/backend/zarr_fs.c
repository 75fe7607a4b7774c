/* The files of a Zarr store on disk (contract in backend/zarr_fs.h).
 *
 * Why a background removal: a store is hundreds of chunk files, and removing
 * the one a run replaces cost 4-8x the whole write at close (docs/zarr.md,
 * "Measured next to NetCDF"). The rename to a trash name is what keeps the
 * replacement atomic; the unlinks that follow change nothing a reader can
 * see, so they run on one thread of the writing process while the model
 * goes on. The thread makes no MPI call and blocks every signal (they stay
 * the model's). The process waits for it at exit, so the files are gone when
 * the job ends; a forked child does not wait for its parent's thread. */
#include "backend/zarr_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LIB "Zarr"
#define TPATH 4400 /* a store path (zarr.c's ZMAXPATH) and a trash suffix */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p) != 0 && errno != ENOENT ? -1 : 0;
}

int tsr__zarr_rm_tree(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(sb.st_mode)) return unlink(path);
  return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int tsr__zarr_replaceable(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT;
  if (!S_ISDIR(sb.st_mode)) return 0;
  char doc[TPATH];
  snprintf(doc, sizeof doc, "%s/zarr.json", path);
  if (lstat(doc, &sb) == 0) return S_ISREG(sb.st_mode);
  DIR *d = opendir(path);
  struct dirent *e;
  int empty = d != NULL;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  if (d) closedir(d);
  return empty;
}

int tsr__zarr_write_file(const char *path, const void *buf, size_t n, tsr__berr *err) {
  errno = 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  int bad = fd < 0;
  for (const char *p = buf; !bad && n > 0;) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      bad = 1;
      break;
    }
    p += w;
    n -= (size_t)w;
  }
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && !bad) bad = 1, e = errno;
  if (!bad) return 0;
  return tsr__berr_plain(err, tsr__berr_from_errno(e), LIB, "writing %s: %s", path, strerror(e));
}

int tsr__zarr_make_dir(const char *path, tsr__berr *err) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) return 0;
  int e = errno;
  return tsr__berr_plain(err, tsr__berr_from_errno(e), LIB, "cannot create %s: %s", path,
                         strerror(e));
}

/* ---- the background removal ---- */

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char **q; /* trash trees to remove; q[0] is being removed while busy */
  int n, cap, busy, quit, started;
  pid_t owner; /* the process whose thread it is */
  pthread_t th;
  unsigned seq; /* trash names made by this process */
} bg = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *remover(void *arg) {
  (void)arg;
  /* The removal yields to the model's ranks when the cores are busy (on
   * Linux, nice applies to one thread); where it cannot, it runs as is. */
#ifdef __linux__
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
  pthread_mutex_lock(&bg.mu);
  for (;;) {
    while (bg.n == 0 && !bg.quit) pthread_cond_wait(&bg.cv, &bg.mu);
    if (bg.n == 0) break;
    bg.busy = 1;
    char *p = bg.q[0];
    pthread_mutex_unlock(&bg.mu);
    tsr__zarr_rm_tree(p); /* what fails stays for the next sweep or tessera clean */
    pthread_mutex_lock(&bg.mu);
    memmove(bg.q, bg.q + 1, (size_t)--bg.n * sizeof *bg.q);
    bg.busy = 0;
    free(p);
  }
  pthread_mutex_unlock(&bg.mu);
  return NULL;
}

/* At exit: the queue is emptied, then the thread ends. */
static void join_remover(void) {
  pthread_mutex_lock(&bg.mu);
  int mine = bg.started && bg.owner == getpid();
  bg.quit = 1;
  pthread_cond_signal(&bg.cv);
  pthread_mutex_unlock(&bg.mu);
  if (mine) pthread_join(bg.th, NULL);
}

/* With bg.mu held: the thread running, started on first use. */
static int start_remover(void) {
  if (bg.started && bg.owner == getpid()) return 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the full mask */
  int rc = pthread_create(&bg.th, NULL, remover, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) return -1;
  if (!bg.started) atexit(join_remover);
  bg.started = 1;
  bg.owner = getpid();
  bg.n = 0; /* a forked child's copy of the parent's queue is not its work */
  bg.quit = 0;
  return 0;
}

/* @p path handed to the thread; removed here when the thread cannot be had. */
static void enqueue(const char *path) {
  pthread_mutex_lock(&bg.mu);
  int ok = start_remover() == 0 && !bg.quit;
  for (int i = 0; ok && i < bg.n; i++)
    if (!strcmp(bg.q[i], path)) {
      pthread_mutex_unlock(&bg.mu);
      return;
    }
  if (ok && bg.n == bg.cap) {
    int cap = bg.cap ? 2 * bg.cap : 8;
    char **q = realloc(bg.q, (size_t)cap * sizeof *q);
    if (q) bg.q = q, bg.cap = cap;
    else ok = 0;
  }
  char *p = ok ? strdup(path) : NULL;
  if (p) {
    bg.q[bg.n++] = p;
    pthread_cond_signal(&bg.cv);
  }
  pthread_mutex_unlock(&bg.mu);
  if (!p) tsr__zarr_rm_tree(path);
}

int tsr__zarr_retire(const char *path, const char *final) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  char t[TPATH];
  for (int tries = 0; tries < 1000; tries++) {
    pthread_mutex_lock(&bg.mu);
    unsigned n = ++bg.seq;
    pthread_mutex_unlock(&bg.mu);
    if (snprintf(t, sizeof t, "%s%s%ld-%u", final, TSR__ZARR_TRASH, (long)getpid(), n) >=
        (int)sizeof t)
      return errno = ENAMETOOLONG, -1;
    /* A name a killed run of the same pid left is skipped: rename would
     * replace a file or an empty directory under it without a word. */
    if (lstat(t, &sb) == 0 || errno != ENOENT) continue;
    if (rename(path, t) == 0) {
      enqueue(t);
      return 0;
    }
    if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR && errno != ENOTDIR) return -1;
  }
  return errno = EEXIST, -1;
}

void tsr__zarr_sweep(const char *final) {
  const char *slash = strrchr(final, '/');
  char dir[TPATH], prefix[TPATH], p[TPATH];
  if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - final + (slash == final)), final);
  else snprintf(dir, sizeof dir, ".");
  int np = snprintf(prefix, sizeof prefix, "%s%s", slash ? slash + 1 : final, TSR__ZARR_TRASH);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && np > 0 && (size_t)np < sizeof prefix && (e = readdir(d)))
    if (!strncmp(e->d_name, prefix, (size_t)np) &&
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
      enqueue(p);
  if (d) closedir(d);
}
