/* strategy=auto's candidates and their first ranking (docs/auto.md). The
 * names of the strategies live in this layer, so the candidates do too: the
 * API layer (core/auto.c) receives hint texts and predicted seconds and
 * applies them as any hint. Only strategies that need no dedicated ranks
 * and write one shared file are candidates (servers cannot appear mid-run;
 * split writes other files), so every candidate writes the same bytes.
 *
 * The ranking is a small, documented approximation of the cost model's
 * (python/tessera/model), not a port of it: a frame of B bytes from P ranks
 * costs the writers' share of the file bandwidth plus the bytes moved to
 * them. It only orders the first tries; what the stream measures decides. */
#include <stdio.h>
#include <string.h>

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

int tsr__auto_candidates(int ranks, int64_t frame_bytes, tsr__auto_offer *out, int max) {
  double b = frame_bytes > 0 ? (double)frame_bytes : 1.0e6, p = ranks;
  int n = 0;
#define OFFER(cost, ...)                                                                          \
  do {                                                                                             \
    if (n < max) {                                                                                 \
      snprintf(out[n].hints, sizeof out[n].hints, __VA_ARGS__);                                    \
      out[n++].predicted_s = (cost);                                                               \
    }                                                                                              \
  } while (0)
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
