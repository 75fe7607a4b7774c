/* The cost model's synchronous strategies (contract in core/cost_model.h).
 * Each static function is the one of python/tessera/model/strategy.py (or
 * ompio.py, predict.py, profile.py) named in its comment, amount for amount;
 * docs/model.md has the equations. tests/auto/check_cost_model.py holds the
 * two to the same seconds on the bench's cases. */
#include <math.h>
#include <string.h>

#include "core/cost_model.h"

typedef double amounts[TSR__COST_NKEYS];

/* The agreements per put and per file (strategy.py AGREE_PER_PUT,
 * AGREE_PER_FILE, SHARED_FILE_STAGES). */
#define AGREE_PER_PUT 3
#define AGREE_PER_FILE 6
#define SHARED_FILE_STAGES 6

typedef struct {
  const tsr__cost_case *c;
  const tsr__cost_profile *p;
  const tsr__cost_run *r;
  int px, py;
  double dec_bytes, rep_bytes; /* one frame's tiled and replicated bytes */
  int ndec, nrep;
} ctx;

static double stages(int p) {
  int s = 0;
  while ((1L << s) < p) s++;
  return p > 1 ? (s > 1 ? s : 1) : 0;
}

/* fan_in: a receiver getting nbytes from m senders, own of it its own. */
static void fan_in(amounts a, double m, double nbytes, double own, double times) {
  double remote = own != 0.0 ? (m - 1 > 0 ? m - 1 : 0) : m;
  a[TSR__COST_MSG] += remote * times;
  a[TSR__COST_MATCH] += remote * (remote + 1) / 2 * times;
  a[TSR__COST_NET] += nbytes * (1.0 - own) * times;
  a[TSR__COST_COPY] += nbytes * times;
}

static void stream_write(amounts a, double nbytes, double total, double requests) {
  a[TSR__COST_WRITE] += nbytes;
  a[TSR__COST_FS] += total;
  a[TSR__COST_REQ] += requests;
}

static void replicated_write(amounts a, const ctx *x) {
  stream_write(a, x->rep_bytes, x->rep_bytes, x->nrep);
}

static void agreements(amounts a, const ctx *x) {
  a[TSR__COST_COLL] += (double)AGREE_PER_PUT * x->c->nvars * stages(x->r->ranks);
}

static int aggregator_count(const ctx *x) {
  int n = x->r->aggregators > 0 ? x->r->aggregators : (x->r->ranks / 4 > 1 ? x->r->ranks / 4 : 1);
  return n < x->r->ranks ? n : x->r->ranks;
}

/* ompio.py cost_calc: OMPIO's LogGP estimate of a collective write with
 * p_a aggregators, with OMPIO's built-in constants. */
static double ompio_cost(int p, int p_a, double d_p, double b_c, int dim) {
  double L = 1.84e-6, o = 1.49e-6, g = 1.19e-5, G = 6.7e-10;
  double n_as = 1.0, n_ar = 1.0, m_s = 1.0;
  double n_r = (double)((int64_t)(p * d_p) / p_a) / b_c;
  if (dim == 1) {
    if (d_p > b_c) m_s = b_c;
    else n_ar = b_c / d_p, m_s = d_p;
  } else {
    double px = floor(sqrt((double)p)), py = px;
    n_as = p_a / px;
    n_ar = py;
    if (d_p > p_a * b_c / p) m_s = fmin(b_c / py, d_p);
    else m_s = fmin(d_p * px / p_a, d_p);
  }
  double n_s = d_p / (n_as * m_s);
  if (m_s < 32.0 * (1 << 20)) g = 1.08e-6;
  return n_s * (L + 2 * o + (n_as - 1) * g + (m_s - 1) * n_as * G) +
         n_r * (L + 2 * o + (n_ar - 1) * g + (m_s - 1) * n_ar * G);
}

/* ompio.py aggregators: OMPIO's simple grouping (Open MPI 4.1 defaults:
 * 32 MiB per aggregator, at most P/8, 3 % and 1 ms cut-offs). */
static int ompio_aggregators(int p, double chunk, int one_chunk) {
  if (p <= 1 || chunk <= 0) return 1;
  int dim = one_chunk ? 1 : 2, incr = p < 16 ? 2 : p < 128 ? 4 : p < 4096 ? 16 : 32;
  double b_c = 32.0 * (1 << 20), prev_t = ompio_cost(p, 1, chunk, b_c, dim), prev_d = 0.0;
  int prev_a = 1;
  for (int p_a = incr; p_a <= p; p_a += incr) {
    double t = ompio_cost(p, p_a, chunk, b_c, dim), d_abs = prev_t - t;
    double d = prev_t != 0.0 ? d_abs / prev_t : 0.0, d_diff = p_a == incr ? d : prev_d - d;
    if (d_diff < 0.03 || d_abs < 0.001) break;
    prev_t = t, prev_d = d, prev_a = p_a;
  }
  int a = prev_a < p / 8 ? prev_a : p / 8;
  return a > 1 ? a : 1;
}

/* direct_aggregators + cb_nodes: the profile's cb_nodes, else OMPIO's
 * choice for file views whose contiguous chunks are tile rows. */
static int direct_aggregators(const ctx *x) {
  int64_t pieces = 0;
  for (int i = 0; i < x->c->nvars; i++)
    if (x->c->vars[i].decomposed) pieces += tsr__cost_file_pieces(&x->c->vars[i], x->px, x->py);
  double chunk = x->dec_bytes / (double)(pieces > 1 ? pieces : 1);
  int n = x->r->ranks, c = x->p->cb_nodes;
  if (c <= 0) c = chunk > 0 ? ompio_aggregators(n, chunk, pieces <= n) : n;
  return c < n ? c : n;
}

/* two_phase with contiguous blocks: every sender writes its own. */
static void two_phase_contiguous(amounts a, const ctx *x, int senders) {
  stream_write(a, x->dec_bytes / senders, x->dec_bytes, x->ndec);
  a[TSR__COST_COLL] += x->ndec * stages(senders);
  a[TSR__COST_MPIIO] += x->dec_bytes / senders;
}

/* serial_frame: per variable, slabs of at most slab_bytes gathered to the
 * one writer, which writes each. */
static void serial_frame(amounts a, const ctx *x) {
  int ranks = x->r->ranks;
  double own = 1.0 / ranks;
  agreements(a, x);
  for (int i = 0; i < x->c->nvars; i++) {
    const tsr__cost_var *v = &x->c->vars[i];
    if (!v->decomposed) continue;
    int64_t per = x->r->slab_bytes / v->esize;
    int64_t n = tsr__cost_slab_count(v, per > 1 ? per : 1), m;
    double b;
    for (int64_t p = 0; p < n; p++) {
      tsr__cost_fanin(v, n, p, x->px, x->py, &m, &b);
      fan_in(a, (double)m, b, m == ranks ? own : 0.0, 1.0);
      stream_write(a, b, b, 0);
    }
    a[TSR__COST_REQ] += (double)tsr__cost_boxes(v, n);
  }
  replicated_write(a, x);
}

/* direct_frame: tiles copied into PnetCDF's buffer, written by one
 * MPI_File_write_all per run of variables that fits buffer_bytes
 * (write_groups), two-phase among the MPI-IO aggregators (two_phase). */
static void direct_frame(amounts a, const ctx *x) {
  int ranks = x->r->ranks, c = direct_aggregators(x);
  int cc = c < ranks ? c : ranks;
  cc = cc > 1 ? cc : 1;
  double own = ranks > 1 ? 1.0 / ranks : 1.0, requests = 0, groups = 0;
  double cb = (double)x->p->cb_buffer_bytes;
  agreements(a, x);
  /* One group: [first, i) with gb bytes and pieces file pieces. */
  int first = -1, count = 0;
  double room = 0, gb = 0, pieces = 0;
  for (int i = 0; i <= x->c->nvars; i++) {
    const tsr__cost_var *v = i < x->c->nvars ? &x->c->vars[i] : NULL;
    if (v && !v->decomposed) continue;
    double tb = v ? tsr__cost_tile_bytes(v, x->px, x->py) : 0;
    if (v) a[TSR__COST_COPY] += tb;
    if (count && (!v || tb > room)) { /* close the group */
      int64_t n;
      if (count == 1) {
        const tsr__cost_var *g = &x->c->vars[first];
        int64_t per = (int64_t)(cb / g->esize);
        n = tsr__cost_slab_count(g, per > 1 ? per : 1);
        for (int64_t p = 0; p < n; p++) {
          int64_t m;
          double b;
          tsr__cost_fanin(g, n, p, x->px, x->py, &m, &b);
          fan_in(a, (double)m, b, own, 1.0 / cc);
        }
      } else {
        n = (int64_t)ceil(gb / (cb > 1 ? cb : 1));
        if (n < 1) n = 1;
        fan_in(a, (double)x->px * x->py, gb / n, own, (double)n / cc);
      }
      requests += n;
      groups++;
      a[TSR__COST_COLL] += stages(ranks) * (1 + (double)n / cc);
      a[TSR__COST_PIECE] += pieces / cc;
      count = 0;
    }
    if (!v) break;
    if (!count) first = i, room = (double)x->r->buffer_bytes, gb = pieces = 0;
    count++;
    room -= tb;
    gb += tsr__cost_var_bytes(v);
    pieces += (double)tsr__cost_file_pieces(v, x->px, x->py);
  }
  a[TSR__COST_COLL] += groups * stages(ranks);
  stream_write(a, x->dec_bytes / cc, x->dec_bytes, requests / cc);
  a[TSR__COST_MPIIO] += x->dec_bytes / cc;
  replicated_write(a, x);
}

/* aggregate_frame + aggregate_write: per variable one exchange onto N
 * writers' balanced slabs (the busiest writer's fan-in sets the pace),
 * copied into the writers' PnetCDF buffer and written collectively. */
static void aggregate_frame(amounts a, const ctx *x) {
  int ranks = x->r->ranks, n = aggregator_count(x);
  agreements(a, x);
  for (int i = 0; i < x->c->nvars; i++) {
    const tsr__cost_var *v = &x->c->vars[i];
    if (!v->decomposed) continue;
    int64_t wm = 0, m;
    double wb = 0, b;
    for (int64_t p = 0; p < n; p++) { /* the first largest by (m^2, bytes) */
      tsr__cost_fanin(v, n, p, x->px, x->py, &m, &b);
      if (p == 0 || m * m > wm * wm || (m * m == wm * wm && b > wb)) wm = m, wb = b;
    }
    fan_in(a, (double)wm, wb, n < ranks ? 1.0 / ranks : 1.0, 1.0);
    a[TSR__COST_COPY] += wb;
  }
  two_phase_contiguous(a, x, n);
  replicated_write(a, x);
}

/* file_cost: a file's agreements, create and close, its shared opens. */
static void file_cost(amounts a, const ctx *x) {
  int ranks = x->r->ranks, shared = 1;
  a[TSR__COST_COLL] += AGREE_PER_FILE * stages(ranks);
  a[TSR__COST_FILE] += 1;
  if (x->r->kind == TSR__COST_DIRECT) shared = ranks;
  else if (x->r->kind == TSR__COST_AGGREGATE) shared = aggregator_count(x);
  if (x->r->kind != TSR__COST_SERIAL) a[TSR__COST_OPEN] += shared; /* every writer opens */
  a[TSR__COST_COLL] += SHARED_FILE_STAGES * stages(shared);
}

/* Profile.contention: (stretch, descheduled) with busy of ranks working. */
static void contention(const tsr__cost_profile *p, int processes, int busy, double *stretch,
                       double *desched) {
  *stretch = 1.0, *desched = 0.0;
  if (p->cores <= 0) return;
  int spin = !(p->mpi_yield && processes > p->cores);
  double runnable = spin ? processes : busy;
  *stretch = fmax(1.0, runnable / p->cores);
  *desched = fmax(0.0, 1.0 - p->cores / fmax(runnable, 1e-9));
}

double tsr__cost_predict(const tsr__cost_case *c, const tsr__cost_profile *p,
                         const tsr__cost_run *r) {
  ctx x = {.c = c, .p = p, .r = r};
  tsr__cost_grid(c, r->ranks, &x.px, &x.py);
  for (int i = 0; i < c->nvars; i++) {
    double b = tsr__cost_var_bytes(&c->vars[i]);
    if (c->vars[i].decomposed) x.dec_bytes += b, x.ndec++;
    else x.rep_bytes += b, x.nrep++;
  }
  amounts a;
  memset(a, 0, sizeof a);
  int busy = r->kind == TSR__COST_SERIAL ? 1
             : r->kind == TSR__COST_AGGREGATE ? aggregator_count(&x)
                                               : direct_aggregators(&x);
  if (r->kind == TSR__COST_SERIAL) serial_frame(a, &x);
  else if (r->kind == TSR__COST_DIRECT) direct_frame(a, &x);
  else aggregate_frame(a, &x);
  file_cost(a, &x);
  /* Amounts.loaded: CPU work stretches by the runnable processes per core
   * (direct's file views by all of them: every rank flattens its own), and
   * every message and collective stage may wait for a descheduled peer. */
  double stretch, desched, wide, unused;
  contention(p, r->ranks, busy, &stretch, &desched);
  contention(p, r->ranks, r->ranks, &wide, &unused);
  double s = (a[TSR__COST_MSG] + a[TSR__COST_COLL]) * desched * tsr__cost_unit(p, TSR__COST_SLICE);
  for (int k = 0; k < TSR__COST_NKEYS; k++)
    s += a[k] * (k == TSR__COST_PIECE && r->kind == TSR__COST_DIRECT ? wide : stretch) *
         tsr__cost_unit(p, k);
  /* imbalance_s: ranks left ceil(n/C) to a core wait for the slowest. */
  int n = r->ranks, cores = p->cores;
  if (cores > 0 && n > cores && n % cores) {
    double lo = n / cores, hi = (n + cores - 1) / cores;
    s += r->interval_s * (1.0 - lo / hi);
  }
  return s;
}
