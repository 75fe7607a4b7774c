/* The file API: argument checks once, at the boundary, agreed across ranks
 * before any strategy or backend runs; the strategy does the work; the result
 * is agreed again. Every call here is timed as blocked output time. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/auto.h"
#include "api/api.h"
#include "api/reduce.h"
#include "strategy/strategy.h"

/* Start and end of a timed API call. */
#define TSR_ENTER(f) double tsr__t0 = tsr__now()
#define TSR_LEAVE(f, rc) return leave((f), tsr__t0, (rc))

static int leave(tsr_file *f, double t0, int rc) {
  double dt = tsr__now() - t0;
  if (f) {
    f->st.blocked_s += dt;
    f->ctx->stats.blocked_s += dt;
    if (rc) f->last_err = rc;
  }
  return rc;
}

/* Fail early, on rank 0, when the directory of @p path cannot take a file. */
static int check_directory(const char *path) {
  char *copy = strdup(path);
  if (!copy) return TSR_ENOMEM;
  int ok = access(dirname(copy), W_OK | X_OK) == 0;
  free(copy);
  return ok ? 0 : TSR_EACCES;
}

/* The strategy and backend the hints ask for, from the two registries: the
 * hints hold names, the registries know what they are and what was built. */
static int choose(tsr_file *f, char *msg, size_t msglen) {
  tsr__hints *h = &f->hints;
  if (h->strategy[0]) {
    if (tsr__strategy_find(h->strategy, &f->strategy)) {
      snprintf(msg, msglen, "strategy '%s' is unknown", h->strategy);
      return TSR_EHINT;
    }
  } else {
    f->strategy = tsr__strategy_default();
  }
  if (f->strategy->needs_server_ranks && f->ctx->ranks_owner != f->strategy) {
    snprintf(msg, msglen, "strategy=%s needs io_groups and io_tasks in tsr_init's hints",
             f->strategy->name);
    return TSR_ESERVERS;
  }
  const char *bname = h->backend[0]
                          ? h->backend
                          : tsr__backend_default_write(f->strategy->backend_want(h), h->format);
  if (!bname) { /* no built backend writes the format in the way this strategy needs */
    snprintf(msg, msglen, "strategy=%s: no backend writes the format that format= asks for "
             "in the way this strategy needs", f->strategy->name);
    return TSR_EHINT;
  }
  int rc = tsr__backend_find(bname, &f->backend);
  if (rc) {
    snprintf(msg, msglen, "backend '%s' %s", bname,
             rc == TSR_ENOTBUILT ? "is not built into this library" : "is unknown");
    return rc;
  }
  /* The backend decides which formats it writes (its registry row). */
  if (tsr__backend_write_format(bname, (h->set & TSR__H_FORMAT) != 0, &h->format)) {
    snprintf(msg, msglen, "backend '%s' does not write the format that format= asks for; "
             "name another backend or none", bname);
    return TSR_EHINT;
  }
  if (f->strategy->needs_parallel_backend && !f->backend->parallel && f->ctx->size > 1) {
    snprintf(msg, msglen, "strategy=%s writes from every rank and needs a parallel backend; "
             "backend '%s' is serial", f->strategy->name, f->backend->name);
    return TSR_EHINT;
  }
  /* Writers that hold tiles cannot share a file whose units are whole
   * levels (GRIB2 messages); aggregate cuts its slabs between levels. */
  if (f->strategy->needs_parallel_backend && f->backend->whole_levels && f->ctx->size > 1) {
    char names[128];
    tsr__strategy_list(tsr__strategy_cuts_levels, names, sizeof names);
    snprintf(msg, msglen, "strategy=%s writes each rank's tile, and backend '%s' needs whole "
             "horizontal levels per writer; use strategy=%s",
             f->strategy->name, f->backend->name, names);
    return TSR_EHINT;
  }
  if (h->writer >= f->ctx->size) {
    snprintf(msg, msglen, "hint 'writer=%d': only %d ranks", h->writer, f->ctx->size);
    return TSR_EHINT;
  }
  if (h->aggregators > f->ctx->size) {
    snprintf(msg, msglen, "hint 'aggregators=%d': only %d ranks", h->aggregators, f->ctx->size);
    return TSR_EHINT;
  }
  return 0;
}

/* choose, and with strategy=auto the next candidate while one fails:
 * an alternative that cannot take the file's hints never fails the file.
 * choose is local and the same on every rank, and so is the fallback. */
static int choose_or_fall_back(tsr_file *f, char *msg, size_t msglen) {
  int rc = choose(f, msg, msglen);
  while (rc && f->autof && tsr__auto_fallback(f, rc, msg) == 0) {
    msg[0] = '\0';
    rc = choose(f, msg, msglen);
  }
  return rc;
}

/* tsr_create's work; @p given (may be NULL) replaces the resolved hints. */
static int create(tsr_ctx *ctx, const char *path, const char *hints, const tsr__hints *given,
                  tsr_file **out) {
  if (out) *out = NULL;
  tsr__set_last_error("");
  if (!ctx) return TSR_ESTATE;
  double t0 = tsr__now();
  tsr_file *f = NULL;
  int rc = out ? tsr__file_new(ctx, path, hints, &f) : TSR_EINVAL;
  if (f && !rc && given) f->hints = *given;
  if (f && !rc) {
    char msg[sizeof f->berr.message] = "";
    rc = tsr__auto_begin(f);
    if (!rc) rc = choose_or_fall_back(f, msg, sizeof msg);
    if (!rc && (ctx->rank == 0 || f->strategy->file_per_rank)) {
      rc = check_directory(path);
      if (rc) snprintf(msg, sizeof msg, "cannot create files in the directory of '%s'", path);
    }
    if (!rc && ctx->rank == 0 && !f->hints.clobber_force)
      rc = tsr__lock_take(path, &f->lock_fd, msg, sizeof msg);
    if (rc) {
      f->berr.code = rc;
      snprintf(f->berr.message, sizeof f->berr.message, "%s", msg);
    }
  }
  if (f) {
    f->schema.format = f->hints.format;
    f->in_define = 1;
  }
  int agreed = f ? tsr__file_agree(f, rc) : tsr__agree(ctx->comm, rc);
  ctx->stats.blocked_s += tsr__now() - t0;
  if (agreed) {
    TSR_LOG("tsr_create('%s'): %s: %s", path ? path : "(null)", tsr_errname(agreed),
            f ? f->berr.message : "");
    tsr__set_last_error(f && f->berr.message[0] ? f->berr.message : tsr_strerror(agreed));
    tsr__ctx_failed(ctx, agreed, tsr_last_error());
    tsr__file_free(f);
    return agreed;
  }
  ctx->nopen++;
  *out = f;
  return 0;
}

int tsr_create(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **out) {
  return create(ctx, path, hints, NULL, out);
}

int tsr__create_with(tsr_ctx *ctx, const char *path, const tsr__hints *h, tsr_file **out) {
  return create(ctx, path, NULL, h, out);
}

/* Define-mode calls change only the in-memory schema; agreeing on each one
 * keeps a bad name on one rank from surfacing later as a confusing error. */
static int define_check(tsr_file *f) {
  if (!f) return TSR_EINVAL;
  return f->in_define ? 0 : TSR_EMODE;
}

/* The end of a define call: logged (its arguments' hash and its result), so
 * tsr_enddef agrees on the whole log in one reduction; with safe_mode=1 the
 * call's result is also agreed at once. */
static int define_done(tsr_file *f, int rc, uint64_t args, const char *call, const char *name) {
  if (f->in_define) tsr__deflog_add(&f->deflog, args, rc, call, name);
  return f->hints.safe_mode ? tsr__file_agree(f, rc) : rc;
}

static uint64_t hash_name(const char *name) {
  return tsr__fnv(TSR__FNV_START, name ? name : "", name ? strlen(name) : 0);
}

int tsr_def_dim(tsr_file *f, const char *name, int64_t len, int *dimid) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = define_check(f);
  if (!rc) rc = tsr__schema_add_dim(&f->schema, name, len, dimid);
  uint64_t h = tsr__fnv(hash_name(name), &len, sizeof len);
  TSR_LEAVE(f, define_done(f, rc, h, "tsr_def_dim", name));
}

/* TSR_ETYPE gets a reason: a type the format lacks (unsigned or 64-bit
 * integers in CDF-2) is the usual surprise, not a bad number. */
static int type_reason(tsr_file *f, int rc, tsr_type type, const char *name) {
  if (rc != TSR_ETYPE) return rc;
  f->berr.code = 0;
  if (!tsr__type_valid(type))
    snprintf(f->berr.message, sizeof f->berr.message, "%s: %d is not a tsr_type", name ? name : "",
             (int)type);
  else
    snprintf(f->berr.message, sizeof f->berr.message,
             "%s: type %d is not in this file's format (classic CDF-2 has byte, char, short, "
             "int, float and double; unsigned and 64-bit integers need format=cdf5 or netcdf4)",
             name ? name : "", (int)type);
  return rc;
}

int tsr_def_var(tsr_file *f, const char *name, tsr_type type, int ndims, const int dimids[],
                int *varid) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = define_check(f);
  if (!rc) rc = tsr__schema_add_var(&f->schema, name, type, ndims, dimids, varid);
  uint64_t h = tsr__fnv(hash_name(name), &type, sizeof type);
  h = tsr__fnv(h, &ndims, sizeof ndims);
  if (dimids && ndims > 0 && ndims <= TSR_MAX_DIMS) h = tsr__fnv(h, dimids, (size_t)ndims * sizeof *dimids);
  TSR_LEAVE(f, define_done(f, type_reason(f, rc, type, name), h, "tsr_def_var", name));
}

/* Flat decompositions (elements that form no box on some rank) reach only
 * strategies that rearrange through the plan engine: a split piece is laid
 * out as one tile per variable, and the servers' hand-off carries one box
 * per rank. Agreed like every argument check (flatness is agreed when the
 * decomposition is made, so every rank gives the same answer). */
/* A file per rank (split) holds one box of the variable, with its start in
 * the file: scattered elements have no such box, so split refuses them.
 * Every other strategy takes them (the servers receive the runs). */
static int flat_refused(tsr_file *f, const tsr_decomp *d) {
  if (!d || !d->canon || !d->canon->tiles.flat || !f->strategy) return 0;
  if (!f->strategy->file_per_rank) return 0;
  f->berr.code = TSR_EDECOMP;
  char names[128];
  tsr__strategy_list(tsr__strategy_shares_a_file, names, sizeof names);
  snprintf(f->berr.message, sizeof f->berr.message,
           "strategy=%s writes one box per rank; this decomposition's elements form no box on "
           "some rank (use strategy=%s)",
           f->strategy->name, names);
  return TSR_EDECOMP;
}

int tsr_def_var_decomp(tsr_file *f, int varid, const tsr_decomp *d) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = define_check(f);
  if (!rc && (varid < 0 || varid >= f->schema.nvars)) rc = TSR_EBADID;
  if (!rc && !d) rc = TSR_EINVAL;
  if (!rc && !tsr__shape_matches(f, varid, d)) rc = TSR_ESHAPE;
  if (!rc) rc = flat_refused(f, d);
  if (!rc) f->schema.vars[varid].decomp = d;
  /* Tiles differ between ranks; the global shape may not. */
  uint64_t h = tsr__fnv(TSR__FNV_START, &varid, sizeof varid);
  if (d) h = tsr__fnv(h, d->gsize, (size_t)d->ndims * sizeof *d->gsize);
  TSR_LEAVE(f, define_done(f, rc, h, "tsr_def_var_decomp",
                           !rc ? f->schema.vars[varid].name : NULL));
}

/* The most significant bits or digits a type holds (NetCDF's
 * NC_QUANTIZE_MAX_*; core includes no NetCDF header). */
static int quantize_max(tsr_type type, tsr_quantize_mode mode) {
  int bits = mode == TSR_QUANTIZE_BITROUND;
  if (type == TSR_FLOAT) return bits ? 23 : 7;
  return bits ? 52 : 15;
}

int tsr_def_var_quantize(tsr_file *f, int varid, tsr_quantize_mode mode, int nsd) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = define_check(f);
  if (!rc && (varid < 0 || varid >= f->schema.nvars)) rc = TSR_EBADID;
  tsr__var *v = rc ? NULL : &f->schema.vars[varid];
  if (v && v->type != TSR_FLOAT && v->type != TSR_DOUBLE) rc = TSR_ETYPE;
  if (!rc && (mode < TSR_QUANTIZE_NONE || mode > TSR_QUANTIZE_BITROUND)) rc = TSR_EINVAL;
  if (!rc && mode != TSR_QUANTIZE_NONE && (nsd < 1 || nsd > quantize_max(v->type, mode)))
    rc = TSR_EINVAL;
  if (!rc) {
    v->quantize_set = 1;
    v->quantize_mode = mode;
    v->quantize_nsd = mode == TSR_QUANTIZE_NONE ? 0 : nsd;
  }
  uint64_t h = tsr__fnv(TSR__FNV_START, &varid, sizeof varid);
  h = tsr__fnv(h, &mode, sizeof mode);
  h = tsr__fnv(h, &nsd, sizeof nsd);
  TSR_LEAVE(f, define_done(f, rc, h, "tsr_def_var_quantize", v ? v->name : NULL));
}

int tsr_put_att(tsr_file *f, int varid, const char *name, tsr_type type, size_t n,
                const void *values) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = define_check(f);
  if (!rc) rc = tsr__schema_put_att(&f->schema, varid, name, type, n, values);
  uint64_t h = tsr__fnv(hash_name(name), &varid, sizeof varid);
  h = tsr__fnv(h, &type, sizeof type);
  h = tsr__fnv(h, &n, sizeof n);
  if (!rc) h = tsr__fnv(h, values, n * tsr__type_size(type));
  TSR_LEAVE(f, define_done(f, type_reason(f, rc, type, name), h, "tsr_put_att", name));
}

/* The schema is complete: agree on it (one reduction over the define log by
 * default), then let the strategy lay the file out. */
int tsr__file_end_define(tsr_file *f) {
  int rc = define_check(f);
  if (f->in_define) {
    char msg[sizeof f->berr.message] = "";
    rc = tsr__deflog_agree(&f->deflog, f->ctx->comm, rc, msg, sizeof msg);
    if (msg[0]) snprintf(f->berr.message, sizeof f->berr.message, "%s", msg);
    if (rc) TSR_LOG("%s: %s", f->path, msg);
    tsr__ctx_failed(f->ctx, rc, msg);
  } else {
    rc = tsr__file_agree(f, rc);
  }
  tsr__deflog_free(&f->deflog);
  if (!rc) rc = tsr__reduce_enddef(f); /* reduce= names variables the schema must have */
  if (rc) return rc;
  /* strategy=auto: the frame size is known now, the stream's choice too. */
  if (tsr__auto_settle(f)) {
    char msg[sizeof f->berr.message] = "";
    rc = tsr__file_agree(f, choose_or_fall_back(f, msg, sizeof msg));
    if (rc) return rc;
  }
  rc = tsr__file_agree(f, f->strategy->enddef(f));
  if (rc) f->strategy->abort(f); /* the strategy released what it had made */
  /* An alternative that failed to lay the file out: the next candidate,
   * with the failure's agreed message as the reason. */
  while (rc && f->autof && tsr__auto_fallback(f, rc, f->berr.message) == 0) {
    char msg[sizeof f->berr.message] = "";
    f->berr.code = 0;
    f->berr.message[0] = '\0';
    rc = tsr__file_agree(f, choose(f, msg, sizeof msg));
    if (rc) continue;
    rc = tsr__file_agree(f, f->strategy->enddef(f));
    if (rc) f->strategy->abort(f);
  }
  if (!rc) f->in_define = 0;
  return rc;
}

int tsr_enddef(tsr_file *f) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  /* Opened for reading: never in define mode; a failed enddef: only close is left. */
  if (!f->strategy) TSR_LEAVE(f, tsr__file_agree(f, f->reader ? TSR_EMODE : TSR_ESTATE));
  int was_defining = f->in_define;
  int rc = tsr__file_end_define(f);
  if (rc && was_defining) f->strategy = NULL; /* in data mode (EMODE) the file stays good */
  TSR_LEAVE(f, rc);
}

/* The agreed result of a data call's strategy op. Its first failure sticks
 * to the file (f->failed): data may be lost from then on, so tsr_close
 * removes the file instead of renaming it and returns that failure. A call
 * refused by its checks does not count: the program may correct it and go on. */
static int data_done(tsr_file *f, int rc) {
  rc = tsr__file_agree(f, rc);
  if (rc && !f->failed) {
    f->failed = rc;
    f->failed_berr = f->berr;
  }
  return rc;
}

/* A put's checks are agreed before its strategy runs, so that no rank enters
 * an exchange another refused: one reduction, then another on the result.
 * A strategy whose puts are local (put_is_local: split) runs them on the
 * ranks whose own checks passed, and one reduction agrees on both: half the
 * synchronisations, which oversubscribed ranks pay for in turns of the CPU.
 * A call refused then wrote this rank's tile into its own piece and still
 * does not count. safe_mode=1 keeps the two reductions. */
static int checks_first(const tsr_file *f) {
  return !f->strategy || !f->strategy->put_is_local || f->hints.safe_mode;
}

/* With checks_first: the agreed checks. Else this rank's own, agreed with
 * the strategy's result by data_agreed. */
static int put_checked(tsr_file *f, int rc) {
  return checks_first(f) ? tsr__file_agree(f, rc) : rc;
}

/* The end of a put: @p checked from put_checked, @p ran the strategy's
 * result on this rank (0 where it did not run). */
static int data_agreed(tsr_file *f, int checked, int ran) {
  if (checks_first(f)) return checked ? checked : data_done(f, ran);
  int c = checked, r = ran, rc = tsr__agree_two(f->ctx->comm, &c, &r);
  if (!rc && !r) return tsr__file_agreed(f, checked, c); /* refused (or done): does not count */
  if (!rc) rc = tsr__file_agreed(f, ran, r);
  if (!f->failed) {
    f->failed = rc;
    f->failed_berr = f->berr;
  }
  return rc;
}

/* The checks common to tsr_put and tsr_put_global, on this rank's arguments. */
static int data_check(tsr_file *f, int varid, int64_t frame) {
  if (f->reader) return TSR_EMODE;     /* opened by tsr_open: read-only */
  if (!f->strategy) return TSR_ESTATE; /* enddef failed: only tsr_close is left */
  if (f->in_define) return TSR_EMODE;
  if (varid < 0 || varid >= f->schema.nvars) return TSR_EBADID;
  if (f->schema.vars[varid].is_record && frame < 0) return TSR_ERANGE;
  return 0;
}

static void count_put(tsr_file *f, int varid, int64_t frame, int64_t elems) {
  const tsr__var *v = &f->schema.vars[varid];
  int64_t bytes = elems * (int64_t)tsr__type_size(v->type);
  f->st.bytes_put += bytes;
  f->ctx->stats.bytes_put += bytes;
  if (f->st.first_put == 0) {
    f->st.first_put = tsr__now();
    f->st.blocked_before = f->ctx->stats.blocked_s; /* strategy=auto's compute interval */
  }
  if (v->is_record && frame + 1 > f->st.frames) f->st.frames = frame + 1;
}

/* This rank's checks of a put (tsr_put, tsr_put_typed), in their order:
 * the call's state, then @p type_rc (the caller's verdict on the memory
 * type), then the decomposition (a NULL @p *d takes the variable's default)
 * and the buffer. */
static int put_check(tsr_file *f, int varid, int64_t frame, int type_rc, const tsr_decomp **d,
                     const void *buf) {
  int rc = data_check(f, varid, frame);
  if (!rc) rc = type_rc;
  if (!rc && !*d) *d = f->schema.vars[varid].decomp;
  if (!rc && !*d) rc = TSR_EINVAL;
  if (!rc && !tsr__shape_matches(f, varid, *d)) rc = TSR_ESHAPE;
  if (!rc && !buf && (*d)->my_elems > 0) rc = TSR_EINVAL;
  if (!rc) rc = flat_refused(f, *d);
  return rc;
}

int tsr_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, const void *buf) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = put_check(f, varid, frame, 0, &d, buf);
  /* Maps, box lists and other memory orders reach the strategy packed into
   * what their canon describes (handle/decomp_map.c), unless the strategy
   * reads them in place: one copy fewer. */
  const void *sbuf = buf;
  const tsr_decomp *sd = d; /* what the strategy gets */
  /* Only after the checks: a failed enddef leaves no strategy to ask. */
  int in_place = !rc && (d->ordered || d->tiles.perm) && f->strategy->reads_in_place;
  if (!rc && d->canon && !in_place) {
    sd = d->canon;
    rc = tsr__decomp_pack(f, d, tsr__type_size(f->schema.vars[varid].type), buf, &sbuf);
  }
  const tsr_decomp *vd = rc ? NULL : d->canon ? d->canon : d; /* what reduce= folds */
  if (!rc) rc = tsr__reduce_put_check(f, varid, frame, vd);
  int checked = put_checked(f, rc), ran = 0;
  if (!checked) {
    count_put(f, varid, frame, d->my_elems);
    tsr__reduce_tag(f, varid);
    f->put_lent = f->hints.put_mode_deferred && sbuf == buf;
    ran = f->strategy->put(f, varid, frame, sd, sbuf);
    f->put_lent = 0;
  }
  rc = data_agreed(f, checked, ran);
  /* After the strategy: with a canon read in place, the fold packs into the
   * scratch the strategy did not use. */
  if (!rc) tsr__reduce_put(f, varid, frame, d, vd, sd == vd ? sbuf : NULL, buf,
                           f->schema.vars[varid].type);
  TSR_LEAVE(f, rc);
}

/* Double memory into a float variable: a strategy that converts where it
 * chooses (put_f64: the servers, before the hand-off or on the writer) gets
 * the doubles; any other gets a float copy of the memory box made here,
 * before anything moves. Either way each value is the C cast (float)x. */
int tsr_put_typed(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, tsr_type memtype,
                  const void *buf) {
  if (!f) return TSR_EINVAL;
  int vt = varid >= 0 && varid < f->schema.nvars ? (int)f->schema.vars[varid].type : -1;
  if (vt < 0 || (int)memtype == vt) return tsr_put(f, varid, frame, d, buf);
  TSR_ENTER(f);
  int type_rc = memtype == TSR_DOUBLE && vt == TSR_FLOAT ? 0 : TSR_EINVAL;
  int rc = put_check(f, varid, frame, type_rc, &d, buf);
  /* Maps, box lists and other memory orders: the doubles are packed into
   * their canon first (as tsr_put packs floats), so the conversion below
   * and the strategy see a plain memory box. */
  const void *src = buf;
  const tsr_decomp *sd = d;
  if (!rc && d->canon) {
    sd = d->canon;
    rc = tsr__decomp_pack(f, d, sizeof(double), buf, &src);
  }
  float *copy = NULL;
  int64_t n = 1;
  if (!rc && !f->strategy->put_f64 && d->my_elems > 0) {
    /* What the strategy reads: a flat canon's packed elements, else the memory box. */
    if (sd->tiles.flat) n = sd->my_elems;
    for (int i = 0; !sd->tiles.flat && i < sd->ndims; i++) n *= sd->mem.count[i];
    copy = malloc((size_t)n * sizeof *copy);
    if (!copy) rc = TSR_ENOMEM;
  }
  if (!rc) rc = tsr__reduce_put_check(f, varid, frame, sd);
  int checked = put_checked(f, rc), ran = 0;
  if (!checked) {
    count_put(f, varid, frame, d->my_elems);
    tsr__reduce_tag(f, varid);
    if (f->strategy->put_f64) {
      f->put_lent = f->hints.put_mode_deferred && src == buf;
      ran = f->strategy->put_f64(f, varid, frame, sd, src);
    } else { /* the floats are ours, freed below: never lent (put_lent stays 0) */
      for (int64_t i = 0; copy && i < n; i++) copy[i] = (float)((const double *)src)[i];
      ran = f->strategy->put(f, varid, frame, sd, copy ? (const void *)copy : src);
    }
    f->put_lent = 0;
  }
  rc = data_agreed(f, checked, ran);
  /* sd and src: the doubles laid out as sd describes (packed above). */
  if (!rc) tsr__reduce_put(f, varid, frame, d, sd, src, buf, TSR_DOUBLE);
  free(copy);
  TSR_LEAVE(f, rc);
}

int tsr_put_global(tsr_file *f, int varid, int64_t frame, const void *buf) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = data_check(f, varid, frame);
  if (!rc && !buf) rc = TSR_EINVAL;
  int checked = put_checked(f, rc), ran = 0;
  if (!checked) {
    if (f->ctx->rank == 0) count_put(f, varid, frame, tsr__var_frame_elems(&f->schema, varid));
    f->put_lent = f->hints.put_mode_deferred;
    ran = f->strategy->put_global(f, varid, frame, buf);
    f->put_lent = 0;
  }
  rc = data_agreed(f, checked, ran);
  if (!rc) tsr__reduce_put_global(f, varid, buf);
  TSR_LEAVE(f, rc);
}

int tsr_flush(tsr_file *f) {
  if (!f) return TSR_EINVAL;
  TSR_ENTER(f);
  int rc = tsr__file_agree(f, f->strategy && !f->in_define ? 0 : TSR_EMODE);
  if (!rc) rc = data_done(f, f->strategy->flush(f));
  TSR_LEAVE(f, rc);
}

int tsr_inq_varid(const tsr_file *f, const char *name, int *varid) {
  if (!f || !name || !varid) return TSR_EINVAL;
  int v = tsr__schema_find_var(&f->schema, name);
  if (v < 0) return TSR_ENAME;
  *varid = v;
  return 0;
}

int tsr_backend_error(const tsr_file *f, int *code, const char **message) {
  if (!f) return TSR_EINVAL;
  if (code) *code = f->berr.code;
  if (message) *message = f->berr.message;
  return f->last_err;
}

const char *tsr_file_strategy(const tsr_file *f) {
  if (f && f->reader) return tsr__reader_strategy(f);
  return f && f->strategy ? f->strategy->name : "";
}

int tsr_file_hints(const tsr_file *f, char *out, size_t outlen) {
  if (!f || !out || outlen == 0) return TSR_EINVAL;
  tsr__hints_format(&f->hints, out, outlen);
  return 0;
}
