/* Reading: tsr_open and tsr_get, for input, restart files and verification.
 *
 * By default (and with strategy=direct) every rank reads its own tile
 * straight from the file through the backend (a parallel one: one collective
 * read per call; a serial one: every rank opens the file itself and reads
 * independently). strategy=serial or aggregate in tsr_open's hints lets a few
 * readers open the file and run the write plans backwards (read_plan.c).
 * The API pattern is the one of file.c: check locally, agree, work, agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/read_plan.h"
#include "tier/stage_in.h"

struct tsr__reader {
  tsr__sink sink;
  int64_t nrecs; /* records in the file when it was opened */
  tsr__readers who; /* the read strategy: who opens the file */
};

/* The registry's reading default prefers a parallel backend: one collective
 * read per call instead of every rank opening the file on its own. */
static int choose_backend(tsr_file *f, char *msg, size_t msglen) {
  if (f->reader->who.kind == TSR__READ_SPLIT) { /* the pieces choose theirs (read_split.c) */
    f->backend = &tsr__split_reader;
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

/* Split pieces hold one rank's tile under the file's dimension names with
 * the tile's lengths: reading one as if it were the whole file would give
 * wrong shapes, not an error. Joining is the tool's job. */
static int refuse_split_piece(const tsr__schema *s, const char *path, char *msg, size_t msglen) {
  if (!tsr__att_find(s->gatts, s->ngatts, "tessera_split_nranks")) return 0;
  snprintf(msg, msglen,
           "'%s' is one piece of a file written with strategy=split; join the pieces with "
           "`tessera join` and open the joined file",
           path);
  return TSR_EFORMAT;
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
    if (!rc) rc = tsr__readers_choose(f, hints, &f->reader->who, msg, sizeof msg);
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
    tsr__file_sink(f, sk);
    agreed = tsr__readers_setup(f, tsr__sink_parallel(sk), who);
    /* stage_dir: read a copy in the fast tier, made once per node. */
    char *local = NULL;
    rc = agreed || !f->hints.stage_dir[0] || who->kind == TSR__READ_SPLIT /* no one file */
             ? 0
             : tsr__stage_in(ctx->comm, path, f->hints.stage_dir, &local, f->berr.message,
                             sizeof f->berr.message);
    if (!agreed) {
      if (!rc && who->mine) rc = tsr__sink_open(sk, who->comm, local ? local : path, &f->schema);
      if (!rc && who->mine) f->reader->nrecs = tsr__sink_num_records(sk);
      agreed = tsr__file_agree(f, rc);
    }
    free(local);
    /* Readers only: the first one's schema goes to every rank. */
    if (!agreed) agreed = tsr__file_agree(f, tsr__readers_share(f, who, &f->reader->nrecs));
    if (!agreed)
      agreed = tsr__file_agree(
          f, refuse_split_piece(&f->schema, path, f->berr.message, sizeof f->berr.message));
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

static int read_tile(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, void *buf) {
  tsr__sink *sk = &f->reader->sink;
  if (f->reader->who.kind == TSR__READ_SERIAL || f->reader->who.kind == TSR__READ_AGGREGATE)
    return tsr__readers_get(f, sk, &f->reader->who, varid, frame, d, buf);
  const tsr__memview whole = {0};
  if (!d) { /* replicated: the whole frame of the variable on every rank */
    int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
    tsr__var_shape(&f->schema, varid, count);
    return tsr__sink_read(sk, varid, frame, start, count, buf, whole);
  }
  if (d->canon) return tsr__decomp_read(f, sk, varid, frame, d, buf);
  /* A serial backend has nobody to wait for; a parallel one reads
   * collectively, so an empty tile still makes the (empty) call. */
  if (d->my_elems == 0 && !tsr__sink_parallel(sk)) return 0;
  int64_t moff[TSR_MAX_DIMS];
  tsr__memview mem = d->my_elems > 0 ? tsr__decomp_tile_view(d, moff) : whole;
  return tsr__sink_read(sk, varid, frame, d->tile.start, d->tile.count, buf, mem);
}

int tsr_get(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, void *buf) {
  if (!f) return TSR_EINVAL;
  double t0 = tsr__now();
  int rc = tsr__file_agree(f, get_check(f, varid, frame, d, buf));
  if (!rc) rc = tsr__file_agree(f, read_tile(f, varid, frame, d, buf));
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
