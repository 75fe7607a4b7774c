/* The model side's per-context state of the I/O servers: made by tsr_init
 * on every model rank, freed by tsr_finalize. */
#include <stdlib.h>

#include "server/server_client.h"

int tsr__srv_client_new(const tsr__srv_layout *L, int m, int64_t ring_bytes,
                        const tsr__transport *tp, tsr__srv_client **out) {
  tsr__srv_client *cl = calloc(1, sizeof *cl);
  *out = NULL;
  if (!cl) return TSR_ENOMEM;
  cl->L = *L;
  cl->m = m;
  cl->tp = *tp;
  cl->t_init = MPI_Wtime();
  cl->ring.tp = &cl->tp;   /* cl never moves: allocated once here */
  cl->ring.want = ring_bytes; /* allocated at the first hand-off */
  *out = cl;
  return 0;
}

void tsr__srv_client_free(tsr__srv_client *cl) {
  if (!cl) return;
  tsr__ring_free(&cl->ring); /* before the transport: rma detaches the ring */
  tsr__transport_free(&cl->tp);
  tsr__srv_tracks_free(cl);
  tsr__srv_sizing_free(cl);
  tsr__srv_streams_free(cl);
  free(cl->sent);
  if (cl->L.wcomm != MPI_COMM_NULL) MPI_Comm_free(&cl->L.wcomm);
  free(cl);
}
