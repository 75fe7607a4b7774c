/* Model side: the messages that are a header only, a control message (open,
 * flush, close, final) and the error header that completes a round a rank
 * could not hand over (contract in server/server_client.h). In a file of
 * their own, below server_handoff.c and server_handoff_runs.c, which both
 * send them, so that those two call down only. */
#include <string.h>

#include "server/server_client.h"

int tsr__srv_send_control(tsr__srv_client *cl, int op, int file, int err, int dest) {
  int64_t off = tsr__ring_reserve(&cl->ring, sizeof(tsr__wire_hdr));
  if (off < 0) {
    /* No ring (its allocation failed): sent from the stack, blocking, since
     * a FINAL that never arrives leaves the servers waiting forever. MPI
     * keeps the order of the sends already posted to @p dest. */
    tsr__wire_hdr h;
    memset(&h, 0, sizeof h);
    h.op = op;
    h.file = file;
    h.err = err;
    return tsr__tp_send(&cl->tp, &h, sizeof h, dest, TSR__WIRE_TAG_HDR) ? TSR_EMPI : 0;
  }
  tsr__wire_hdr *h = (tsr__wire_hdr *)(cl->ring.buf + off);
  memset(h, 0, sizeof *h);
  h->op = op;
  h->file = file;
  h->err = err;
  return tsr__ring_send(&cl->ring, off, sizeof *h, dest, TSR__WIRE_TAG_HDR);
}

/* The error header that completes a round this rank could not hand over
 * (sent from the stack: the ring is what failed). */
int tsr__srv_send_failed(tsr__srv_client *cl, const tsr__wire_hdr *h0, int err, int dest) {
  tsr__wire_hdr h = *h0;
  h.err = err;
  h.nholes = h.npieces = 0;
  tsr__tp_send(&cl->tp, &h, sizeof h, dest, TSR__WIRE_TAG_HDR);
  return err;
}
