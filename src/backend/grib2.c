/* GRIB2 backend (format=grib2) through ecCodes: one GRIB2 message per
 * horizontal level of each field and output time, as operational centres and
 * WRF's io_form 5/10 write them.
 *
 * One rank owns the file (serial, split, the servers' group root, aggregate
 * with one writer), or several writers share it (aggregate), each holding
 * whole levels (the backend's `whole_levels`: such strategies cut their
 * layouts between levels). A message needs its whole level, while blocks
 * arrive in any shape (slabs of rows, tiles), so each level is assembled in a
 * buffer of doubles with a mask of the points seen, and encoded the moment its
 * last point arrives: the memory held is the levels in progress, which the
 * strategies' slab order keeps to a few. A single writer appends each message
 * at once. Several writers encode theirs at the collective flush, which
 * agrees on offsets (one allgather of byte counts: writer r's
 * messages follow those of writers 0..r-1) and pwrites them; strategies flush
 * after every put, so the file holds the puts in order and each put's levels
 * in order: byte for byte the single writer's file, as CDI-PIO's writers
 * append whole records at agreed offsets. POSIX pwrite rather than MPI-IO:
 * the requests are whole messages with nothing to gather, and MPI-IO takes
 * the text before a ':' (WRF's time-stamped names) for a file-system prefix.
 *
 * What the messages say (docs/grib2.md): the parameter (grib2_params.c:
 * GRIB_* attributes, else a table of WRF fields; WRF's perturbations T, P,
 * PH become theta, P + PB, PH + PHB, so a perturbation's level waits for its
 * base state's and both are freed together), the grid (grib2_grid.c: WRF's
 * projection from MAP_PROJ and friends, else a placeholder), the times
 * (grib2_time.c: from Times or XTIME, which reach one writer; several
 * writers share them at the flush and therefore encode their levels there,
 * not when the last point arrives). Packing: simple with grib_bits bits per
 * value (default 16), or CCSDS (grib_packing=ccsds) when ecCodes has it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <eccodes.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/grib2_message.h"
#include "core/verbose.h"
#include "tier/safe_names.h"

#define LIB "ecCodes"

/* One horizontal level being assembled. */
typedef struct {
  int varid;
  int64_t frame, level;
  double *vals;         /* NULL once written (or added to its perturbation) */
  unsigned char *seen;
  int64_t nseen;
  int done;             /* every point seen */
} level_buf;

struct tsr__bfile {
  int fd;
  char *path;
  MPI_Comm comm; /* our duplicate with several writers (abort needs it); else MPI_COMM_NULL */
  int rank, nwriters;
  int64_t end; /* file bytes written so far by all writers: where the next flush starts */
  char *out;   /* several writers: messages encoded since the last flush */
  size_t outlen, outcap;
  int nvars;
  tsr__bvar *vars;
  tsr__grib_var *g;
  level_buf *lev;
  int nlev, levcap;
  int64_t pending; /* bytes of the levels in progress */
  int bits;
  int ccsds;
  void *scratch;
  size_t scratch_cap;
  tsr__grib_clock clock;
  tsr__grib_proj proj;
  int *ready; /* several writers: levels to encode at the next flush, in order */
  int nready, readycap;
};

static void free_level(level_buf *l) {
  free(l->vals);
  free(l->seen);
  l->vals = NULL;
  l->seen = NULL;
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  if (bf->comm != MPI_COMM_NULL) MPI_Comm_free(&bf->comm);
  free(bf->out);
  free(bf->ready);
  tsr__grib_clock_free(&bf->clock);
  for (int i = 0; i < bf->nlev; i++) free_level(&bf->lev[i]);
  free(bf->lev);
  free(bf->g);
  free(bf->vars);
  free(bf->path);
  free(bf->scratch);
  free(bf);
}

static int describe(tsr__bfile *bf, const tsr__schema *s, tsr__berr *err) {
  int big = tsr__grib_describe(s, bf->g, bf->path);
  if (big >= 0)
    return tsr__berr_plain(err, TSR_ESHAPE, LIB, "%s: a level of %lld points is too large for "
                           "one GRIB2 message", s->vars[big].name,
                           (long long)(bf->g[big].nx * bf->g[big].ny));
  tsr__grib_proj_init(&bf->proj, s);
  if (bf->proj.kind == TSR__GRIB_GRID_NONE)
    TSR_LOG("grib2 %s: placeholder grid (0.01-degree lat/lon from 0N 0E): %s", bf->path,
            bf->proj.why);
  else
    TSR_LOG("grib2 %s: WRF projection (grid kind %d), centre %.4f %.4f", bf->path,
            bf->proj.kind, bf->proj.cen_lat, bf->proj.cen_lon);
  return tsr__grib_clock_init(&bf->clock, s, bf->nwriters)
             ? tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path)
             : 0;
}

/* Open the file: the only writer, or rank 0 first (create, truncate) and
 * then the others, each decision agreed so that every writer returns the
 * same status and none is left holding the file. */
static int open_file(tsr__bfile *bf, MPI_Comm comm, int rc, tsr__berr *err) {
  for (int pass = 0; pass < 2; pass++) {
    int mine = bf && (pass == 0 ? bf->rank == 0 : bf->rank != 0);
    if (!rc && mine) {
      errno = 0;
      /* Rank 0 makes a fresh file, never through a link (backend_fresh.h);
       * the others open the file it made. */
      bf->fd = pass == 0 ? tsr__name_create(bf->path, O_WRONLY, 0666)
                         : open(bf->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
      if (bf->fd < 0)
        rc = tsr__berr_plain(err, tsr__berr_from_errno(errno), LIB, "cannot %s %s: %s",
                             pass == 0 ? "create" : "open", bf->path, strerror(errno));
    }
    int nw = 1;
    MPI_Comm_size(comm, &nw);
    if (nw == 1) break;
    int all = rc;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all && !rc) rc = tsr__berr_plain(err, all, LIB, "another writer could not open %s",
                                         bf->path);
  }
  if (rc && bf) {
    if (bf->fd >= 0) close(bf->fd);
    if (bf->fd >= 0 && bf->rank == 0) unlink(bf->path);
    bf->fd = -1;
  }
  return rc;
}

static int tsr__grib_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                            const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  int nw = 1, me = 0;
  MPI_Comm_size(comm, &nw);
  MPI_Comm_rank(comm, &me);
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (bf) bf->comm = MPI_COMM_NULL;
  int rc = 0;
  if (!bf || !(bf->path = strdup(path)) || tsr__bvars_from_schema(s, &bf->vars) ||
      !(bf->g = calloc((size_t)(s->nvars > 0 ? s->nvars : 1), sizeof *bf->g)))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  if (!bf) { /* still take part in the agreement, which then fails everywhere */
    open_file(NULL, comm, rc, err);
    return rc;
  }
  bf->fd = -1;
  if (nw > 1 && MPI_Comm_dup(comm, &bf->comm) != MPI_SUCCESS) {
    bf->comm = MPI_COMM_NULL;
    rc = rc ? rc : tsr__berr_plain(err, TSR_EMPI, LIB, "MPI_Comm_dup failed (path %s)", path);
  }
  bf->rank = me;
  bf->nwriters = nw;
  bf->nvars = s->nvars;
  bf->bits = h && h->grib_bits > 0 ? h->grib_bits : 16;
  bf->ccsds = h && h->grib_packing_ccsds;
  if (!rc) rc = describe(bf, s, err);
  if (!rc && bf->ccsds) { /* ask this ecCodes whether it has CCSDS (libaec) */
    codes_handle *t = codes_grib_handle_new_from_samples(NULL, "GRIB2");
    size_t n = 0;
    if (!t || codes_set_string(t, "packingType", "grid_ccsds", &n) != 0)
      rc = tsr__berr_plain(err, TSR_ENOTBUILT, LIB,
                           "grib_packing=ccsds: this ecCodes has no CCSDS packing (libaec)");
    if (t) codes_handle_delete(t);
  }
  if (!rc && bf->bits > 32)
    rc = tsr__berr_plain(err, TSR_EHINT, LIB, "grib_bits=%d: simple packing takes 1 to 32 bits",
                         bf->bits);
  rc = open_file(bf, comm, rc, err);
  if (rc) {
    free_file(bf);
    return rc;
  }
  *out = bf;
  return 0;
}

/* Write all @p len bytes at @p off (pwrite may write less). */
static int pwrite_all(tsr__bfile *bf, const void *buf, size_t len, int64_t off, tsr__berr *err) {
  const char *p = buf;
  while (len > 0) {
    errno = 0;
    ssize_t w = pwrite(bf->fd, p, len, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return tsr__berr_plain(err, tsr__berr_from_errno(w < 0 ? errno : ENOSPC), LIB,
                             "writing %s: %s", bf->path, strerror(w < 0 ? errno : ENOSPC));
    p += w;
    off += w;
    len -= (size_t)w;
  }
  return 0;
}

/* A complete message: appended at once by a single writer; kept for the
 * next flush by one of several. */
static int emit(tsr__bfile *bf, const void *msg, size_t len, tsr__berr *err) {
  if (bf->nwriters == 1) {
    int rc = pwrite_all(bf, msg, len, bf->end, err);
    if (!rc) bf->end += (int64_t)len;
    return rc;
  }
  if (bf->outlen + len > bf->outcap) {
    size_t cap = bf->outcap ? bf->outcap : 1 << 16;
    while (cap < bf->outlen + len) cap *= 2;
    char *p = realloc(bf->out, cap);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory to hold a message");
    bf->out = p;
    bf->outcap = cap;
  }
  memcpy(bf->out + bf->outlen, msg, len);
  bf->outlen += len;
  bf->pending += (int64_t)len;
  return 0;
}

/* The buffer of one level, made on its first block. */
static int level_of(tsr__bfile *bf, int varid, int64_t frame, int64_t level, level_buf **out,
                    tsr__berr *err) {
  for (int i = 0; i < bf->nlev; i++) {
    level_buf *l = &bf->lev[i];
    if (l->varid != varid || l->frame != frame || l->level != level) continue;
    if (!l->vals || l->done)
      return tsr__berr_plain(err, TSR_EINVAL, LIB,
                             "%s frame %lld level %lld: written again after its GRIB2 message "
                             "was complete (every point once: no decomposition holes)",
                             bf->vars[varid].name, (long long)frame, (long long)level);
    return *out = l, 0;
  }
  if (bf->nlev == bf->levcap) {
    int cap = bf->levcap ? 2 * bf->levcap : 64;
    level_buf *p = realloc(bf->lev, (size_t)cap * sizeof *p);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory");
    bf->lev = p;
    bf->levcap = cap;
  }
  const tsr__grib_var *g = &bf->g[varid];
  level_buf *l = &bf->lev[bf->nlev];
  memset(l, 0, sizeof *l);
  l->varid = varid;
  l->frame = frame;
  l->level = level;
  size_t n = (size_t)(g->nx * g->ny);
  l->vals = malloc(n * sizeof *l->vals);
  l->seen = calloc(n, 1);
  if (!l->vals || !l->seen) {
    free_level(l);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for a level of %s",
                           bf->vars[varid].name);
  }
  bf->nlev++;
  bf->pending += (int64_t)(n * sizeof *l->vals);
  return *out = l, 0;
}

static double elem(tsr_type t, const void *p, int64_t i) {
  switch (t) {
  case TSR_BYTE: return ((const int8_t *)p)[i];
  case TSR_SHORT: return ((const int16_t *)p)[i];
  case TSR_INT: return ((const int32_t *)p)[i];
  case TSR_FLOAT: return ((const float *)p)[i];
  case TSR_DOUBLE: return ((const double *)p)[i];
  case TSR_UBYTE: return ((const uint8_t *)p)[i];
  case TSR_USHORT: return ((const uint16_t *)p)[i];
  case TSR_UINT: return ((const uint32_t *)p)[i];
  case TSR_INT64: return (double)((const int64_t *)p)[i];
  case TSR_UINT64: return (double)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* Encode a complete level as one GRIB2 message and append it. */
static int write_message(tsr__bfile *bf, level_buf *l, tsr__berr *err) {
  const tsr__grib_var *g = &bf->g[l->varid];
  tsr__grib_coding c = {&bf->proj, &bf->clock, bf->bits, bf->ccsds, bf->path};
  codes_handle *h = NULL;
  const char *key = "";
  const void *msg;
  size_t len = 0;
  int e = 0, rc = tsr__grib_encode(&c, g, l->frame, l->level, l->vals, &h, &key, &e);
  if (!rc && (e = codes_get_message(h, &msg, &len))) key = "the message", rc = TSR_EIO;
  if (rc == TSR_ENOTBUILT) tsr__berr_plain(err, rc, LIB, "no GRIB2 sample in this ecCodes");
  else if (rc) tsr__berr_plain(err, rc, LIB, "setting %s: %s (%s)", key,
                               codes_get_error_message(e), bf->vars[l->varid].name);
  if (rc && err && e) err->code = e;
  if (!rc) rc = emit(bf, msg, len, err);
  codes_handle_delete(h);
  bf->pending -= g->nx * g->ny * (int64_t)sizeof(double);
  free_level(l);
  return rc;
}

/* The level of @p varid at @p frame and @p level still held, or -1. */
static int find_level(const tsr__bfile *bf, int varid, int64_t frame, int64_t level) {
  for (int i = 0; i < bf->nlev; i++) {
    const level_buf *l = &bf->lev[i];
    if (l->varid == varid && l->frame == frame && l->level == level && l->vals) return i;
  }
  return -1;
}

/* Level @p i is whole: one writer encodes it at once; several keep it for
 * the flush, when they all know the frame's time. */
static int ready(tsr__bfile *bf, int i, tsr__berr *err) {
  if (bf->nwriters == 1) return write_message(bf, &bf->lev[i], err);
  if (bf->nready == bf->readycap) {
    int cap = bf->readycap ? 2 * bf->readycap : 64;
    int *p = realloc(bf->ready, (size_t)cap * sizeof *p);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory");
    bf->ready = p;
    bf->readycap = cap;
  }
  bf->ready[bf->nready++] = i;
  return 0;
}

/* Level @p i has every point. A perturbation and its base state wait for
 * each other (the strategies cut both alike, so the same writer holds
 * both); then the base is added to the perturbation and freed. */
static int level_done(tsr__bfile *bf, int i, tsr__berr *err) {
  level_buf *l = &bf->lev[i];
  l->done = 1;
  const tsr__grib_var *g = &bf->g[l->varid];
  int pert = i, base = -1;
  if (g->base_of >= 0) {
    base = i;
    pert = find_level(bf, g->base_of, l->frame, l->level);
  } else if (g->base >= 0) {
    base = find_level(bf, g->base, l->frame, l->level);
  }
  if (g->base_of < 0 && g->base < 0) return ready(bf, i, err);
  if (pert < 0 || base < 0 || !bf->lev[pert].done || !bf->lev[base].done) return 0;
  level_buf *lp = &bf->lev[pert], *lb = &bf->lev[base];
  size_t n = (size_t)(bf->g[lp->varid].nx * bf->g[lp->varid].ny);
  for (size_t q = 0; q < n; q++) lp->vals[q] += lb->vals[q];
  bf->pending -= (int64_t)(n * sizeof(double));
  free_level(lb);
  return ready(bf, pert, err);
}

static int tsr__grib_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                                 const int64_t count[], const void *buf, tsr__memview mem,
                                 tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  const tsr__grib_var *g = &bf->g[varid];
  int64_t n = tsr__block_elems(v->nd, count);
  int clock = tsr__grib_clock_wants(&bf->clock, varid);
  if ((!g->mapped && g->base_of < 0 && !clock) || n == 0) return 0; /* left out of the file */
  if (!v->is_record) frame = 0;
  const void *src = tsr__block_contiguous(buf, v->esize, v->nd, count, mem, &bf->scratch,
                                          &bf->scratch_cap, LIB, v->name, err);
  if (!src) return TSR_ENOMEM; /* the only way it fails; err says which variable */
  if (clock) { /* Times or XTIME: the frame's output time, no message */
    int64_t first = 0, elems = 1;
    for (int i = 0; i < v->nd; i++) {
      first = first * v->shape[i] + start[i];
      elems *= v->shape[i];
    }
    if (tsr__grib_clock_block(&bf->clock, varid, frame, v->type, first, n, elems, src))
      return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory");
    return 0;
  }
  /* Walk the block row by row: the leading dims give the level, the last
   * two the row (y) and the run of x. */
  int nd = v->nd, lead = nd - 2;
  int64_t idx[TSR_MAX_DIMS] = {0}, rows = n / count[nd - 1], q = 0;
  for (int64_t r = 0; r < rows; r++) {
    int64_t level = 0;
    for (int i = 0; i < lead; i++) level = level * v->shape[i] + start[i] + idx[i];
    level_buf *l = NULL;
    if ((rc = level_of(bf, varid, frame, level, &l, err))) return rc;
    int li = (int)(l - bf->lev);
    int64_t y = start[nd - 2] + idx[nd - 2];
    for (int64_t x = 0; x < count[nd - 1]; x++, q++) {
      int64_t p = y * g->nx + start[nd - 1] + x;
      l->vals[p] = elem(v->type, src, q);
      if (!l->seen[p]) l->seen[p] = 1, l->nseen++;
    }
    if (l->nseen == g->nx * g->ny && !l->done && (rc = level_done(bf, li, err))) return rc;
    for (int i = nd - 2; i >= 0 && ++idx[i] == count[i]; i--) idx[i] = 0;
  }
  return 0;
}

static int64_t tsr__grib_pending_bytes(const tsr__bfile *bf) { return bf->pending; }

/* Several writers: agree where each one's messages go (after those of the
 * lower ranks: MPI_Exscan of the byte counts) and pwrite them. Every writer
 * takes part, also one whose earlier write failed, so nobody waits; the
 * file end moves on by the total everywhere. */
static int tsr__grib_flush(tsr__bfile *bf, tsr__berr *err) {
  if (bf->nwriters == 1) return 0; /* every message is written already */
  /* First the times (only one writer saw Times), then the messages of the
   * levels completed since the last flush, in the order they completed. */
  int rc = tsr__grib_clock_share(&bf->clock, bf->comm);
  if (rc) rc = tsr__berr_plain(err, rc, LIB, "writers could not share the times of %s",
                               bf->path);
  for (int i = 0; i < bf->nready; i++) {
    level_buf *l = &bf->lev[bf->ready[i]];
    if (!rc) {
      rc = write_message(bf, l, err);
      continue;
    }
    /* dropped after an error: the file is aborted anyway */
    bf->pending -= bf->g[l->varid].nx * bf->g[l->varid].ny * (int64_t)sizeof(double);
    free_level(l);
  }
  bf->nready = 0;
  int64_t mine = (int64_t)bf->outlen, before = 0, total = 0;
  if (MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, bf->comm) != MPI_SUCCESS ||
      MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, bf->comm) != MPI_SUCCESS)
    return tsr__berr_plain(err, TSR_EMPI, LIB, "writers could not agree on offsets in %s",
                           bf->path);
  if (bf->rank == 0) before = 0; /* MPI_Exscan leaves rank 0's result undefined */
  if (!rc) rc = pwrite_all(bf, bf->out, bf->outlen, bf->end + before, err);
  bf->end += total;
  bf->pending -= (int64_t)bf->outlen;
  bf->outlen = 0;
  return rc;
}

static int tsr__grib_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  int rc = tsr__grib_flush(bf, err);
  for (int i = 0; i < bf->nlev && !rc; i++) {
    const level_buf *l = &bf->lev[i];
    if (l->vals && l->done) /* a perturbation or base state whose partner never came */
      rc = tsr__berr_plain(err, TSR_EINVAL, LIB,
                           "%s frame %lld level %lld: its %s was never written; the GRIB2 "
                           "message needs both (path %s)",
                           bf->vars[l->varid].name, (long long)l->frame, (long long)l->level,
                           bf->g[l->varid].base >= 0 ? "base state" : "perturbation", bf->path);
    else if (l->vals)
      rc = tsr__berr_plain(err, TSR_EINVAL, LIB,
                           "%s frame %lld level %lld: %lld of %lld points were written; a GRIB2 "
                           "message needs its whole level (path %s)",
                           bf->vars[l->varid].name, (long long)l->frame, (long long)l->level,
                           (long long)l->nseen,
                           (long long)(bf->g[l->varid].nx * bf->g[l->varid].ny), bf->path);
  }
  errno = 0;
  if (close(bf->fd) != 0 && !rc)
    rc = tsr__berr_plain(err, tsr__berr_from_errno(errno), LIB, "closing %s: %s", bf->path,
                         strerror(errno));
  free_file(bf);
  return rc;
}

static void tsr__grib_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  close(bf->fd);
  /* Several writers: delete once, after every writer has closed, and return
   * only when the file is gone, so a retry at the same path cannot race it. */
  if (bf->comm != MPI_COMM_NULL) MPI_Barrier(bf->comm);
  if (bf->rank == 0) unlink(path ? path : bf->path);
  if (bf->comm != MPI_COMM_NULL) MPI_Barrier(bf->comm);
  free_file(bf);
}

const tsr__backend_ops tsr__backend_grib2 = {
    .version = TSR__BACKEND_VERSION,
    .name = "grib2",
    .parallel = 1, /* one writer or several (flush agrees the offsets) */
    .whole_levels = 1,
    .create = tsr__grib_create,
    .write_block = tsr__grib_write_block,
    .pending_bytes = tsr__grib_pending_bytes,
    .flush = tsr__grib_flush,
    .close = tsr__grib_close,
    .abort = tsr__grib_abort,
    .file_info = NULL,
    .block_offset = NULL,
    .open = NULL, /* GRIB is written, not read back, by Tessera: grib_ls, cfgrib */
    .read_block = NULL,
    .num_records = NULL,
};
