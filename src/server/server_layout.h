/* I/O servers: who is where. Both sides derive every rank from this one
 * description (made by tsr_init, server_layout.c), so no rank ever has to
 * be told where its peer is.
 *
 * Every model rank is a client of one server per group: model index m talks
 * to task m*T/M (balanced contiguous blocks). For a file written with a
 * parallel backend each client sends its tiles to that server; with a serial
 * backend every client sends to the group root, which assembles slab by
 * slab. Control messages (open, close, flush, finalize) go from each
 * server's *first* client only. */
#ifndef TSR_SERVER_LAYOUT_H
#define TSR_SERVER_LAYOUT_H

#include <mpi.h>
#include <stdint.h>

/* Ranks are ranks of wcomm (a duplicate of tsr_init's comm). */
typedef struct {
  MPI_Comm wcomm;
  int G, T, M, S; /* groups, tasks per group, model ranks, servers */
  int first;      /* 1: the servers are the first S ranks */
} tsr__srv_layout;

static inline int tsr__srv_server_rank(const tsr__srv_layout *L, int g, int t) {
  return (L->first ? 0 : L->M) + g * L->T + t;
}
static inline int tsr__srv_model_rank(const tsr__srv_layout *L, int m) {
  return L->first ? L->S + m : m;
}
/* The task of the group that model index m is a client of. */
static inline int tsr__srv_task_of(const tsr__srv_layout *L, int m) {
  return (int)((int64_t)m * L->T / L->M);
}
/* Model indices [lo, hi) that are clients of task t: m*T/M == t. */
static inline int tsr__srv_block_lo(const tsr__srv_layout *L, int t) {
  return (int)(((int64_t)t * L->M + L->T - 1) / L->T);
}

/* The job's outcome, at the end (tsr_finalize on the model ranks, after
 * serving on the servers; collective over L->wcomm): the most negative
 * @p code, and model rank 0's @p msg (@p len bytes) on every rank, so that
 * server ranks return from tsr_init the code the model ended with. */
int tsr__srv_job_code(const tsr__srv_layout *L, int code, char *msg, int len);

#endif
