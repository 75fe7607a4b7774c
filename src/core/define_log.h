/* One agreement per file for the schema (PnetCDF's safe-mode idea, made the
 * default): define calls are checked locally and logged as a hash of the call,
 * its arguments and its result; tsr_enddef compares the whole log across ranks
 * in one reduction and, on a mismatch, names the first differing call and the
 * rank that made it. The hint safe_mode=1 agrees on every call instead. */
#ifndef TSR_CORE_DEFINE_LOG_H
#define TSR_CORE_DEFINE_LOG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int n, cap;
  uint64_t *hash;   /* per call */
  char (*what)[80]; /* per call, for the message: `tsr_def_var("T2") -> TSR_OK` */
  uint64_t chain;   /* hash of the whole log */
  int oom;          /* the log could not grow: compare the chain only */
} tsr__deflog;

/* FNV-1a over @p n bytes, continuing from @p h (start with TSR__FNV_START). */
#define TSR__FNV_START 0xcbf29ce484222325ull
uint64_t tsr__fnv(uint64_t h, const void *p, size_t n);

/* Log one define call: its hash (arguments) and result, and a description. */
void tsr__deflog_add(tsr__deflog *l, uint64_t args_hash, int result, const char *call,
                     const char *name);
/* Collective over @p comm: agree on @p status and on the logs. Returns the
 * agreed status, or TSR_EINVAL when the logs differ, with the message (the
 * same on every rank) in @p msg. */
int tsr__deflog_agree(tsr__deflog *l, MPI_Comm comm, int status, char *msg, size_t msglen);
void tsr__deflog_free(tsr__deflog *l);

#endif
