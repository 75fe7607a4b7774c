/* Names Tessera makes: measured and removed as a file or a log directory,
 * created without following links (contract in tier/safe_names.h). The
 * lowest file of the tier: it calls nothing of the tier above it. */
#include "tier/safe_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Calls @p fn on every entry of directory @p dir but . and .. (full path). */
static void each_entry(const char *dir, void (*fn)(const char *, void *), void *arg) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[4600];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      fn(p, arg);
    }
  closedir(d);
}

static void add_size(const char *p, void *arg) {
  struct stat sb;
  if (stat(p, &sb) == 0) *(int64_t *)arg += (int64_t)sb.st_size;
}

static void remove_one(const char *p, void *arg) {
  (void)arg;
  unlink(p);
}

int64_t tsr__name_size(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return -1;
  if (!S_ISDIR(sb.st_mode)) return (int64_t)sb.st_size;
  int64_t sum = 0;
  each_entry(path, add_size, &sum);
  return sum;
}

void tsr__name_remove(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    each_entry(path, remove_one, NULL);
    rmdir(path);
  } else {
    unlink(path);
  }
}

int tsr__name_clear(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  if (S_ISDIR(sb.st_mode)) tsr__name_remove(path); /* a log left by a killed job */
  else if (unlink(path) != 0 && errno != ENOENT) return -1;
  if (lstat(path, &sb) == 0) {
    errno = EEXIST; /* a directory with more than a log's files in it */
    return -1;
  }
  return 0;
}

int tsr__name_create(const char *path, int flags, mode_t mode) {
  if (tsr__name_clear(path) != 0) return -1;
  return open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

int tsr__name_mkdir(const char *path, mode_t mode) {
  if (tsr__name_clear(path) != 0) return -1;
  return mkdir(path, mode);
}
