/* File-system primitives of the tier (staging, drain, log, conversion):
 * full writes, errno as TSR_E*, the one rename protocol every finished file
 * follows, the time a staged file was complete, and the checksum that
 * verifies a copy. Below stage.c and drain_jobs.c (which call them both)
 * and free of MPI; split out of stage.c so that those two call only down. */
#ifndef TSR_TIER_FS_H
#define TSR_TIER_FS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A staged file `<stage_dir>/<name>` carries `<stage_dir>/<name>.tessera-dest`
 * (line 1: the final path, line 2: the staged size in bytes) from the moment
 * it is complete until its verified copy has been renamed into place. */
#define TSR__DEST_SUFFIX ".tessera-dest"

/* The TSR_E* of a failed file operation as the stage's own checks
 * (destination probe, marker) report it: a full or over-quota disk or a file
 * too large is TSR_ENOSPC, ENOMEM TSR_ENOMEM, anything else (EIO included)
 * TSR_EACCES. */
int tsr__fs_errno_code(int e);

/* The TSR_E* of a failed file operation of the tier (copy, log, marker):
 * a full or over-quota disk or a file too large is TSR_ENOSPC, ENOMEM
 * TSR_ENOMEM, EIO TSR_EIO, anything else TSR_EACCES. */
int tsr__tier_errno_code(int e);

/* write(2) until all @p n bytes are written (EINTR retried); -1 with errno
 * set (ENOSPC for a write that made no progress) otherwise. */
int tsr__write_full(int fd, const void *buf, size_t n);

/* The one rename protocol: @p tmp (complete) becomes @p final, or is removed
 * when it cannot. Returns 0, TSR_ENOSPC or TSR_EACCES; *oserr holds errno. */
int tsr__promote(const char *tmp, const char *final, int *oserr, char *msg, size_t msglen);

/* When a staged file was complete: the modification time of its marker
 * (written at commit, just before the staged file takes its name), or of the
 * staged file itself when it has no marker. 1 from the marker, 0 from the
 * staged file, -1 (errno set) when neither can be read. */
int tsr__stage_made(const char *staged, struct timespec *made);

/* tsr__promote for a drain, a conversion or a recovery, which may run long
 * after the file was closed: @p tmp takes @p made as its modification time
 * (the final file then says when its data were complete, as `cp -p` would),
 * and replaces @p final only when @p final is not newer than @p made. A file
 * that a rerun or another job wrote there meanwhile is never replaced by an
 * older one: TSR_EBUSY, @p tmp removed, the staged file left to the caller. */
int tsr__promote_made(const char *tmp, const char *final, const struct timespec *made,
                      int *oserr, char *msg, size_t msglen);

/* A 64-bit checksum of a byte stream, updated in pieces (the drain verifies
 * every copy with it). Not cryptographic: it catches short, torn or
 * misplaced copies, which is what a copy can get wrong. */
typedef struct {
  uint64_t lane[4];
  unsigned char tail[32];
  size_t ntail;
  uint64_t total;
} tsr__sum64;
void tsr__sum64_init(tsr__sum64 *c);
void tsr__sum64_update(tsr__sum64 *c, const void *data, size_t n);
uint64_t tsr__sum64_final(const tsr__sum64 *c);

#endif
