/* Serial NetCDF backend: one rank owns the file (comm is MPI_COMM_SELF) and
 * writes blocks with nc_put_vara. For reading, every rank opens the file
 * itself (read-only, no coordination needed) and reads its blocks with
 * nc_get_vara. We link Debian's MPI build of NetCDF
 * (libnetcdf_mpi) but call only its serial API, so the classic CDF-2/CDF-5
 * formats go through NetCDF's own POSIX layer.
 *
 * A block from the caller's own array under put_mode=deferred
 * (mem.deferred) is only noted, and written at the next flush or close: a
 * strategy whose ranks agree after every put (split) then agrees between
 * puts that do no I/O, and each rank writes its frame in one stretch, as a
 * program calling nc_put_vara by hand does, instead of waiting at every
 * variable for the slowest rank's write. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netcdf.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/backend_fresh.h"
#include "backend/netcdf_common.h"
#include "backend/sink_checksum.h"

#define LIB "NetCDF"

struct tsr__bfile {
  int ncid;
  char *path;
  int nvars;
  tsr__bvar *vars;
  size_t *sumlen; /* checksum=: each variable's placeholder length (define_sums) */
  void *scratch; /* packs blocks that sit inside a larger memory array */
  size_t scratch_cap;
  int64_t nrecs; /* records when opened for reading */
  struct noted *noted; /* deferred blocks, in the order they came */
  int nnoted, noted_cap;
};

/* A deferred block: where it goes and the caller's array it is read from. */
struct noted {
  int varid;
  int64_t frame, start[TSR_MAX_DIMS], count[TSR_MAX_DIMS];
  const void *buf;
  int64_t mshape[TSR_MAX_DIMS], moffset[TSR_MAX_DIMS];
  int in_array; /* the block sits inside a larger array (mshape, moffset) */
};

static int nc_fail(tsr__berr *err, int status, int sys_errno, const char *call,
                   const tsr__bfile *bf, const char *path, const char *var) {
  return tsr__nc_fail(err, status, sys_errno, call, bf ? bf->path : path, var);
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  free(bf->path);
  free(bf->vars);
  free(bf->sumlen);
  free(bf->scratch);
  free(bf->noted);
  free(bf);
}

/* checksum=: each variable's sums attribute as a placeholder, which close
 * overwrites in data mode (backend/sink_checksum.h: a classic header that
 * grew would move the data). */
static int define_sums(tsr__bfile *bf, const tsr__schema *s, int frames, tsr__berr *err) {
  if (!(bf->sumlen = calloc((size_t)s->nvars + 1, sizeof *bf->sumlen)))
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
  for (int v = 0; v < s->nvars; v++) {
    char *p = tsr__sums_placeholder(s, v, frames);
    if (!p) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
    bf->sumlen[v] = strlen(p);
    int st = nc_put_att_text(bf->ncid, bf->vars[v].fid, TSR__CHECKSUM_ATT, bf->sumlen[v], p);
    free(p);
    if (st) return nc_fail(err, st, errno, "nc_put_att_text", bf, NULL, s->vars[v].name);
  }
  return 0;
}

/* Define the whole schema and leave define mode. */
static int define(tsr__bfile *bf, const tsr__schema *s, const tsr__hints *h, tsr__berr *err) {
  int rc = tsr__nc_define(bf->ncid, bf->path, s, NULL, NULL, err);
  if (!rc && h && h->checksum) rc = define_sums(bf, s, h->frames_per_outfile, err);
  if (rc) return rc;
  errno = 0;
  int st = nc_enddef(bf->ncid);
  return st ? nc_fail(err, st, errno, "nc_enddef", bf, NULL, NULL) : 0;
}

static int tsr__nc_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                          const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  (void)comm; /* always MPI_COMM_SELF: the serial API has no communicator */
  *out = NULL;
  int cmode;
  if (s->format == 2)
    cmode = NC_NOCLOBBER | NC_64BIT_OFFSET; /* a fresh name: backend_fresh.h */
  else if (s->format == 5)
    cmode = NC_NOCLOBBER | NC_64BIT_DATA;
  else
    return tsr__berr_plain(err, TSR_EINVAL, LIB, "unknown format %d (path %s)", s->format, path);

  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf || !(bf->path = strdup(path)) || tsr__bvars_from_schema(s, &bf->vars)) {
    free_file(bf);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  }
  bf->nvars = s->nvars;
  int rc = tsr__backend_fresh_name(MPI_COMM_SELF, path, LIB, err);
  if (rc) {
    free_file(bf);
    return rc;
  }
  errno = 0;
  int st = nc_create(path, cmode, &bf->ncid);
  if (st) {
    int rc = nc_fail(err, st, errno, "nc_create", NULL, path, NULL);
    free_file(bf);
    return rc;
  }
  rc = define(bf, s, h, err);
  if (rc) {
    /* nc_abort deletes a file still in define mode; unlink covers the case
     * where nc_enddef got far enough to leave a header behind. */
    nc_abort(bf->ncid);
    unlink(path);
    free_file(bf);
    return rc;
  }
  *out = bf;
  return 0;
}

static int scratch_fit(tsr__bfile *bf, size_t bytes, const tsr__bvar *v, tsr__berr *err) {
  return tsr__nc_scratch_fit(&bf->scratch, &bf->scratch_cap, bytes, v->name, err);
}

/* Write one block now (nc_put_vara), @p v checked by the caller. */
static int put_block(tsr__bfile *bf, const tsr__bvar *v, int64_t frame, const int64_t start[],
                     const int64_t count[], const void *buf, tsr__memview mem, tsr__berr *err) {
  size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  tsr__nc_corners(v, frame, start, count, st, ct);

  const void *src = tsr__block_contiguous(buf, v->esize, v->nd, count, mem, &bf->scratch,
                                          &bf->scratch_cap, LIB, v->name, err);
  if (!src) return TSR_ENOMEM; /* the only way it fails; err says which variable */
  errno = 0;
  int status = nc_put_vara(bf->ncid, v->fid, st, ct, src);
  if (status) return nc_fail(err, status, errno, "nc_put_vara", bf, NULL, v->name);
  return 0;
}

/* Keep a deferred block for write_noted: its corners and its view are
 * copied (the view's offsets live on the strategy's stack). */
static int note_block(tsr__bfile *bf, const tsr__bvar *v, int varid, int64_t frame,
                      const int64_t start[], const int64_t count[], const void *buf,
                      tsr__memview mem, tsr__berr *err) {
  if (bf->nnoted == bf->noted_cap) {
    int cap = bf->noted_cap ? 2 * bf->noted_cap : 64;
    struct noted *grown = realloc(bf->noted, (size_t)cap * sizeof *grown);
    if (!grown)
      return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory noting a block of %s (path %s)",
                             v->name, bf->path);
    bf->noted = grown;
    bf->noted_cap = cap;
  }
  struct noted *b = &bf->noted[bf->nnoted++];
  *b = (struct noted){.varid = varid, .frame = frame, .buf = buf, .in_array = mem.mshape != NULL};
  for (int i = 0; i < v->nd; i++) {
    b->start[i] = start[i];
    b->count[i] = count[i];
    if (mem.mshape) {
      b->mshape[i] = mem.mshape[i];
      b->moffset[i] = mem.moffset[i];
    }
  }
  return 0;
}

/* Write the deferred blocks, in the order they came; after a failure the
 * rest are dropped (the file is removed at close). */
static int write_noted(tsr__bfile *bf, tsr__berr *err) {
  int rc = 0;
  for (int k = 0; k < bf->nnoted && !rc; k++) {
    const struct noted *b = &bf->noted[k];
    tsr__memview mem = {b->in_array ? b->mshape : NULL, b->in_array ? b->moffset : NULL, 0};
    rc = put_block(bf, &bf->vars[b->varid], b->frame, b->start, b->count, b->buf, mem, err);
  }
  bf->nnoted = 0;
  return rc;
}

static int tsr__nc_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                               const int64_t count[], const void *buf, tsr__memview mem,
                               tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  if (tsr__block_elems(v->nd, count) == 0) return 0; /* NetCDF would accept it, but why call */
  if (mem.deferred) return note_block(bf, v, varid, frame, start, count, buf, mem, err);
  return put_block(bf, v, frame, start, count, buf, mem, err);
}

static int64_t tsr__nc_pending_bytes(const tsr__bfile *bf) {
  (void)bf; /* nc_put_vara has handed the data to NetCDF when it returns; */
  return 0; /* deferred blocks are the caller's arrays, no copy */
}

static int tsr__nc_flush(tsr__bfile *bf, tsr__berr *err) {
  int rc = write_noted(bf, err);
  if (rc) return rc;
  errno = 0;
  int st = nc_sync(bf->ncid);
  return st ? nc_fail(err, st, errno, "nc_sync", bf, NULL, NULL) : 0;
}

static int tsr__nc_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  int rc = write_noted(bf, err);
  errno = 0;
  /* nc_close writes NetCDF's last buffered page, so it can be where a full
   * disk or a file size limit shows up. */
  int st = nc_close(bf->ncid);
  if (!rc && st) rc = nc_fail(err, st, errno, "nc_close", bf, NULL, NULL);
  free_file(bf);
  return rc;
}

static void tsr__nc_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  nc_abort(bf->ncid);
  /* In data mode nc_abort only closes; delete so a failed file never looks
   * complete. A missing file (already deleted) is fine. */
  unlink(path ? path : bf->path);
  free_file(bf);
}

/* The serial API does not expose a variable's begin offset. */
static int64_t tsr__nc_block_offset(const tsr__bfile *bf, int varid, int64_t frame,
                                    const int64_t start[]) {
  (void)bf;
  (void)varid;
  (void)frame;
  (void)start;
  return -1;
}

/* ---- reading ---- */

static int tsr__nc_open(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *s,
                        tsr__bfile **out, tsr__berr *err) {
  (void)comm; /* MPI_COMM_SELF: every rank opens the file on its own */
  (void)h;
  *out = NULL;
  tsr__schema_init(s);
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf || !(bf->path = strdup(path))) {
    free_file(bf);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  }
  errno = 0;
  int st = nc_open(path, NC_NOWRITE, &bf->ncid);
  if (st) {
    int rc = nc_fail(err, st, errno, "nc_open", NULL, path, NULL);
    free_file(bf);
    return rc;
  }
  int *fid = NULL;
  int rc = tsr__nc_describe(bf->ncid, bf->path, s, &fid, &bf->nrecs, err);
  if (!rc && tsr__bvars_from_file(s, fid, &bf->vars))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  if (rc) {
    free(fid);
    nc_close(bf->ncid);
    free_file(bf);
    tsr__schema_free(s);
    return rc;
  }
  bf->nvars = s->nvars;
  free(fid);
  *out = bf;
  return 0;
}

static int tsr__nc_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                              const int64_t count[], void *buf, tsr__memview mem,
                              tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0; /* serial: nobody waits for an empty call */
  if (v->is_record && frame >= bf->nrecs)
    return tsr__berr_plain(err, TSR_ERANGE, LIB, "frame %lld of %s: the file has %lld records",
                           (long long)frame, v->name, (long long)bf->nrecs);
  size_t st[TSR_MAX_DIMS], ct[TSR_MAX_DIMS];
  tsr__nc_corners(v, frame, start, count, st, ct);
  /* NetCDF's serial API reads contiguous blocks only: a block inside a
   * larger array lands in the scratch buffer and is spread from there, so
   * the halo around it stays as the caller left it. */
  void *dst = buf;
  if (mem.mshape) {
    if ((rc = scratch_fit(bf, (size_t)n * v->esize, v, err))) return rc;
    dst = bf->scratch;
  }
  errno = 0;
  int status = nc_get_vara(bf->ncid, v->fid, st, ct, dst);
  if (status) return nc_fail(err, status, errno, "nc_get_vara", bf, NULL, v->name);
  if (mem.mshape) tsr__block_unpack(buf, bf->scratch, v->esize, v->nd, count, mem);
  return 0;
}

static int64_t tsr__nc_num_records(const tsr__bfile *bf) { return bf->nrecs; }

/* Over the placeholders, in data mode; sums longer than theirs (more frames
 * than frames_per_outfile said) need define mode, where the header grows
 * and NetCDF moves the data behind it: correct, and slow. */
static int tsr__nc_annotate(tsr__bfile *bf, const char *name, char *const texts[],
                            tsr__berr *err) {
  int st = write_noted(bf, err), indef = 0; /* the data before a header that may move them */
  if (st) return st;
  for (int v = 0; v < bf->nvars && !st; v++) {
    if (!texts[v]) continue;
    size_t len = bf->sumlen ? bf->sumlen[v] : 0;
    char *fit = malloc(len + 1);
    if (!fit) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", bf->path);
    int fits = tsr__sums_fit(texts[v], len, fit);
    errno = 0;
    if (!fits && !indef && !(st = nc_redef(bf->ncid))) indef = 1;
    if (!st)
      st = fits ? nc_put_att_text(bf->ncid, bf->vars[v].fid, name, len, fit)
                : nc_put_att_text(bf->ncid, bf->vars[v].fid, name, strlen(texts[v]), texts[v]);
    free(fit);
    if (st) return nc_fail(err, st, errno, "nc_put_att_text", bf, NULL, bf->vars[v].name);
  }
  if (indef && (st = nc_enddef(bf->ncid))) return nc_fail(err, st, errno, "nc_enddef", bf, NULL, NULL);
  return 0;
}

const tsr__backend_ops tsr__backend_netcdf = {
    .version = TSR__BACKEND_VERSION,
    .name = "netcdf",
    .parallel = 0,
    .create = tsr__nc_create,
    .write_block = tsr__nc_write_block,
    .pending_bytes = tsr__nc_pending_bytes,
    .flush = tsr__nc_flush,
    .close = tsr__nc_close,
    .abort = tsr__nc_abort,
    .file_info = NULL,
    .block_offset = tsr__nc_block_offset,
    .open = tsr__nc_open,
    .read_block = tsr__nc_read_block,
    .num_records = tsr__nc_num_records,
    .annotate = tsr__nc_annotate,
};
