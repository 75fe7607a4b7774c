/* Names created without following links (contract in tier/safe_names.h). */
#include "tier/safe_names.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tier/stage.h"

int tsr__name_clear(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  if (S_ISDIR(sb.st_mode)) tsr__stage_remove(path); /* a log left by a killed job */
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
