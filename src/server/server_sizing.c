/* Sizing help at tsr_finalize (TESSERA_STATS=1): how busy each server group
 * was and how long the model waited for it, and what that means for
 * io_groups, so that operators stop sizing write groups by trial (UFS write
 * groups, WRF quilting). Model side; the figures come with the servers'
 * FINAL acknowledgements (server_wire.h) and each model rank's ring.
 *
 * A group's busy fraction is its writer time per output over the time
 * between outputs (files opened, first to last, over outputs - 1); with one
 * output, writer time over the time since it opened. A group busy 80 % of
 * the interval or more, or model ranks that waited for ring space more than
 * 5 % of the run, mean the servers fall behind: add a group. Groups whose
 * summed busy fraction would keep one group fewer under 60 % (and a model
 * that hardly waited) mean fewer servers would do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_client.h"

enum { F_WRITER, F_OUTPUTS, F_SPAN, F_LIFE, F_PEAK, F_MSGS, NF };

struct tsr__srv_sizing {
  int G;
  double *f; /* NF per group: max over the acknowledgements this rank received */
};

int tsr__srv_sizing_new(tsr__srv_client *cl) {
  tsr__srv_sizing *z = calloc(1, sizeof *z);
  if (z) z->f = calloc((size_t)cl->L.G * NF, sizeof *z->f);
  if (!z || !z->f) {
    if (z) free(z);
    return TSR_ENOMEM;
  }
  z->G = cl->L.G;
  cl->sizing = z;
  return 0;
}

void tsr__srv_sizing_add(tsr__srv_client *cl, int g, const tsr__wire_reply *r) {
  tsr__srv_sizing *z = cl->sizing;
  if (!z || g < 0 || g >= z->G) return;
  double v[NF] = {r->writer_s, r->outputs, r->span_s, r->life_s, (double)r->peak_bytes,
                  (double)r->msgs};
  for (int i = 0; i < NF; i++)
    if (v[i] > z->f[g * NF + i]) z->f[g * NF + i] = v[i];
}

static double busy_of(const double *f) {
  if (f[F_OUTPUTS] >= 2 && f[F_SPAN] > 0)
    return f[F_WRITER] / f[F_OUTPUTS] / (f[F_SPAN] / (f[F_OUTPUTS] - 1));
  return f[F_LIFE] > 0 ? f[F_WRITER] / f[F_LIFE] : 0;
}

/* Collective over the model communicator @p comm; model rank 0 prints. */
void tsr__srv_sizing_report(tsr__srv_client *cl, MPI_Comm comm, double blocked_s, double wall_s) {
  tsr__srv_sizing *z = cl->sizing;
  int G = cl->L.G, n = G * NF + 3, rank;
  MPI_Comm_rank(comm, &rank);
  double *mine = calloc((size_t)n, sizeof *mine), *all = calloc((size_t)n, sizeof *all);
  int ok = mine && all && z;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok) {
    memcpy(mine, z->f, (size_t)G * NF * sizeof *mine);
    mine[G * NF] = cl->ring.waited_s;
    mine[G * NF + 1] = blocked_s;
    mine[G * NF + 2] = wall_s;
    MPI_Reduce(mine, all, n, MPI_DOUBLE, MPI_MAX, 0, comm);
  }
  if (ok && rank == 0) {
    double waited = all[G * NF], blocked = all[G * NF + 1], wall = all[G * NF + 2];
    double busiest = 0, sum = 0;
    int gb = 0;
    printf("tessera servers: %d group%s x %d task%s; model ranks waited for ring space up to "
           "%.3f s (blocked in Tessera up to %.3f s) of %.3f s\n",
           G, G == 1 ? "" : "s", cl->L.T, cl->L.T == 1 ? "" : "s", waited, blocked, wall);
    for (int g = 0; g < G; g++) {
      const double *f = all + g * NF;
      double b = busy_of(f), out = f[F_OUTPUTS];
      double between = out >= 2 ? f[F_SPAN] / (out - 1) : f[F_LIFE];
      printf("tessera servers: group %d: %.0f outputs, writer %.3f s per output, %.3f s between "
             "outputs: busy %.0f%%, peak memory %.0f bytes, %.0f messages received\n",
             g, out, out > 0 ? f[F_WRITER] / out : 0, between, 100 * b, f[F_PEAK], f[F_MSGS]);
      sum += b;
      if (b > busiest) {
        busiest = b;
        gb = g;
      }
    }
    int waits = wall > 0 && waited > 0.05 * wall;
    if (busiest >= 0.8 || waits)
      printf("tessera servers: add a group: group %d busy %.0f%% of the interval between outputs, "
             "model waited %.3f s (%.1f%% of the run)\n",
             gb, 100 * busiest, waited, wall > 0 ? 100 * waited / wall : 0);
    else if (G > 1 && sum / (G - 1) < 0.6)
      printf("tessera servers: fewer servers would do: %d groups busy %.0f%% in all, %d would be "
             "busy about %.0f%% each; model waited %.3f s\n",
             G, 100 * sum, G - 1, 100 * sum / (G - 1), waited);
    else
      printf("tessera servers: sized right: busiest group %.0f%%, model waited %.3f s\n",
             100 * busiest, waited);
    fflush(stdout);
  }
  free(mine);
  free(all);
}

void tsr__srv_sizing_free(tsr__srv_client *cl) {
  if (!cl->sizing) return;
  free(cl->sizing->f);
  free(cl->sizing);
  cl->sizing = NULL;
}
