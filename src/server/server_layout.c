/* I/O servers: roles and communicators (tsr_init). The layout is checked on
 * every rank before any communicator is split, so a configuration that does
 * not fit is one clear TSR_ESERVERS everywhere instead of a hang. */
#include <stdio.h>
#include <stdlib.h>

#include "handle/handles.h" /* tsr_ctx: the model side's state hangs on it */
#include "server/server_client.h"
#include "server/server_placement.h"
#include "server/server_reduce.h"
#include "server/server_state.h"
#include "server/servers.h"

/* The smallest bound leaves a message room for an op header and a value
 * with a concentrator's framing: no message exceeds a quarter of the bound. */
_Static_assert(TSR__SRV_MIN_BOUND / 8 - TSR__CONC_FRAME >= (int)sizeof(tsr__wire_hdr) + 16,
               "TSR__SRV_MIN_BOUND too small for a header and a value");

/* The layout asked for: io_groups x io_tasks; a missing one defaults to 1. */
static int check_layout(const tsr__hints *h, int size, tsr__srv_layout *L) {
  int G = (h->set & TSR__H_IO_GROUPS) ? h->io_groups : 1;
  int T = (h->set & TSR__H_IO_TASKS) ? h->io_tasks : 1;
  L->G = G;
  L->T = T;
  L->first = h->server_ranks_first;
  if (G < 1 || T < 1) {
    TSR_LOG("io_groups=%d io_tasks=%d: both must be at least 1", G, T);
    return TSR_ESERVERS;
  }
  int64_t S = (int64_t)G * T;
  if (S >= size) {
    TSR_LOG("io_groups*io_tasks=%lld servers leave no model rank out of %d ranks", (long long)S,
            size);
    return TSR_ESERVERS;
  }
  L->S = (int)S;
  L->M = size - L->S;
  if (L->M < T) {
    /* Each server of a group needs at least one client. */
    TSR_LOG("io_tasks=%d exceeds the %d model ranks", T, L->M);
    return TSR_ESERVERS;
  }
  if (h->concentrators > L->M) { /* a group larger than the model: a hint error */
    TSR_LOG("concentrators=%d: more than the %d model ranks", h->concentrators, L->M);
    return TSR_EHINT;
  }
  return 0;
}

int tsr__srv_job_code(const tsr__srv_layout *L, int code, char *msg, int len) {
  int job = code;
  if (MPI_Allreduce(&code, &job, 1, MPI_INT, MPI_MIN, L->wcomm) != MPI_SUCCESS) return TSR_EMPI;
  if (job && MPI_Bcast(msg, len, MPI_CHAR, tsr__srv_model_rank(L, 0), L->wcomm) != MPI_SUCCESS)
    msg[0] = '\0';
  msg[len - 1] = '\0';
  return job;
}

int tsr__servers_init(tsr_ctx *ctx, MPI_Comm comm, const tsr__hints *h, MPI_Comm *model_comm,
                      int *is_server) {
  *is_server = 0;
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  tsr__srv_layout L = {.wcomm = MPI_COMM_NULL};
  int rc = tsr__agree(comm, check_layout(h, size, &L));
  int key = rank;
  if (!rc) rc = tsr__srv_placement_key(comm, h, &L, &key);
  if (rc) return rc;

  /* A private communicator for model<->server traffic: its messages never
   * match the model's own, and MPI errors come back as codes. Its order is
   * the placement's (server_placement.h): the servers are its last or first
   * S ranks, whichever ranks of comm they are. */
  rc = MPI_Comm_split(comm, 0, key, &L.wcomm) == MPI_SUCCESS ? 0 : TSR_EMPI;
  if (!rc) MPI_Comm_set_errhandler(L.wcomm, MPI_ERRORS_RETURN);
  rc = tsr__agree(comm, rc);
  if (rc) {
    if (L.wcomm != MPI_COMM_NULL) MPI_Comm_free(&L.wcomm);
    return rc;
  }

  /* Role and index: servers are [0, S) or [M, size) of wcomm. */
  int wrank = key;
  int sbase = L.first ? 0 : L.M, mbase = L.first ? L.S : 0;
  int server = wrank >= sbase && wrank < sbase + L.S;
  int index = server ? wrank - sbase : wrank - mbase;
  int g = server ? index / L.T : 0;

  /* One split gives the model communicator (color 0, ordered by model index,
   * so ctx->rank == m) and each group's communicator (color 1 + g). */
  MPI_Comm part = MPI_COMM_NULL;
  if (MPI_Comm_split(L.wcomm, server ? 1 + g : 0, index, &part) != MPI_SUCCESS) rc = TSR_EMPI;
  if (!rc && server) MPI_Comm_set_errhandler(part, MPI_ERRORS_RETURN);
  /* The servers among themselves (reduce=: server 0 holds the
   * accumulators, server_reduce.h); MPI_COMM_NULL on model ranks. */
  MPI_Comm scomm = MPI_COMM_NULL;
  if (!rc && MPI_Comm_split(L.wcomm, server ? 0 : MPI_UNDEFINED, index, &scomm) != MPI_SUCCESS)
    rc = TSR_EMPI;
  tsr__srv_client *cl = NULL;
  tsr__srv_server s = {.L = L, .gcomm = part};
  /* The transport is set up on every rank of wcomm (rma makes its window
   * there, a collective call), whatever happened locally before. */
  tsr__transport tp = {0};
  tsr__set_last_error(""); /* a transport's own sentence, if it fails below */
  if (L.wcomm != MPI_COMM_NULL) {
    int r = tsr__transport_init(&tp, h->transport, L.wcomm, server, h->buffer_bytes);
    if (!rc) rc = r;
    /* Concentrators: a layer over the transport (collective too). */
    if (h->concentrators && tp.ops) {
      r = tsr__transport_concentrate(&tp, h->concentrators, h->buffer_bytes,
                                     h->server_buffer_bytes, server ? index : -1);
      if (!rc) rc = r;
    }
  }
  if (!rc && !server) /* the ring: buffer_bytes per model rank */
    rc = tsr__srv_client_new(&L, index, h->buffer_bytes, &tp, &cl);
  if (!rc && server) s.tp = tp;
  int mine = rc;
  rc = tsr__agree(comm, rc);
  if (rc) {
    /* The failing rank's sentence (shm: no room for the ring), on every rank. */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", mine == rc ? tsr_last_error() : "");
    tsr__share_message(comm, mine, rc, msg, sizeof msg);
    tsr__set_last_error(msg[0] ? msg : tsr_strerror(rc));
    if (cl) cl->L.wcomm = MPI_COMM_NULL; /* freed below */
    if (cl) cl->tp.ops = NULL;           /* freed below, once */
    tsr__srv_client_free(cl);
    tsr__transport_free(&tp);
    if (part != MPI_COMM_NULL) MPI_Comm_free(&part);
    if (scomm != MPI_COMM_NULL) MPI_Comm_free(&scomm);
    if (L.wcomm != MPI_COMM_NULL) MPI_Comm_free(&L.wcomm);
    return rc;
  }
  if (!server) {
    /* Concentrators: a message leaves room for its envelope and its
     * bundle's count, so that a bundle of one message fits its share too. */
    cl->chunk = tsr__srv_chunk(h->server_buffer_bytes, h->concentrators != 0);
    ctx->servers = cl;
    *model_comm = part;
    return 0;
  }

  s.bound = h->server_buffer_bytes;
  /* As the model side's (the slabs must be the same). */
  s.chunk = tsr__srv_chunk(s.bound, h->concentrators != 0);
  s.g = g;
  s.comm_rank = rank;
  s.t = index % L.T;
  s.index = index;
  s.blo = tsr__srv_block_lo(&L, s.t);
  s.bhi = tsr__srv_block_lo(&L, s.t + 1);
  /* The root's op stream comes from model rank 0, which is also the first
   * client of task 0 and the only sender of replicated data. */
  s.c0 = tsr__srv_model_rank(&L, s.blo);
  s.tp.nrecv = &s.msgs; /* messages received, for the statistics */
  s.scomm = scomm;
  s.red = tsr__srv_reduce_new(scomm);
  *is_server = 1;
  rc = tsr__srv_serve(&s);
  if (rc) TSR_LOG("server %d: %s", s.index, tsr_errname(rc));
  /* The model ranks learned any error of ours through their replies; what
   * this server returns is the job's outcome as the model saw it (its last
   * failure), so that every rank of a failed job exits alike. */
  char msg[256] = "";
  int job = tsr__srv_job_code(&s.L, 0, msg, (int)sizeof msg);
  if (job) tsr__set_last_error(msg[0] ? msg : tsr_strerror(job));
  tsr__transport_free(&s.tp); /* collective with the model ranks' tsr_finalize */
  MPI_Comm_free(&s.gcomm);
  MPI_Comm_free(&s.scomm);
  MPI_Comm_free(&s.L.wcomm);
  return job;
}
