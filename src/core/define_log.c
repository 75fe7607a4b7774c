/* The define log (contract in core/define_log.h). */
#include "core/define_log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

uint64_t tsr__fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

void tsr__deflog_add(tsr__deflog *l, uint64_t args_hash, int result, const char *call,
                     const char *name) {
  uint64_t h = tsr__fnv(args_hash, &result, sizeof result);
  l->chain = tsr__fnv(l->chain ? l->chain : TSR__FNV_START, &h, sizeof h);
  if (l->oom) return;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    uint64_t *nh = realloc(l->hash, (size_t)cap * sizeof *nh);
    if (nh) l->hash = nh;
    char(*nw)[80] = nh ? realloc(l->what, (size_t)cap * sizeof *nw) : NULL;
    if (!nh || !nw) {
      l->oom = 1; /* the chain still detects a mismatch; only the message is vaguer */
      return;
    }
    l->what = nw;
    l->cap = cap;
  }
  l->hash[l->n] = h;
  snprintf(l->what[l->n], sizeof l->what[l->n], "%s(\"%.40s\") -> %s", call, name ? name : "",
           tsr_errname(result));
  l->n++;
}

/* The first call where this rank's log differs from rank 0's, INT_MAX if none. */
static int first_difference(const tsr__deflog *l, const uint64_t *h0, int n0) {
  int n = l->n < n0 ? l->n : n0;
  for (int i = 0; i < n; i++)
    if (l->hash[i] != h0[i]) return i;
  return l->n != n0 ? n : INT_MAX;
}

static void describe(const tsr__deflog *l, int i, char *out, size_t len) {
  if (i < l->n) snprintf(out, len, "%s", l->what[i]);
  else snprintf(out, len, "no call #%d (%d define calls in all)", i + 1, l->n);
}

/* Which call, and which rank, made the logs differ: rank 0's log is the
 * reference. Collective. */
static void name_mismatch(const tsr__deflog *l, MPI_Comm comm, char *msg, size_t msglen) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int oom = l->oom, any_oom = 0, n0 = l->n;
  MPI_Allreduce(&oom, &any_oom, 1, MPI_INT, MPI_MAX, comm);
  if (any_oom) {
    snprintf(msg, msglen, "the define calls (dimensions, variables, attributes) differ across ranks");
    return;
  }
  MPI_Bcast(&n0, 1, MPI_INT, 0, comm);
  uint64_t *h0 = malloc((size_t)(n0 ? n0 : 1) * sizeof *h0);
  if (rank == 0 && n0) memcpy(h0, l->hash, (size_t)n0 * sizeof *h0);
  if (h0) MPI_Bcast(h0, n0, MPI_UINT64_T, 0, comm);
  struct { int index, rank; } mine = {h0 ? first_difference(l, h0, n0) : INT_MAX, rank}, first;
  free(h0);
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, comm);
  char theirs[96] = "", ref[96] = "";
  if (rank == first.rank) describe(l, first.index, theirs, sizeof theirs);
  if (rank == 0) describe(l, first.index, ref, sizeof ref);
  MPI_Bcast(theirs, sizeof theirs, MPI_CHAR, first.rank, comm);
  MPI_Bcast(ref, sizeof ref, MPI_CHAR, 0, comm);
  snprintf(msg, msglen, "define calls differ across ranks at call #%d: rank %d made %s, rank 0 made %s",
           first.index + 1, first.rank, theirs, ref);
}

int tsr__deflog_agree(tsr__deflog *l, MPI_Comm comm, int status, char *msg, size_t msglen) {
  /* One reduction: the worst status, and max(chain) and max(~chain), which
   * are equal-complements exactly when every rank has the same chain. */
  uint64_t in[3] = {(uint64_t)(-(int64_t)status), l->chain, ~l->chain}, out[3];
  if (MPI_Allreduce(in, out, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) return TSR_EMPI;
  int agreed = -(int)out[0];
  if (agreed) return agreed;
  if (out[1] == ~out[2]) return 0;
  name_mismatch(l, comm, msg, msglen);
  return TSR_EINVAL;
}

void tsr__deflog_free(tsr__deflog *l) {
  free(l->hash);
  free(l->what);
  memset(l, 0, sizeof *l);
}
