/* Per-file statistics: the report at close (reduction here, printing in
 * stats_format.c; the counting while the file is open is in stats_count.c). */
#include <fcntl.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/auto.h"
#include "api/api.h"
#include "strategy/strategy.h"
#include "core/stats_format.h"
#include "core/mpiio_taken.h"

/* Slots of the one MAX reduction of doubles: minima travel negated. */
enum {
  X_BLOCKED_MIN, X_WRITER_MIN, X_PEAK_MIN, X_REDUCE_MIN, /* negated */
  X_BLOCKED_MAX, X_WRITER_MAX, X_PEAK_MAX, X_REDUCE_MAX, X_PUT_TO_CLOSE, X_FRAMES,
  X_NOT_TAKEN, /* bits of hints.pass, from the first writer (exact in a double) */
  X_MPIIO,     /* TSR__NMPIIO slots */
  NX = X_MPIIO + TSR__NMPIIO
};
/* Slots of the one SUM reduction of integers (times in nanoseconds). */
enum {
  S_BYTES_PUT, S_WRITES, S_BYTES_WRITTEN, S_NOT_ALIGNED, S_CONSEC, S_REARRANGED, S_PEAK, S_REDUCE,
  S_BLOCKED_NS, S_WRITER_NS, S_WRITERS, S_OFFSETS_KNOWN,
  S_HIST, /* TSR__NBUCKETS slots */
  NS = S_HIST + TSR__NBUCKETS
};

static int64_t to_ns(double s) { return (int64_t)(s * 1e9 + 0.5); }

/* Append the record to TESSERA_STATS_FILE in a single write, so records of
 * concurrent writers (several jobs, several contexts) never interleave. */
static void append_record(const char *path, const char *line) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    TSR_LOG("TESSERA_STATS_FILE '%s': cannot open for appending", path);
    return;
  }
  size_t n = strlen(line);
  ssize_t w = write(fd, line, n);
  if (w < 0 || (size_t)w != n) TSR_LOG("TESSERA_STATS_FILE '%s': short write", path);
  close(fd);
}

/* Fill the summary's writer side from figures a strategy supplied. */
static void use_io_side(const tsr__io_fstats *io, tsr__stats_summary *s) {
  s->io_valid = 1;
  s->io_ranks = io->io_ranks;
  s->writers = io->writers;
  s->writer_ranks = io->writer_ranks;
  for (int i = 0; i < 3; i++) {
    s->writer[i] = io->writer_s[i];
    s->io_peak[i] = (double)io->peak_buffer[i];
  }
  s->first_put_to_close = io->first_put_to_close_s;
  s->writes = io->writes;
  s->bytes_written = io->bytes_written;
  memcpy(s->hist, io->size_hist, sizeof s->hist);
  s->not_aligned = io->not_aligned;
  s->consec = io->consec;
  s->offsets_known = io->offsets_known;
  if (io->alignment > 0) s->alignment = io->alignment;
  for (int i = 0; i < TSR__NMPIIO; i++)
    if (io->mpiio[i] >= 0) s->mpiio[i] = io->mpiio[i];
}

static void emit(struct tsr_file *f, const tsr__stats_summary *s) {
  const tsr__stats_env_t *env = tsr__stats_env();
  if (env->text) {
    tsr__stats_text(s, stdout);
    fflush(stdout);
  }
  if (env->file) {
    char *line = tsr__stats_json(s);
    if (line) append_record(env->file, line);
    else TSR_LOG("statistics of '%s': out of memory", f->path);
    free(line);
  }
}

int tsr__stats_report(struct tsr_file *f) {
  const tsr__stats_env_t *env = tsr__stats_env();
  tsr__fstats *st = &f->st;
  if (!env->text && !env->file) { /* off: no collective, nothing to free but this */
    free(st->io.writer_ranks);
    st->io.writer_ranks = NULL;
    return 0;
  }
  MPI_Comm comm = f->ctx->comm;
  int rank = f->ctx->rank, size = f->ctx->size;
  int writer = st->is_writer || st->writes > 0;
  double x[NX], xr[NX];
  int64_t n[NS], nr[NS];
  x[X_BLOCKED_MIN] = -st->blocked_s;
  x[X_WRITER_MIN] = writer ? -st->writer_s : -DBL_MAX;
  x[X_PEAK_MIN] = -(double)st->peak_buffer;
  x[X_BLOCKED_MAX] = st->blocked_s;
  x[X_WRITER_MAX] = writer ? st->writer_s : 0.0;
  x[X_PEAK_MAX] = (double)st->peak_buffer;
  /* reduce=: the accumulators the context holds when the file closes. */
  x[X_REDUCE_MIN] = -(double)f->ctx->stats.reduce_bytes;
  x[X_REDUCE_MAX] = (double)f->ctx->stats.reduce_bytes;
  n[S_REDUCE] = f->ctx->stats.reduce_bytes;
  /* Durations per rank, not clock readings across ranks: MPI_Wtime need not
   * be synchronised between nodes. The close ends together everywhere. */
  x[X_PUT_TO_CLOSE] = st->first_put > 0 && st->closed_at > st->first_put
                          ? st->closed_at - st->first_put
                          : 0.0;
  x[X_FRAMES] = (double)st->frames;
  for (int i = 0; i < TSR__NMPIIO; i++) x[X_MPIIO + i] = (double)st->mpiio[i];
  x[X_NOT_TAKEN] = (double)st->mpiio_not_taken;
  n[S_BYTES_PUT] = st->bytes_put;
  n[S_WRITES] = st->writes;
  n[S_BYTES_WRITTEN] = st->bytes_written;
  n[S_NOT_ALIGNED] = st->not_aligned;
  n[S_CONSEC] = st->consec;
  n[S_REARRANGED] = st->rearranged_bytes;
  n[S_PEAK] = st->peak_buffer;
  n[S_BLOCKED_NS] = to_ns(st->blocked_s);
  n[S_WRITER_NS] = writer ? to_ns(st->writer_s) : 0;
  n[S_WRITERS] = writer;
  n[S_OFFSETS_KNOWN] = st->offsets_known;
  for (int i = 0; i < TSR__NBUCKETS; i++) n[S_HIST + i] = st->size_hist[i];
  int *flags = rank == 0 ? malloc((size_t)size * sizeof(int)) : NULL;
  /* Three collectives in all, whatever the number of figures. */
  int rc = MPI_Reduce(x, xr, NX, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS;
  rc |= MPI_Reduce(n, nr, NS, MPI_INT64_T, MPI_SUM, 0, comm) != MPI_SUCCESS;
  int dummy = 0;
  rc |= MPI_Gather(&writer, 1, MPI_INT, flags ? flags : &dummy, 1, MPI_INT, 0, comm) !=
        MPI_SUCCESS;
  if (rank == 0 && !rc) {
    char hints[4096];
    tsr__hints_format(&f->hints, hints, sizeof hints);
    int nw = (int)nr[S_WRITERS];
    int *wranks = flags;
    if (flags) {
      int k = 0;
      for (int r = 0; r < size; r++)
        if (flags[r]) wranks[k++] = r;
    }
    tsr__stats_summary s = {
        .file = f->path,
        .strategy = f->strategy ? f->strategy->name : "",
        .backend = f->backend ? f->backend->name : "",
        .uses_mpiio = f->backend && f->backend->file_info != NULL,
        .hints = hints,
        .model_ranks = size,
        .writers = nw,
        .writer_ranks = wranks,
        .bytes = nr[S_BYTES_PUT],
        .frames = (int64_t)xr[X_FRAMES],
        .variables = f->schema.nvars,
        .blocked = {-xr[X_BLOCKED_MIN], xr[X_BLOCKED_MAX], (double)nr[S_BLOCKED_NS] * 1e-9 / size},
        .writer = {nw ? -xr[X_WRITER_MIN] : 0.0, xr[X_WRITER_MAX],
                   nw ? (double)nr[S_WRITER_NS] * 1e-9 / nw : 0.0},
        .first_put_to_close = xr[X_PUT_TO_CLOSE],
        .rearranged = nr[S_REARRANGED],
        .peak = {-xr[X_PEAK_MIN], xr[X_PEAK_MAX], (double)nr[S_PEAK] / size},
        .reduce_valid = f->hints.reduce.n > 0,
        .reduce = {-xr[X_REDUCE_MIN], xr[X_REDUCE_MAX], (double)nr[S_REDUCE] / size},
        .writes = nr[S_WRITES],
        .bytes_written = nr[S_BYTES_WRITTEN],
        .not_aligned = nr[S_NOT_ALIGNED],
        .consec = nr[S_CONSEC],
        .offsets_known = nr[S_OFFSETS_KNOWN],
        .alignment = tsr__stats_alignment(&f->hints),
        .autor = f->autof && f->autof->rec.on ? &f->autof->rec : NULL,
    };
    for (int i = 0; i < TSR__NBUCKETS; i++) s.hist[i] = nr[S_HIST + i];
    for (int i = 0; i < TSR__NMPIIO; i++) s.mpiio[i] = (int64_t)xr[X_MPIIO + i];
    uint32_t not_taken = (uint32_t)xr[X_NOT_TAKEN];
    if (st->io.valid) {
      use_io_side(&st->io, &s);
      not_taken = st->io.mpiio_not_taken;
    }
    tsr__sbuf list = {0};
    tsr__mpiio_not_taken_list(&f->hints, not_taken, &list);
    s.not_taken = list.s && !list.failed ? list.s : "";
    emit(f, &s);
    free(list.s);
  }
  free(flags);
  free(st->io.writer_ranks);
  st->io.writer_ranks = NULL;
  if (rc) TSR_LOG("statistics of '%s': MPI reduction failed", f->path);
  return rc ? TSR_EMPI : 0;
}
