/* Names Tessera makes (temporaries, staged copies, markers, log directories,
 * lock files) are never followed through a symbolic link. An output directory
 * may be shared: anyone who can create an entry there could otherwise plant
 * `<path>.tessera-tmp -> ~/precious` and have the next run overwrite the
 * link's target with its output. So a name is cleared first (a link is
 * removed, never its target) and then created exclusively (O_CREAT | O_EXCL
 * | O_NOFOLLOW, or a backend's no-clobber mode, which is the same open): a
 * link planted between the two makes the create fail, it is never followed.
 *
 * Part of the tier layer (the lowest that creates files by name); the sink
 * and the log backend call it before a backend creates a temporary. */
#ifndef TSR_TIER_SAFE_NAMES_H
#define TSR_TIER_SAFE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A staged file is a file, or a directory of files (stage_format=log: a
 * log, backend/log.h); these two treat both alike. The size is the sum of
 * the directory's files (-1: no such name); remove takes the directory with
 * its files, and a link as a link. */
int64_t tsr__name_size(const char *path);
void tsr__name_remove(const char *path);

/* Remove whatever has the name @p path: a file, a link (not what it points
 * to), a stale log directory with its files. 0 when the name is free
 * (including when nothing had it), else -1 with errno set. */
int tsr__name_clear(const char *path);

/* tsr__name_clear, then open(2) with O_CREAT | O_EXCL | O_NOFOLLOW |
 * O_CLOEXEC added to @p flags. The descriptor, or -1 with errno set. */
int tsr__name_create(const char *path, int flags, mode_t mode);

/* tsr__name_clear, then mkdir(2): a directory that is new, never an
 * existing one or a link to one. 0, or -1 with errno set. */
int tsr__name_mkdir(const char *path, mode_t mode);

#endif
