/* Agreement: every collective call ends with the same status on every rank.
 * MPI_MIN over the (negative) codes picks the same code everywhere. */
#include <time.h>
#include <unistd.h>

#include "core/agree.h"
#include "core/base.h"

/* How a rank waits for the others. MPI polls while it waits (Open MPI yields
 * between polls when oversubscribed), which costs nothing while every rank
 * has a CPU. With more ranks on a node than CPUs, the polling takes turns of
 * the CPU from the ranks that are still writing, at every agreement: a
 * strategy=split put, one agreement each, paid for it in context switches
 * and CPU time (docs/yardstick.md, "Where the time goes"). Such ranks
 * sleep between tests instead. Every agreement is a non-blocking reduction
 * on every rank, whatever it decided: MPI matches a blocking collective
 * with no non-blocking one, and ranks may decide differently (a rank whose
 * tsr_init got a smaller communicator counts fewer ranks on its node). */
static int wait_asleep;

void tsr__agree_wait_init(MPI_Comm comm) {
  MPI_Comm node;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return;
  int here = 1;
  MPI_Comm_size(node, &here);
  MPI_Comm_free(&node);
  if (cpus <= 0 || here <= cpus || wait_asleep) return; /* the node stays oversubscribed */
  wait_asleep = 1;
  TSR_LOG("%d ranks on a node of %ld CPUs: agreements wait asleep", here, cpus);
}

static int reduce(const int *in, int *out, int n, MPI_Op op, MPI_Comm comm) {
  MPI_Request req;
  if (MPI_Iallreduce(in, out, n, MPI_INT, op, comm, &req) != MPI_SUCCESS) return MPI_ERR_OTHER;
  /* Asleep: SPIN_TESTS tests first, then sleeps that grow to SLEEP_MAX_NS.
   * An agreement whose ranks all run ends within the tests; a sleep's
   * wake-up costs 50 us or more (timer slack) on every one of them, which
   * took the servers' model ranks (2 model ranks and a server on 2 cores)
   * from 0.053 to 0.14 s of blocked time over 6 outputs when sleeping began
   * after 16 tests and grew to 500 us. A longer wait (a rank still writing)
   * sleeps, and gives the CPU to that rank. */
  enum { SPIN_TESTS = 2000 };
  const long SLEEP_MAX_NS = 200000;
  long ns = 20000;
  for (int tries = 0;; tries++) {
    int done = 0;
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return MPI_ERR_OTHER;
    if (done) return MPI_SUCCESS;
    if (!wait_asleep || tries < SPIN_TESTS) continue;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    ns = ns * 2 < SLEEP_MAX_NS ? ns * 2 : SLEEP_MAX_NS;
  }
}

int tsr__agree(MPI_Comm comm, int err) {
  int out = err;
  if (reduce(&err, &out, 1, MPI_MIN, comm) != MPI_SUCCESS) return TSR_EMPI;
  return out;
}

int tsr__agree_flag(MPI_Comm comm, int err, int *flag) {
  /* MAX of (-err, flag): the most negative error and "any rank raised flag". */
  int in[2] = {-err, *flag ? 1 : 0}, out[2];
  if (reduce(in, out, 2, MPI_MAX, comm) != MPI_SUCCESS) return TSR_EMPI;
  *flag = out[1];
  return -out[0];
}

int tsr__agree_two(MPI_Comm comm, int *a, int *b) {
  int in[2] = {*a, *b}, out[2];
  if (reduce(in, out, 2, MPI_MIN, comm) != MPI_SUCCESS) return TSR_EMPI;
  *a = out[0];
  *b = out[1];
  return 0;
}
