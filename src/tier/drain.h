/* Staging, the drain half (docs/staging.md): a helper thread per process that
 * copies finished staged files to their final paths while the model
 * computes. It calls no MPI, so it needs no MPI thread level; it runs at the
 * lowest CPU priority, so the model's ranks keep their cores. */
#ifndef TSR_TIER_DRAIN_H
#define TSR_TIER_DRAIN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* This process's totals since start (for tests and the bench). */
typedef struct {
  int64_t files;    /* files drained into place */
  int64_t bytes;    /* their bytes */
  int64_t failed;   /* files left in the stage by an error */
  double busy_s;    /* time the thread spent copying and verifying */
  double wait_s;    /* time tsr__drain_wait / finalize waited */
  int first_error;  /* TSR_E* of the first failure, 0 if none */
} tsr__drain_totals;
/* Queue a complete staged file (with its marker) for copying to @p final.
 * Starts the thread now, or, with @p at_finalize, leaves the file queued until
 * tsr__drain_wait (tsr_finalize) starts it; a thread already running takes
 * queued files in order either way. Returns 0 or TSR_ENOMEM (the file then
 * stays staged with its marker, for tessera stage recover). */
int tsr__drain_submit(const char *staged, const char *final, int at_finalize);

/* Copy one staged file to @p final (a staged log, stage_format=log, is
 * converted instead by tessera-convert, tier/drain_convert.h, with the same
 * temporary, sync, verification and rename): `<final>.tessera-tmp` written and synced,
 * size and checksum compared with the staged file by reading the copy back,
 * promoted into place, then the staged file and its marker removed (in that
 * order, so a crash in between leaves a marker whose destination is
 * complete). Any failure keeps the staged file and its marker, and so does a
 * @p final newer than the staged file (TSR_EBUSY: a rerun wrote it). Uses @p buf
 * (@p cap bytes) as its copy buffer. Returns 0 or TSR_E* with a message. */
int tsr__drain_copy(const char *staged, const char *final, char *buf, size_t cap,
                    char *msg, size_t msglen);

/* The copy itself: @p src to `<final>.tessera-tmp`, synced, read back and
 * compared (size, checksum), promoted to @p final; @p src is left as it is.
 * With @p made (a drain: tsr__stage_made), the copy carries that time and
 * never replaces a newer @p final (tsr__promote_made); NULL for the stage-in
 * copy (tier/stage_in.c), which replaces its older local copy. */
int tsr__copy_verified(const char *src, const char *final, const struct timespec *made,
                       char *buf, size_t cap, char *msg, size_t msglen);

/* Wait until every file submitted by this process is drained (or failed). */
void tsr__drain_wait(void);

/* Wait for this process's drains and stop the thread; returns the first
 * drain error since the last call (0 if none) and resets the totals into
 * @p t (may be NULL), the first failure's sentence into @p msg. An I/O
 * server calls it before acknowledging FINAL, since its process has no
 * tsr_finalize of its own, and sends both to the model. */
int tsr__drain_finish_local(tsr__drain_totals *t, char *msg, size_t msglen);

/* tsr_finalize, collective over @p comm: wait for this process's drains,
 * stop the thread, and agree on the first drain error, whose sentence every
 * rank gets in @p msg (empty when none failed). With TESSERA_STATS or
 * TESSERA_STATS_FILE set, rank 0 reports staged files and bytes, drain_s
 * (the longest wait in tsr_finalize), the drain thread's busy time and the
 * drain MB/s (bytes over the longest busy time). */
int tsr__drain_finalize(MPI_Comm comm, char *msg, size_t msglen);

void tsr__drain_get_totals(tsr__drain_totals *t);

/* A model rank that heard an I/O server's FINAL acknowledgement adds the
 * server's drain totals (tsr__drain_finish_local on the server), so that
 * tsr__drain_finalize reports the servers' drains with the model's: files,
 * bytes and failures add up; busy and wait times count as this rank's
 * longest (the model waited for them in tsr_finalize). */
void tsr__drain_add_remote(const tsr__drain_totals *t);

#endif
