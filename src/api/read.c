/* Reading: tsr_open and tsr_get, for input, restart files and verification.
 *
 * Who opens the file and how the values reach the tiles is the read side of
 * the strategy that strategy= in tsr_open's own hints names (its registry
 * row's `read`, strategy/strategy.h); without one every rank reads its own
 * tile. This file runs what every read side shares: the hints, the backend,
 * staging, opening the sink on the ranks the read side chose, agreement. The
 * API pattern is the one of file.c: check locally, agree, work, agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "strategy/strategy.h"
#include "tier/stage_in.h"

struct tsr__reader {
  tsr__sink sink;
  int64_t nrecs;            /* records in the file when it was opened */
  const tsr__read_ops *ops; /* the read side of the strategy= row */
  tsr__readers who;         /* who opens the file, as ops->setup chose */
};

/* The read side of tsr_open's own hints @p open_hints (only those: the
 * strategy in tsr_init's hints or TESSERA_HINTS names how files are
 * written: a job whose history is split still reads one input file), with
 * its local check. Local; TSR_EHINT with the reason in @p msg. */
static int choose_reader(tsr_file *f, const char *open_hints, char *msg, size_t msglen) {
  struct tsr__reader *rd = f->reader;
  rd->who.comm = rd->who.own = MPI_COMM_NULL;
  /* The merged hints parsed already; this parse of the open's own text alone
   * only asks whether it names a strategy, so it never fails the open. */
  tsr__hints own;
  tsr__hints_defaults(&own);
  own.strict = 0;
  char err[256];
  const char *name = "";
  if (open_hints && !tsr__hints_parse(open_hints, f->path, &own, err, sizeof err) &&
      (own.set & TSR__H_STRATEGY))
    name = own.strategy;
  int rc = tsr__strategy_reader(name, &rd->ops, &rd->who.name, msg, msglen);
  return rc ? rc : rd->ops->check ? rd->ops->check(f, msg, msglen) : 0;
}

/* The registry's reading default prefers a parallel backend: one collective
 * read per call instead of every rank opening the file on its own. */
static int choose_backend(tsr_file *f, char *msg, size_t msglen) {
  if (f->reader->ops->backend) { /* the read side reads through its own (split's pieces) */
    f->backend = f->reader->ops->backend;
    return 0;
  }
  const char *name = f->hints.backend[0] ? f->hints.backend : tsr__backend_default_read(f->path);
  int rc = tsr__backend_find(name, &f->backend);
  if (rc) {
    snprintf(msg, msglen, "backend '%s' %s", name,
             rc == TSR_ENOTBUILT ? "is not built into this library" : "is unknown");
    return rc;
  }
  /* A backend that cannot read (null) is "not built" for reading, as the
   * ops table says: the name is right, the capability is missing. */
  if (!f->backend->open || !f->backend->read_block || !f->backend->num_records) {
    snprintf(msg, msglen, "backend '%s' cannot read files", name);
    return TSR_ENOTBUILT;
  }
  if (f->backend->can_open && !f->backend->can_open(f->path)) {
    snprintf(msg, msglen, "backend '%s' cannot open '%s' (a ':' in the path); name another "
             "backend, or use a path without ':' (WRF's nocolons)", name, f->path);
    return TSR_EACCES;
  }
  return 0;
}

int tsr_open(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **out) {
  if (out) *out = NULL;
  tsr__set_last_error("");
  if (!ctx) return TSR_ESTATE;
  double t0 = tsr__now();
  tsr_file *f = NULL;
  /* A file written by dedicated ranks (strategy=servers) may still be on its
   * way: wait until every file closed before is finished, so a job reads
   * back what it wrote. */
  int settled = tsr__ctx_settle(ctx);
  if (settled) return settled;
  /* Same hint sources and precedence as tsr_create; only backend= and the
   * MPI-IO pass-through keys matter for reading. */
  int rc = out ? tsr__file_new(ctx, path, hints, &f) : TSR_EINVAL;
  if (f && !rc) {
    f->reader = calloc(1, sizeof *f->reader);
    rc = f->reader ? 0 : TSR_ENOMEM;
    char msg[sizeof f->berr.message] = "";
    if (!rc) rc = choose_reader(f, hints, msg, sizeof msg);
    if (!rc) rc = choose_backend(f, msg, sizeof msg);
    if (rc) {
      f->berr.code = rc;
      snprintf(f->berr.message, sizeof f->berr.message, "%s", msg);
    }
  }
  int agreed = f ? tsr__file_agree(f, rc) : tsr__agree(ctx->comm, rc);
  if (!agreed) {
    /* A parallel backend opens collectively and agrees on the result itself,
     * so either every rank holds the file or none does; a serial one is
     * opened by every rank on its own. */
    tsr__sink *sk = &f->reader->sink;
    tsr__readers *who = &f->reader->who;
    const tsr__read_ops *ops = f->reader->ops;
    tsr__file_sink(f, sk);
    agreed = ops->setup(f, tsr__sink_parallel(sk), who);
    /* stage_dir: read a copy in the fast tier, made once per node. */
    char *local = NULL;
    rc = agreed || !f->hints.stage_dir[0] || ops->backend /* no one file at the path */
             ? 0
             : tsr__stage_in(ctx->comm, path, f->hints.stage_dir, &local, f->berr.message,
                             sizeof f->berr.message);
    if (!agreed) {
      if (!rc && who->mine) rc = tsr__sink_open(sk, who->comm, local ? local : path, &f->schema);
      if (!rc && who->mine) f->reader->nrecs = tsr__sink_num_records(sk);
      agreed = tsr__file_agree(f, rc);
    }
    free(local);
    /* The schema and record count to every rank that did not open the
     * file, and the read side's check of what was opened. */
    if (!agreed) agreed = ops->opened(f, who, &f->reader->nrecs);
    /* Every rank that holds the file closes it: all of them, or (serial)
     * each on its own, so the collective close cannot hang. The agreed
     * message is kept, not the close's. */
    if (agreed) {
      sk->berr = NULL;
      tsr__sink_close(sk);
      tsr__readers_free(who);
    }
  }
  ctx->stats.blocked_s += tsr__now() - t0;
  if (agreed) {
    TSR_LOG("tsr_open('%s'): %s: %s", path ? path : "(null)", tsr_errname(agreed),
            f ? f->berr.message : "");
    tsr__set_last_error(f && f->berr.message[0] ? f->berr.message : tsr_strerror(agreed));
    tsr__file_free(f);
    return agreed;
  }
  ctx->nopen++;
  *out = f;
  return 0;
}

/* This rank's arguments of tsr_get, checked before anything is read. */
static int get_check(const tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                     const void *buf) {
  if (!f->reader) return TSR_EMODE; /* a file open for writing */
  if (varid < 0 || varid >= f->schema.nvars) return TSR_EBADID;
  if (f->schema.vars[varid].is_record && (frame < 0 || frame >= f->reader->nrecs))
    return TSR_ERANGE;
  if (d && !tsr__shape_matches(f, varid, d)) return TSR_ESHAPE;
  int64_t elems = d ? d->my_elems : tsr__var_frame_elems(&f->schema, varid);
  if (!buf && elems > 0) return TSR_EINVAL;
  return 0;
}

int tsr_get(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, void *buf) {
  if (!f) return TSR_EINVAL;
  double t0 = tsr__now();
  int rc = tsr__file_agree(f, get_check(f, varid, frame, d, buf));
  if (!rc) {
    struct tsr__reader *rd = f->reader;
    rc = tsr__file_agree(f, rd->ops->get(f, &rd->sink, &rd->who, varid, frame, d, buf));
  }
  /* Time in Tessera calls, as for every API call; reads are not counted as
   * output in the statistics. */
  double dt = tsr__now() - t0;
  f->st.blocked_s += dt;
  f->ctx->stats.blocked_s += dt;
  if (rc) f->last_err = rc;
  return rc;
}

int tsr__reader_close(tsr_file *f) {
  int rc = tsr__sink_close(&f->reader->sink);
  tsr__readers_free(&f->reader->who);
  free(f->reader);
  f->reader = NULL;
  return rc;
}

int64_t tsr__reader_records(const tsr_file *f) { return f->reader ? f->reader->nrecs : 0; }

const char *tsr__reader_strategy(const tsr_file *f) { return f->reader ? f->reader->who.name : ""; }

const tsr__read_ops *tsr__reader_ops(const tsr_file *f) {
  return f->reader ? f->reader->ops : NULL;
}
