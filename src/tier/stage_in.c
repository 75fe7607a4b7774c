/* Stage-in of inputs (contract in tier/stage_in.h). */
#include "tier/stage_in.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/agree.h"
#include "tessera.h"
#include "tier/drain_jobs.h"
#include "tier/stage.h"

#define COPY_BUF ((size_t)4 << 20)

static int same_version(const struct stat *a, const struct stat *b) {
  return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
         a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* On the node's copying rank: make @p local a verified copy of @p path. */
static int copy_in(const char *path, const char *local, char *msg, size_t msglen) {
  struct stat src, dst;
  if (stat(path, &src) != 0) {
    int e = errno;
    snprintf(msg, msglen, "stage in: cannot open %s: %s", path, strerror(e));
    return TSR_EACCES;
  }
  if (stat(local, &dst) == 0 && same_version(&src, &dst)) return 0;
  char *buf = malloc(COPY_BUF);
  if (!buf) return TSR_ENOMEM;
  int rc = tsr__copy_verified(path, local, NULL, buf, COPY_BUF, msg, msglen);
  free(buf);
  /* The source's time on the copy is what the quick check compares. */
  struct timespec t[2] = {src.st_atim, src.st_mtim};
  if (!rc) utimensat(AT_FDCWD, local, t, 0);
  return rc;
}

int tsr__stage_in(MPI_Comm comm, const char *path, const char *stage_dir, char **local,
                  char *msg, size_t msglen) {
  *local = NULL;
  /* Named after the resolved path, so that `./in.nc`, `in.nc` and its
   * absolute path share one copy, and `tessera stage in` (stage_in.py, the
   * same name) prepares the very copy this open reuses. A path that does not
   * resolve keeps its own name; copy_in reports it missing. */
  char *real = realpath(path, NULL);
  const char *key = real ? real : path;
  char *copy = strdup(key);
  size_t n = strlen(stage_dir) + strlen(key) + 40;
  char *name = malloc(n);
  int rc = copy && name ? 0 : TSR_ENOMEM;
  if (!rc) snprintf(name, n, "%s/%s.%016llx.in", stage_dir, basename(copy),
                    (unsigned long long)tsr__stage_path_hash(key));
  free(copy);
  free(real);
  MPI_Comm node = MPI_COMM_NULL;
  int me = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    rc = rc ? rc : TSR_EMPI;
  else
    MPI_Comm_rank(node, &me);
  if (!rc && me == 0) rc = copy_in(path, name, msg, msglen);
  /* The node's verdict first (its ranks wait for the copy), then everyone's. */
  if (node != MPI_COMM_NULL) {
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
  }
  rc = tsr__agree(comm, rc);
  if (rc) free(name);
  else *local = name;
  return rc;
}
