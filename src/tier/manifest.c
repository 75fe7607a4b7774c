/* The manifest beside the output (contract in tier/manifest.h). */
#include "tier/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tier/fs.h"
#include "tessera.h"

int tsr__manifest_append(const char *final, const char *lines, int *oserr, char *msg,
                         size_t msglen) {
  size_t n = strlen(lines);
  if (!n) return 0;
  const char *slash = strrchr(final, '/');
  int dlen = slash ? (int)(slash - final) : 0;
  char path[4096];
  int k = slash ? snprintf(path, sizeof path, "%.*s/%s", dlen, final, TSR__MANIFEST_NAME)
                : snprintf(path, sizeof path, "%s", TSR__MANIFEST_NAME);
  if (k < 0 || (size_t)k >= sizeof path) {
    *oserr = ENAMETOOLONG;
    snprintf(msg, msglen, "manifest: directory name of %s too long", final);
    return TSR_EINVAL;
  }
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  /* One write: O_APPEND places it whole at the end, beside other writers'. */
  int bad = fd < 0 || tsr__write_full(fd, lines, n) != 0;
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && !bad) bad = 1, e = errno;
  if (!bad) return 0;
  *oserr = e;
  snprintf(msg, msglen, "manifest: cannot append to %s: %s", path, strerror(e));
  return tsr__tier_errno_code(e);
}

int tsr__manifest_from_marker(const char *marker, const char *final, char *msg, size_t msglen) {
  FILE *fp = fopen(marker, "re");
  if (!fp) {
    snprintf(msg, msglen, "manifest: cannot read marker %s: %s", marker, strerror(errno));
    return tsr__tier_errno_code(errno);
  }
  char *text = NULL;
  size_t cap = 0;
  ssize_t got = getdelim(&text, &cap, '\0', fp); /* the whole marker */
  fclose(fp);
  int rc = 0;
  const char *lines = NULL;
  if (got > 0) { /* after "final\nsize\n" */
    char *nl = strchr(text, '\n');
    if (nl) nl = strchr(nl + 1, '\n');
    if (nl) lines = nl + 1;
  }
  int oserr = 0;
  if (lines && *lines) rc = tsr__manifest_append(final, lines, &oserr, msg, msglen);
  free(text);
  return rc;
}
