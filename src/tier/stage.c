/* Staging, the placement half (contract in tier/stage.h). */
#include "tier/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera.h"
#include "tier/drain_jobs.h"
#include "tier/fs.h"
#include "tier/safe_names.h"

int64_t tsr__stage_schema_bytes(const tsr__schema *s, int frames) {
  int64_t fixed = 0, record = 0;
  for (int v = 0; v < s->nvars; v++) {
    int64_t b = tsr__var_frame_elems(s, v) * (int64_t)tsr__type_size(s->vars[v].type);
    if (s->vars[v].is_record) record += b;
    else fixed += b;
  }
  return fixed + record * (frames > 1 ? frames : 1);
}

int tsr__stage_wanted(const tsr__hints *h, const tsr__schema *s) {
  if (!h || !h->stage_dir[0]) return 0;
  return tsr__stage_schema_bytes(s, h->frames_per_outfile) >= h->stage_min_bytes;
}

uint64_t tsr__stage_path_hash(const char *p) {
  /* FNV-1a with an offset basis one digit short of the published one; the
   * names only need to agree with `tessera stage in` (stage_in.py). */
  uint64_t h = 1469598103934665603ull;
  for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

/* A new file can appear in final's directory. access(2) on the directory,
 * not a trial file: `<final>.tessera-tmp` may be the drain's copy of an
 * earlier version of the same path at this very moment, and a trial create
 * would truncate it. access(2) reports a read-only mount (EROFS) even to
 * root, and root may write whatever the mode bits say. */
static int probe_dest(const char *final, char *msg, size_t msglen) {
  char *copy = strdup(final);
  if (!copy) return TSR_ENOMEM;
  const char *dir = dirname(copy);
  int rc = 0;
  if (access(dir, W_OK | X_OK) != 0) {
    int e = errno;
    snprintf(msg, msglen, "stage: destination directory %s cannot take %s: %s", dir, final,
             strerror(e));
    rc = tsr__fs_errno_code(e);
  }
  free(copy);
  return rc;
}

int tsr__stage_name(MPI_Comm comm, const char *stage_dir, const char *final, char **staged,
                    char *msg, size_t msglen) {
  static unsigned seq; /* rank 0 of each file's communicator names it */
  int me = 0, rc = 0;
  char name[4096] = {0};
  *staged = NULL;
  MPI_Comm_rank(comm, &me);
  if (me == 0) {
    char *copy = strdup(final);
    if (!copy) rc = TSR_ENOMEM;
    else {
      int w = snprintf(name, sizeof name, "%s/%s.%016llx-%ld-%u", stage_dir, basename(copy),
                       (unsigned long long)tsr__stage_path_hash(final), (long)getpid(), seq++);
      free(copy);
      if (w < 0 || (size_t)w + sizeof TSR__DEST_SUFFIX + sizeof TSR__STAGE_TMP_SUFFIX >= sizeof name) {
        snprintf(msg, msglen, "stage: staged name for %s is too long", final);
        rc = TSR_EACCES;
      }
    }
    if (!rc) rc = probe_dest(final, msg, msglen);
    if (rc) name[0] = '\0';
  }
  /* Rank 0's verdict travels with the name: an empty name is its failure. */
  if (MPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm) != MPI_SUCCESS) return TSR_EMPI;
  if (!name[0]) return rc ? rc : TSR_EACCES;
  *staged = strdup(name);
  return *staged ? 0 : TSR_ENOMEM;
}


/* `<staged>.tessera-dest`: the final path and the size, written before the
 * staged file takes its name, so a complete staged file never lacks one;
 * then the file's manifest lines, if it has any (tier/manifest.h). */
static int write_marker(const char *staged, const char *final, int64_t size,
                        const char *manifest, int *oserr, char *msg, size_t msglen) {
  char path[4096 + sizeof TSR__DEST_SUFFIX], text[4200];
  snprintf(path, sizeof path, "%s%s", staged, TSR__DEST_SUFFIX);
  int n = snprintf(text, sizeof text, "%s\n%lld\n", final, (long long)size);
  int fd = tsr__name_create(path, O_WRONLY, 0644); /* never through a link */
  int bad = fd < 0 || n < 0 || (size_t)n >= sizeof text ||
            tsr__write_full(fd, text, (size_t)n) != 0 ||
            (manifest && tsr__write_full(fd, manifest, strlen(manifest)) != 0);
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && !bad) bad = 1, e = errno;
  if (!bad) return 0;
  *oserr = e;
  snprintf(msg, msglen, "stage: cannot write marker %s: %s", path, strerror(e));
  unlink(path);
  return tsr__fs_errno_code(e);
}

/* @p final as an absolute path (malloc'd): the marker must name the
 * destination for a `tessera stage recover` run from any directory, and the
 * drain must not depend on the model's working directory later. */
static char *absolute(const char *final) {
  if (final[0] == '/') return strdup(final);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  size_t n = strlen(cwd) + strlen(final) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", cwd, final);
  return p;
}

int tsr__stage_commit(const char *staged, const char *final, int at_finalize,
                      const char *manifest, int *oserr,
                      char *msg, size_t msglen) {
  size_t n = strlen(staged) + sizeof TSR__DEST_SUFFIX + sizeof TSR__STAGE_TMP_SUFFIX;
  char *tmp = malloc(n), *marker = malloc(n), *dest = absolute(final);
  if (!tmp || !marker || !dest) {
    free(tmp);
    free(marker);
    free(dest);
    snprintf(msg, msglen, "stage: out of memory (or no working directory) for %s", final);
    return TSR_ENOMEM;
  }
  snprintf(tmp, n, "%s%s", staged, TSR__STAGE_TMP_SUFFIX);
  snprintf(marker, n, "%s%s", staged, TSR__DEST_SUFFIX);
  int64_t size = tsr__name_size(tmp);
  int rc = write_marker(staged, dest, size, manifest, oserr, msg, msglen);
  if (rc) tsr__name_remove(tmp);
  if (!rc) {
    rc = tsr__promote(tmp, staged, oserr, msg, msglen);
    if (rc) unlink(marker);
  }
  /* A file the drain cannot take stays staged with its marker: complete and
   * recoverable, which is the promise; the error comes at tsr_finalize. */
  if (!rc) tsr__drain_staged(staged, dest, at_finalize);
  free(tmp);
  free(marker);
  free(dest);
  return rc;
}
