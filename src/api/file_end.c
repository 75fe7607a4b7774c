/* The end of a file handle (api/api.h: tsr__file_close, _abort), for
 * tsr_close and tsr_abort (core/file_close.c) and the derived files of
 * reduce= (core/reduce_write.c). A written file reaches
 * its final name only when every data call on it succeeded on every rank
 * (f->failed, set by file.c) and its close did too; otherwise its
 * temporaries are removed and nothing is renamed. One rule for every
 * strategy: the strategy's abort op is what removes, its close and finish
 * what completes and renames. */
#include "api/auto.h"
#include "api/api.h"
#include "strategy/strategy.h"

/* The first failure of a data call, agreed: the codes were agreed when they
 * happened, so every rank holds the same one, but agreeing again here keeps
 * the decision to rename one decision whatever a strategy did meanwhile.
 * The message is that failure's, from the lowest rank that holds it. */
static int agree_failed(tsr_file *f) {
  tsr__berr now = f->berr;
  f->berr = f->failed_berr;
  int failed = tsr__file_agree(f, f->failed);
  if (!failed) f->berr = now;
  return failed;
}

/* A written file in data mode: complete it and rename it into place, or,
 * after any failure, remove it. */
static int close_written(tsr_file *f) {
  int failed = agree_failed(f);
  if (failed) {
    /* Nothing more is worth writing: the strategy drops what it holds and
     * removes the temporaries (the I/O servers are told to delete theirs). */
    f->strategy->abort(f);
    return failed;
  }
  int rc = tsr__file_agree(f, f->strategy->close(f));
  /* The final names appear only now, when every rank's part is complete. */
  if (f->strategy->finish) {
    int frc = f->strategy->finish(f, rc == 0);
    if (!rc) rc = tsr__file_agree(f, frc);
  }
  return rc;
}

/* Time, statistics and the handle itself, once the file is done with. */
static void release(tsr_file *f, double t0, int closed, int rc) {
  tsr_ctx *ctx = f->ctx;
  double dt = tsr__now() - t0;
  f->st.blocked_s += dt;
  ctx->stats.blocked_s += dt;
  ctx->stats.writer_s += f->st.writer_s;
  ctx->stats.bytes_written += f->st.bytes_written;
  if (f->st.peak_buffer > ctx->stats.peak_buffer_bytes)
    ctx->stats.peak_buffer_bytes = f->st.peak_buffer;
  if (closed) {
    ctx->stats.files_closed++;
    if (f->strategy || f->autof) tsr__auto_closed(f, rc); /* collective, as the report */
    if (f->strategy) tsr__stats_report(f); /* collective; prints nothing unless asked */
  }
  ctx->nopen--;
  tsr__file_free(f);
}

/* A failure at close has no handle left to ask: tsr_last_error says why. */
static int leave(tsr_file *f, int rc) {
  if (rc) tsr__set_last_error(f->berr.message[0] ? f->berr.message : tsr_strerror(rc));
  return rc;
}

int tsr__file_end(tsr_file *f) {
  int rc = 0;
  if (f->strategy && f->in_define) { /* closed without enddef: write the schema */
    rc = tsr__file_end_define(f);
    if (rc) f->strategy = NULL;
  }
  if (f->strategy && !f->in_define) {
    rc = close_written(f);
    f->st.closed_at = tsr__now();
  }
  if (f->reader) rc = tsr__file_agree(f, tsr__reader_close(f)); /* opened by tsr_open */
  return rc;
}

int tsr__file_release(tsr_file **pf, double t0, int closed, int rc) {
  tsr_file *f = *pf;
  rc = leave(f, rc);
  release(f, t0, closed, rc);
  *pf = NULL;
  return rc;
}

int tsr__file_close(tsr_file **pf) {
  if (!pf || !*pf) return TSR_EINVAL;
  double t0 = tsr__now();
  return tsr__file_release(pf, t0, 1, tsr__file_end(*pf));
}

int tsr__file_abort(tsr_file **pf) {
  if (!pf || !*pf) return TSR_EINVAL;
  tsr_file *f = *pf;
  double t0 = tsr__now();
  int rc = 0;
  /* In define mode the strategy has made nothing yet (its state is NULL);
   * after a failed enddef it is gone already. */
  if (f->strategy) f->strategy->abort(f);
  if (f->reader) rc = tsr__reader_close(f); /* read-only: nothing to remove */
  /* When tsr_abort returns, every rank's part is gone (split pieces are
   * removed by their own ranks). */
  return tsr__file_release(pf, t0, 0, tsr__file_agree(f, rc));
}
