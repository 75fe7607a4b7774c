/* Staging: the drain of a log (stage_format=log), by the tessera-convert
 * program in a process of its own. */
#ifndef TSR_TIER_DRAIN_CONVERT_H
#define TSR_TIER_DRAIN_CONVERT_H

#include <stddef.h>

/* tessera-convert's exit status on failure is TSR__CONVERT_EXIT - TSR_E*
 * (101..120): far from 1, what an MPI library's abort exits with, so a
 * crash is never read as one of Tessera's codes. */
#define TSR__CONVERT_EXIT 100

/* Run `tessera-convert LOG FINAL` and wait: it writes `<FINAL>.tessera-tmp`,
 * syncs and verifies it against the log, and renames it to FINAL. The log is
 * left for the caller to remove. Returns 0 or the converter's TSR_E* with
 * its message in @p msg (TSR_ENOTBUILT when the program is not found). */
int tsr__drain_convert(const char *log, const char *final, char *msg, size_t msglen);

#endif
