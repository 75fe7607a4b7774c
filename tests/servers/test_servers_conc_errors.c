/* Concentrators and bounded servers: a bundle the server cannot hold is an
 * agreed error, never a hang (each run has a CTest timeout).
 *
 * One server (io_tasks=1) behind one concentrator for every model rank
 * (concentrators=per_node on one node), the null backend (parallel: the
 * server first looks at every client's first message of a round, then takes
 * the parts client by client) and server_buffer_bytes=4k, the smallest: each
 * tile goes in parts of at most 464 bytes (an eighth of the bound less the
 * framing; a bundle of at most 512), and with 5 model ranks the server must
 * hold the parts of the clients before the one it takes, past the three
 * quarters of the bound that bundles may take (the receive buffer and the
 * slab take an eighth each; so the test runs at 6 ranks). (Over
 * transport=rma the many small bundles
 * in flight each take a window attachment, past Open MPI's limit: TSR_EMPI
 * at the put, a known limit of rma with tiny bounds.)
 * Expected: tsr_flush returns TSR_ENOMEM on every model rank, with a
 * message naming the server and the bundle size; tsr_close and
 * tsr_finalize return on every rank; the server's tsr_init returns the job's
 * failure, TSR_ENOMEM.
 *
 * Then the same run with server_buffer_bytes=64k: no error, and the
 * server's peak memory (bundles included) stays under the bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c/test_util.h"
#include "srv_rows.h"

/* One 3-D double field of 2 x 32 x 32 cut in rows over the model ranks, one
 * frame; returns tsr_flush's code (on a server: tsr_init's). */
static int run(const char *dir, const char *extra, const char *label, int64_t *peak) {
  char hints[256], path[512];
  snprintf(hints, sizeof hints, "strategy=servers:io_tasks=1:concentrators=per_node%s", extra);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  int rc = tsr_init(MPI_COMM_WORLD, hints, &ctx, &model);
  if (model == MPI_COMM_NULL) return rc; /* a server: the job's outcome */
  TSR_CHECK_OK(rc);
  int m;
  MPI_Comm_rank(model, &m);
  enum { Z = 2, Y = 32, X = 32 };
  tsr_decomp *d = NULL;
  double *buf = NULL;
  TSR_CHECK_OK(srv_rows(ctx, model, Z, Y, X, &d, &buf));
  snprintf(path, sizeof path, "%s/conc_errors_%s.nc", dir, label);
  tsr_file *f = NULL;
  TSR_CHECK_OK(tsr_create(ctx, path, "backend=null", &f));
  int dz, dy, dx, v;
  TSR_CHECK_OK(tsr_def_dim(f, "z", Z, &dz));
  TSR_CHECK_OK(tsr_def_dim(f, "y", Y, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", X, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "W", TSR_DOUBLE, 3, (int[]){dz, dy, dx}, &v));
  TSR_CHECK_OK(tsr_enddef(f));
  TSR_CHECK_OK(tsr_put(f, v, 0, d, buf));
  int frc = tsr_flush(f);
  if (frc) { /* the message names the server and the bundle */
    int code = 0;
    const char *msg = NULL;
    TSR_CHECK_EQ_INT(tsr_backend_error(f, &code, &msg), TSR_ENOMEM);
    int named = msg && strstr(msg, "server 0") && strstr(msg, "bundle of");
    if (!named) fprintf(stderr, "rank %d: message \"%s\"\n", m, msg ? msg : "(none)");
    TSR_CHECK_EQ_INT(named, 1);
  }
  tsr_stats sts;
  TSR_CHECK_OK(tsr_get_stats(ctx, &sts));
  *peak = sts.server_peak_bytes;
  /* Whatever close and finalize say, they say it on every model rank. */
  int crc = tsr_close(&f), lo, hi;
  MPI_Allreduce(&crc, &lo, 1, MPI_INT, MPI_MIN, model);
  MPI_Allreduce(&crc, &hi, 1, MPI_INT, MPI_MAX, model);
  TSR_CHECK_EQ_INT(lo, hi);
  tsr_decomp_free(&d);
  tsr_finalize(&ctx);
  free(buf);
  MPI_Comm_free(&model);
  return frc;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv);
  const char *dir = argc > 1 ? argv[1] : ".";
  int64_t peak = -1;
  int rc = run(dir, ":server_buffer_bytes=4k", "tiny", &peak);
  TSR_CHECK_EQ_INT(rc, TSR_ENOMEM); /* every rank: model ranks from tsr_flush, the server from tsr_init */
  MPI_Barrier(MPI_COMM_WORLD);
  peak = -1;
  rc = run(dir, ":server_buffer_bytes=64k", "fits", &peak);
  TSR_CHECK_EQ_INT(rc, TSR_OK);
  if (peak >= 0) TSR_CHECK_EQ_INT(peak > 0 && peak <= 65536, 1);
  return tu_finish("servers_conc_errors");
}
