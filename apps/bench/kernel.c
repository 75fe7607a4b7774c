/* The model's work in one step: --sweeps substeps, each a halo exchange with
 * the four neighbours followed by a 7-point diffusion stencil over every
 * prognostic (float or double, (..., y, x) laid out) field of the tile, as
 * WRF's Runge-Kutta substeps each exchange halos before they compute. The
 * result does not depend on the decomposition. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { SEND_W, SEND_E, SEND_S, SEND_N, RECV_W, RECV_E, RECV_S, RECV_N };

static int64_t outer_of(const bench_shape *sh) {
  int64_t n = 1;
  for (int d = 0; d < sh->ndims - 2; d++) n *= sh->mcount[d];
  return n;
}

/* Byte subarrays of the memory box seen as (outer, y, x * esize): x halos
 * first, then y halos that include the x halo columns, so corners fill too. */
static int make_halo_types(bench_shape *sh, int e, int esize) {
  if (sh->halo_ready[e]) return 0;
  const int H = BENCH_HALO;
  int nd = sh->ndims;
  int outer = (int)outer_of(sh), my = (int)sh->mcount[nd - 2], mx = (int)sh->mcount[nd - 1];
  int cy = (int)sh->count[nd - 2], cx = (int)sh->count[nd - 1];
  int sizes[3] = {outer, my, mx * esize};
  int xsub[3] = {outer, cy, H * esize}, ysub[3] = {outer, H, mx * esize};
  int starts[8][3] = {
      [SEND_W] = {0, H, H * esize},        [SEND_E] = {0, H, cx * esize},
      [RECV_W] = {0, H, 0},                [RECV_E] = {0, H, (H + cx) * esize},
      [SEND_S] = {0, H, 0},                [SEND_N] = {0, cy, 0},
      [RECV_S] = {0, 0, 0},                [RECV_N] = {0, H + cy, 0},
  };
  /* WRF's XZY holds (y, outer, x): the same boxes with the first two axes swapped. */
  if (sh->xzy) {
    int *swap[] = {sizes, xsub, ysub};
    for (int a = 0; a < 3; a++) {
      int t = swap[a][0];
      swap[a][0] = swap[a][1], swap[a][1] = t;
    }
    for (int t = 0; t < 8; t++) {
      int tmp = starts[t][0];
      starts[t][0] = starts[t][1], starts[t][1] = tmp;
    }
  }
  for (int t = 0; t < 8; t++) {
    int *sub = (t == SEND_W || t == SEND_E || t == RECV_W || t == RECV_E) ? xsub : ysub;
    if (MPI_Type_create_subarray(3, sizes, sub, starts[t], MPI_ORDER_C, MPI_BYTE,
                                 &sh->halo[e][t]) != MPI_SUCCESS ||
        MPI_Type_commit(&sh->halo[e][t]) != MPI_SUCCESS)
      return -1;
  }
  sh->halo_ready[e] = 1;
  return 0;
}

/* One direction pair for every prognostic field, all messages in flight at once. */
static int exchange_axis(bench_run *run, int axis, MPI_Request *reqs) {
  const bench_grid *g = &run->grid;
  int lo = axis == 0 ? g->west : g->south, hi = axis == 0 ? g->east : g->north;
  int nreq = 0;
  for (int v = 0; v < run->nfields; v++) {
    bench_field *f = &run->fields[v];
    if (!f->stepped) continue;
    bench_shape *sh = &run->shapes[f->shape];
    int e = f->esize == 8 ? 1 : 0;
    if (make_halo_types(sh, e, (int)f->esize) != 0) return -1;
    MPI_Datatype *t = sh->halo[e];
    int tag = 2 * v;
    int s_lo = axis == 0 ? SEND_W : SEND_S, s_hi = axis == 0 ? SEND_E : SEND_N;
    int r_lo = axis == 0 ? RECV_W : RECV_S, r_hi = axis == 0 ? RECV_E : RECV_N;
    MPI_Irecv(f->buf, 1, t[r_lo], lo, tag, g->comm, &reqs[nreq++]);
    MPI_Irecv(f->buf, 1, t[r_hi], hi, tag + 1, g->comm, &reqs[nreq++]);
    MPI_Isend(f->buf, 1, t[s_hi], hi, tag, g->comm, &reqs[nreq++]);
    MPI_Isend(f->buf, 1, t[s_lo], lo, tag + 1, g->comm, &reqs[nreq++]);
  }
  return MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? 0 : -1;
}

int bench_halo_exchange(bench_run *run) {
  if (run->cfg.halo == 0) return 0; /* --halo 0: contiguous tiles, nothing to exchange */
  int n = 0;
  for (int v = 0; v < run->nfields; v++) n += run->fields[v].stepped;
  MPI_Request reqs_small[64];
  MPI_Request *reqs = 4 * n > 64 ? malloc(sizeof *reqs * (size_t)(4 * n)) : reqs_small;
  if (!reqs) return -1;
  int rc = exchange_axis(run, 0, reqs);
  if (rc == 0) rc = exchange_axis(run, 1, reqs);
  if (reqs != reqs_small) free(reqs);
  return rc;
}

#define A_H 0.1
#define A_V 0.05

/* sk and sj are the memory strides of a level and of a row: (my * mx, mx) in
 * the file's order, (mx, nouter * mx) in WRF's XZY. */
#define DEFINE_SWEEP(NAME, T)                                                               \
  static void NAME(T *u, T *out, int64_t nouter, int64_t sk, int64_t sj, int64_t cy,        \
                   int64_t cx) {                                                            \
    const int64_t H = BENCH_HALO, plane = sk, mx = sj;                                      \
    for (int64_t k = 0; k < nouter; k++) {                                                  \
      for (int64_t j = H; j < H + cy; j++) {                                                \
        const T *c = u + k * plane + j * mx;                                                \
        const T *n = c + mx, *s = c - mx;                                                   \
        /* Top and bottom planes: no vertical term (a linearly extrapolated   \
         * ghost level), so linear profiles such as PHB = g z stay put. */     \
        int edge = k == 0 || k + 1 == nouter;                                               \
        const T *up = edge ? c : c + plane;                                                 \
        const T *dn = edge ? c : c - plane;                                                 \
        T *o = out + k * plane + j * mx;                                                    \
        for (int64_t i = H; i < H + cx; i++)                                                \
          o[i] = c[i] + (T)A_H * (c[i - 1] + c[i + 1] + n[i] + s[i] - 4 * c[i]) +           \
                 (T)A_V * (up[i] + dn[i] - 2 * c[i]);                                       \
      }                                                                                     \
    }                                                                                       \
    for (int64_t k = 0; k < nouter; k++)                                                    \
      for (int64_t j = H; j < H + cy; j++)                                                  \
        memcpy(u + k * plane + j * mx + H, out + k * plane + j * mx + H,                    \
               sizeof(T) * (size_t)cx);                                                     \
  }

DEFINE_SWEEP(sweep_float, float)
DEFINE_SWEEP(sweep_double, double)

int bench_step(bench_run *run) {
  int substeps = run->cfg.sweeps > 0 ? run->cfg.sweeps : 1;
  for (int sweep = 0; sweep < substeps; sweep++) {
    if (bench_halo_exchange(run) != 0) return -1;
    if (sweep >= run->cfg.sweeps) break; /* --sweeps 0: communication only */
    for (int v = 0; v < run->nfields; v++) {
      bench_field *f = &run->fields[v];
      if (!f->stepped) continue;
      const bench_shape *sh = &run->shapes[f->shape];
      int nd = sh->ndims;
      int64_t nouter = outer_of(sh), my = sh->mcount[nd - 2], mx = sh->mcount[nd - 1];
      int64_t cy = sh->count[nd - 2], cx = sh->count[nd - 1];
      int64_t sk = sh->xzy ? mx : my * mx, sj = sh->xzy ? nouter * mx : mx;
      if (f->esize == 4)
        sweep_float(f->buf, run->scratch, nouter, sk, sj, cy, cx);
      else
        sweep_double(f->buf, run->scratch, nouter, sk, sj, cy, cx);
    }
  }
  return 0;
}
