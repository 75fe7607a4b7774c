/* One Z x Y x X double field cut in rows (y) over the model ranks, the
 * tile's values 0, 1, 2, ... : the memory-bound tests' model side. */
#ifndef SRV_ROWS_H
#define SRV_ROWS_H

#include <stdlib.h>

#include "tessera.h"

/* The decomposition (*d) and a filled tile (*buf, malloc'd) of model rank
 * m of M; returns tsr_decomp_box's code. */
static inline int srv_rows(tsr_ctx *ctx, MPI_Comm model, int64_t Z, int64_t Y, int64_t X,
                           tsr_decomp **d, double **buf) {
  int m, M;
  MPI_Comm_rank(model, &m);
  MPI_Comm_size(model, &M);
  int64_t g[3] = {Z, Y, X}, st[3] = {0, Y * m / M, 0}, ct[3] = {Z, 0, X};
  ct[1] = Y * (m + 1) / M - st[1];
  *buf = malloc((size_t)(Z * ct[1] * X + 1) * sizeof **buf);
  for (int64_t i = 0; *buf && i < Z * ct[1] * X; i++) (*buf)[i] = (double)i;
  return tsr_decomp_box(ctx, 3, g, st, ct, NULL, NULL, d);
}

#endif
