/* Staging: the jobs the tier feeds the drain (tier/drain.h), and the
 * verified copy they share with the stage-in. */
#ifndef TSR_TIER_DRAIN_JOBS_H
#define TSR_TIER_DRAIN_JOBS_H

#include <stddef.h>
#include <time.h>

/* Queue a complete staged file (with its marker) for the drain, as a copy
 * job, or as a conversion job for a staged log (stage_format=log: a
 * directory, converted by tessera-convert, tier/drain_convert.h, with the
 * same temporary, sync, verification and rename). Either writes
 * `<final>.tessera-tmp`, syncs it, compares it with the staged data by
 * reading it back, promotes it into place, then removes the staged file and
 * its marker (in that order, so a crash in between leaves a marker whose
 * destination is complete). Any failure keeps the staged file and its
 * marker, and so does a @p final newer than the staged file (TSR_EBUSY: a
 * rerun wrote it). @p at_finalize as tsr__drain_submit's. Returns 0 or
 * TSR_ENOMEM (the file then stays staged with its marker, for tessera stage
 * recover). */
int tsr__drain_staged(const char *staged, const char *final, int at_finalize);

/* The copy itself: @p src to `<final>.tessera-tmp`, synced, read back and
 * compared (size, checksum), promoted to @p final; @p src is left as it is.
 * With @p made (a drain: tsr__stage_made), the copy carries that time and
 * never replaces a newer @p final (tsr__promote_made); NULL for the stage-in
 * copy (tier/stage_in.c), which replaces its older local copy. Uses @p buf
 * (@p cap bytes) as its copy buffer. Returns 0 or TSR_E* with a message. */
int tsr__copy_verified(const char *src, const char *final, const struct timespec *made,
                       char *buf, size_t cap, char *msg, size_t msglen);

#endif
