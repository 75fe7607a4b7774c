/* Staging, the drain half (docs/staging.md): a helper thread per process that
 * runs the jobs the tier feeds it (finished staged files copied or converted
 * to their final paths) while the model computes. It calls no MPI, so it
 * needs no MPI thread level; it runs at the lowest CPU priority, so the
 * model's ranks keep their cores. */
#ifndef TSR_TIER_DRAIN_H
#define TSR_TIER_DRAIN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* This process's totals since start (for tests and the bench). */
typedef struct {
  int64_t files;    /* files drained into place */
  int64_t bytes;    /* their bytes */
  int64_t failed;   /* files left in the stage by an error */
  double busy_s;    /* time the thread spent copying and verifying */
  double wait_s;    /* time tsr__drain_wait / finalize waited */
  int first_error;  /* TSR_E* of the first failure, 0 if none */
} tsr__drain_totals;

/* One job of the drain, which knows no kind of job: the tier feeds it
 * (tier/drain_jobs.h: a staged file copied, a staged log converted). run
 * does the work with the thread's copy buffer (@p buf, @p cap bytes) and
 * returns 0, with the bytes it put in place in *bytes, or TSR_E* with its
 * sentence in @p msg; free (may be NULL) releases arg, once, whether run ran
 * or not. */
typedef struct {
  int (*run)(void *arg, char *buf, size_t cap, int64_t *bytes, char *msg, size_t msglen);
  void (*free)(void *arg);
  void *arg;
} tsr__drain_job;

/* Queue a job (copied; the drain owns its arg from now on). Starts the
 * thread now, or, with @p at_finalize, leaves the job queued until
 * tsr__drain_wait (tsr_finalize) starts it; a thread already running takes
 * queued jobs in order either way. Returns 0 or TSR_ENOMEM (the job's arg is
 * then freed and its work not done). */
int tsr__drain_submit(const tsr__drain_job *job, int at_finalize);

/* Wait until every job submitted by this process is done (or failed). */
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
