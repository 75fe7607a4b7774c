/* strategy=auto's candidates and their first ranking (docs/auto.md). The
 * names of the strategies live in this layer, so the candidates do too: the
 * API layer (core/auto.c) receives hint texts and predicted seconds and
 * applies them as any hint. Only strategies that need no dedicated ranks
 * and write one shared file are candidates (servers cannot appear mid-run;
 * split writes other files), so every candidate writes the same bytes.
 *
 * With ranks reserved for servers at tsr_init the set of server ranks is
 * fixed for the job, so the candidates are the servers' knobs that a file's
 * hints carry to the servers in its OPEN message (servers.c): the backend
 * (pnetcdf: the whole group writes; a serial one: the group root writes)
 * and, with several groups, which group takes the next file (server_pick).
 *
 * Without servers, once the file's schema is known, the cost model ranks
 * them (core/cost_model.c, the port of python/tessera/model's synchronous
 * strategies) with the job's profile. Before that (tsr_create), for the
 * servers' knobs, and without a profile, a small approximation with fixed
 * constants does: a frame of B bytes from P ranks costs the writers' share
 * of the file bandwidth plus the bytes moved to them. Either only orders
 * (and, the model's, prunes) the first tries; what the stream measures
 * decides. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/cost_model.h"
#include "strategy/strategy.h"

static const char auto_name[] = "auto";

int tsr__strategy_is_auto(const char *name, size_t n) {
  return name && n == sizeof auto_name - 1 && memcmp(name, auto_name, n) == 0;
}

/* The shipped constants: one writer's file bandwidth, the file system's
 * bandwidth for all writers together, the bandwidth of moving bytes
 * between ranks, a collective call's cost per rank, a copy's bandwidth. */
#define WRITER_BW 1.0e9
#define FILE_BW 2.0e9
#define MOVE_BW 4.0e9
#define COLL_S 2.0e-4
#define COPY_BW 8.0e9

static double write_s(double b, int writers) {
  double bw = writers * WRITER_BW;
  return b / (bw < FILE_BW ? bw : FILE_BW);
}

#define OFFER(cost, ...)                                                                          \
  do {                                                                                             \
    if (n < max) {                                                                                 \
      snprintf(out[n].hints, sizeof out[n].hints, __VA_ARGS__);                                    \
      out[n++].predicted_s = (cost);                                                               \
    }                                                                                              \
  } while (0)

/* The servers' knobs: the model ranks copy their tiles into the hand-off
 * ring and go on; what they may wait for is the group writing the frame.
 * "strategy=servers" keeps the default backend for the file's format (the
 * whole group through PnetCDF with several tasks, else the group root); the
 * other candidate names the other way, which a format it cannot write
 * (format=netcdf4) rules out at tsr_create, so auto falls back. */
static int server_offers(const tsr__auto_case *c, double b, tsr__auto_offer *out, int max) {
  int n = 0, t = c->io_tasks > 0 ? c->io_tasks : 1;
  const tsr__backend_ops *ops;
  int pnetcdf = tsr__backend_find("pnetcdf", &ops) == 0;
  double handoff = b / c->ranks / COPY_BW;
  double root = handoff + write_s(b, 1) + b / MOVE_BW;         /* the group root alone */
  double group = handoff + write_s(b, t) + b / t / MOVE_BW + COLL_S * t; /* all T, PnetCDF */
  const char *pick[2] = {"", ":server_pick=idle"};
  for (int k = 0; k < (c->io_groups > 1 ? 2 : 1); k++) {
    if (t > 1 && pnetcdf) {
      OFFER(group, "strategy=servers%s", pick[k]);
      OFFER(root, "strategy=servers:backend=netcdf%s", pick[k]);
    } else {
      OFFER(root, "strategy=servers%s", pick[k]);
      if (pnetcdf) OFFER(group, "strategy=servers:backend=pnetcdf%s", pick[k]);
    }
  }
  return n;
}

/* The cost model's seconds for one candidate; the deferred put is priced
 * as direct's: PnetCDF swaps the tile into a buffer of its own (docs/hints.md,
 * put_mode), a copy as the buffered put's, and the model has no other term. */
static double modelled(const tsr__cost_case *k, const tsr__auto_case *c, int kind, int writers) {
  tsr__cost_run r = {.kind = kind, .aggregators = writers, .ranks = c->ranks,
                     .slab_bytes = c->slab_bytes, .buffer_bytes = c->buffer_bytes,
                     .interval_s = c->interval_s};
  return tsr__cost_predict(k, c->profile, &r);
}

static int model_offers(const tsr__auto_case *c, const tsr__cost_case *k, tsr__auto_offer *out,
                        int max) {
  int n = 0;
  double direct = modelled(k, c, TSR__COST_DIRECT, 0);
  OFFER(modelled(k, c, TSR__COST_SERIAL, 0), "strategy=serial");
  OFFER(direct, "strategy=direct");
  OFFER(direct, "strategy=direct:put_mode=deferred");
  for (int w = 2; w <= 4 && w <= c->ranks; w *= 2)
    OFFER(modelled(k, c, TSR__COST_AGGREGATE, w), "strategy=aggregate:aggregators=%d", w);
  return n;
}

int tsr__auto_candidates(const tsr__auto_case *c, tsr__auto_offer *out, int max, int *by_model) {
  double b = c->frame_bytes > 0 ? (double)c->frame_bytes : 1.0e6, p = c->ranks;
  int ranks = c->ranks, n = 0;
  tsr__cost_case k = {0};
  if (by_model) *by_model = 0;
  if (c->io_groups > 0) {
    n = server_offers(c, b, out, max);
  } else if (c->schema && c->profile && tsr__cost_case_from_schema(c->schema, &k) == 0) {
    n = model_offers(c, &k, out, max);
    if (by_model) *by_model = 1;
  } else {
    /* serial: everything to one writer, which writes it alone. */
    OFFER(write_s(b, 1) + b * (p - 1) / p / MOVE_BW, "strategy=serial");
    /* direct: every rank writes its tile collectively; tiles are not
     * contiguous in the file, so count each rank's requests. The deferred
     * put saves the copy into the backend's buffer. */
    OFFER(write_s(b, ranks) * 1.5 + COLL_S * p + b / p / COPY_BW, "strategy=direct");
    OFFER(write_s(b, ranks) * 1.5 + COLL_S * p, "strategy=direct:put_mode=deferred");
    /* aggregate: tiles rearranged into contiguous slabs of N writers. */
    for (int w = 2; w <= 4 && w <= ranks; w *= 2)
      OFFER(write_s(b, w) + b * (p - w) / p / MOVE_BW + COLL_S * w,
            "strategy=aggregate:aggregators=%d", w);
  }
  tsr__cost_case_free(&k);
#undef OFFER
  /* Cheapest first (a stable insertion sort: ties keep the order above). */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && out[j - 1].predicted_s > out[j].predicted_s; j--) {
      tsr__auto_offer t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
}
