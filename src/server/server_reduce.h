/* reduce= on the I/O servers (docs/reductions.md, "Where and in which
 * order it is computed"): server 0 (group 0's root) holds every reduced
 * variable's accumulators, one per element, for the whole run; each server
 * that writes a frame of a reduced variable hands the elements it wrote to
 * it (folded at once when it is server 0 itself, else one message per
 * round, and more for large rounds, on the servers' own communicator), and
 * server 0 folds each variable's frames strictly in the stream's order: a
 * frame is folded only after every earlier one is complete, whichever group
 * wrote it. The derived files of the stream go to group 0, which writes
 * them from the accumulators (PUTR).
 *
 * Direction: server_writer.c / server_assemble.c / server_runs.c -> here
 * -> the sink and core/reduce_fold.c. */
#ifndef TSR_SERVER_REDUCE_H
#define TSR_SERVER_REDUCE_H

#include "server/server_state.h"

/* At tsr_init, every server (collective over the servers, @p scomm): the
 * state, or NULL without memory (then reduce= rounds fail). */
struct tsr__srv_reduce *tsr__srv_reduce_new(MPI_Comm scomm);
/* At the end of serving: wait for this server's messages to server 0 and
 * free. */
void tsr__srv_reduce_free(struct tsr__srv_reduce *r);
/* Bytes of accumulators this server holds. */
int64_t tsr__srv_reduce_bytes(const tsr__srv_server *s);

/* A PUT round's elements, in the variable's type, after the server took
 * them (nothing unless h->rvar): box @p x of the variable (non-record
 * dimensions @p shape) inside buffer @p data that holds box @p in; or
 * @p n elements from row-major index @p lo. */
void tsr__srv_reduce_box(tsr__srv_server *s, const tsr__wire_hdr *h, int nd, const int64_t shape[],
                         const tsr__box *x, const char *data, const tsr__box *in, size_t es);
void tsr__srv_reduce_run(tsr__srv_server *s, const tsr__wire_hdr *h, int64_t lo, int64_t n,
                         const char *data, size_t es);
/* The end of this server's share of a round of @p nsend servers; @p err:
 * elements were lost (the frame cannot be folded whole). */
void tsr__srv_reduce_round(tsr__srv_server *s, const tsr__wire_hdr *h, int nsend, int err);

/* RDEF and RSAVE (server 0): a stream's definition (its accumulators
 * allocated, a saved period loaded); an incomplete period saved. Errors
 * stay with the stream and fail its next derived file. */
void tsr__srv_reduce_define(tsr__srv_server *s, const tsr__rdef *def);
void tsr__srv_reduce_save(tsr__srv_server *s, const tsr__rsave *sv);
/* PUTR on every server of group 0: derived variable h->varid of @p sf from
 * item h->rvar - 1 of stream h->rstream, written by server 0 (the others
 * take part in the collective drain rule of a parallel file). */
int tsr__srv_reduce_write(tsr__srv_server *s, tsr__srv_file *sf, const tsr__wire_hdr *h);

#endif
