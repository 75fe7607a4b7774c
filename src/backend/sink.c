/* The sink (contract in backend/sink.h): every backend request goes through
 * here, timed and counted, so the statistics see what reached the file
 * system whatever strategy or server sent it. */
#include "backend/sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/sink_checksum.h"
#include "core/agree.h"
#include "tier/manifest.h"
#include "tier/safe_names.h"
#include "tier/stage.h"
#include "tessera.h"

void tsr__sink_init(tsr__sink *s, const tsr__backend_ops *ops, const tsr__hints *h,
                    tsr__fstats *st, tsr__berr *berr) {
  memset(s, 0, sizeof *s);
  s->ops = s->below = ops;
  s->hints = h;
  s->st = st;
  s->berr = berr;
}

static void free_names(tsr__sink *s) {
  s->ops = s->below; /* the next file decides afresh whether to stack */
  free(s->path);
  free(s->tmp_path);
  free(s->staged);
  free(s->manifest);
  tsr__sums_free(s->sums);
  s->path = s->tmp_path = s->staged = s->manifest = NULL;
  s->sums = NULL;
}

static int keep_path(tsr__sink *s, const char *path) {
  free_names(s);
  s->path = strdup(path);
  return s->path ? 0 : TSR_ENOMEM;
}

/* checksum=: the file's sums go into its attributes at close, so its backend
 * must have them; a stacked layout's drain rewrites the file from it (a log),
 * after the writers are gone, so their sums could not reach it. */
static int checksum_start(tsr__sink *s, MPI_Comm comm) {
  const tsr__backend_ops *io = s->ops;
  const char *why = io->stacked ? io->stacked : !io->annotate ? io->name : NULL;
  if (why) {
    if (s->berr)
      snprintf(s->berr->message, sizeof s->berr->message,
               "checksum=crc32 cannot be used with %s%s: the sums are kept in the file's "
               "attributes at close (use %s%s)",
               io->stacked ? "" : "backend ", why,
               io->stacked ? "backend netcdf, pnetcdf or netcdf4, "
                           : "backend netcdf, pnetcdf, netcdf4 or zarr",
               io->stacked ? io->unstacked : "");
    return TSR_EHINT;
  }
  s->comm = comm;
  s->sums = tsr__sums_new();
  return s->sums ? 0 : TSR_ENOMEM;
}

int tsr__sink_create(tsr__sink *s, MPI_Comm comm, const char *path, const tsr__schema *schema) {
  int rc = keep_path(s, path);
  if (rc) return rc;
  if (tsr__stage_wanted(s->hints, schema)) {
    char msg[sizeof s->berr->message] = "";
    rc = tsr__stage_name(comm, s->hints->stage_dir, path, &s->staged, msg, sizeof msg);
    if (rc) {
      if (s->berr && msg[0]) snprintf(s->berr->message, sizeof s->berr->message, "%s", msg);
      return rc;
    }
  }
  const char *where = s->staged ? s->staged : path; /* the temporary lives next to it */
  size_t n = strlen(where) + sizeof TSR__TMP_SUFFIX;
  s->tmp_path = malloc(n);
  if (!s->tmp_path) return TSR_ENOMEM;
  snprintf(s->tmp_path, n, "%s%s", where, TSR__TMP_SUFFIX);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  s->renamer = me == 0;
  s->schema = schema;
  /* A staged file may be written through a layout stacked over its backend
   * (stage_format=log: logs that the drain converts with the backend). */
  if ((rc = tsr__backend_stack(s->hints, s->staged != NULL, s->below, &s->ops, s->berr)))
    return rc;
  if (s->hints->checksum && (rc = checksum_start(s, comm))) return rc;
  double t0 = MPI_Wtime();
  rc = s->ops->create_over
           ? s->ops->create_over(s->below, comm, s->tmp_path, schema, s->hints, &s->bf, s->berr)
           : s->ops->create(comm, s->tmp_path, schema, s->hints, &s->bf, s->berr);
  s->st->writer_s += MPI_Wtime() - t0;
  s->st->is_writer = 1;
  return rc;
}

int tsr__sink_open(tsr__sink *s, MPI_Comm comm, const char *path, tsr__schema *schema_out) {
  int rc = keep_path(s, path);
  if (rc) return rc;
  s->schema = schema_out;
  return s->ops->open(comm, path, s->hints, schema_out, &s->bf, s->berr);
}

int tsr__sink_is_open(const tsr__sink *s) { return s && s->bf != NULL; }

/* A stacked layout behaves as the backend it stands for, so strategies decide
 * alike. */
int tsr__sink_parallel(const tsr__sink *s) { return s->below->parallel; }

int tsr__sink_whole_levels(const tsr__sink *s) { return s->below->whole_levels; }

static int64_t pending(const tsr__sink *s) {
  return s && s->bf && s->ops->pending_bytes ? s->ops->pending_bytes(s->bf) : 0;
}

int tsr__sink_write(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                    const int64_t count[], const void *buf, tsr__memview mem) {
  const tsr__var *v = &s->schema->vars[varid];
  int nd = v->ndims - (v->is_record ? 1 : 0);
  int64_t elems = 1;
  for (int i = 0; i < nd; i++) elems *= count[i];
  if (elems == 0) return 0;
  int64_t off = s->ops->block_offset ? s->ops->block_offset(s->bf, varid, frame, start) : -1;
  double t0 = MPI_Wtime();
  /* Summed here, as the block goes out: the data are in memory now. */
  int rc = s->sums ? tsr__sums_add(s->sums, s->schema, varid, frame, start, count, buf, mem) : 0;
  if (!rc) rc = s->ops->write_block(s->bf, varid, frame, start, count, buf, mem, s->berr);
  s->st->writer_s += MPI_Wtime() - t0;
  /* A block that is not contiguous in the file still counts as one request:
   * that is what Tessera asked of the backend. */
  tsr__fstats_request(s->st, elems * (int64_t)tsr__type_size(v->type), off);
  if (s->ops->pending_bytes) tsr__fstats_buffer(s->st, pending(s));
  return rc;
}

int tsr__sink_write_whole(tsr__sink *s, int varid, int64_t frame, const void *buf, int lent) {
  int64_t start[TSR_MAX_DIMS] = {0}, count[TSR_MAX_DIMS];
  tsr__var_shape(s->schema, varid, count);
  return tsr__sink_write(s, varid, frame, start, count, buf, (tsr__memview){.deferred = lent});
}

int tsr__sink_write_fill(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                         const int64_t count[]) {
  size_t es = tsr__type_size(s->schema->vars[varid].type);
  const tsr__var *v = &s->schema->vars[varid];
  int64_t n = 1;
  for (int i = 0; i < v->ndims - (v->is_record ? 1 : 0); i++) n *= count[i];
  if (n == 0) return 0;
  char fill[8];
  tsr__var_fill(s->schema, varid, fill);
  void *buf = malloc((size_t)n * es);
  if (!buf) return TSR_ENOMEM;
  for (int64_t i = 0; i < n; i++) memcpy((char *)buf + i * (int64_t)es, fill, es);
  int rc = tsr__sink_write(s, varid, frame, start, count, buf, (tsr__memview){0});
  free(buf); /* backends copy or finish with the buffer before returning */
  return rc;
}

int tsr__sink_drain_if_needed(tsr__sink *s, MPI_Comm comm, int64_t incoming, int status,
                              int *drain_err) {
  *drain_err = 0;
  int64_t p = pending(s);
  int flag = s && s->bf && p > 0 && p + incoming > s->hints->buffer_bytes;
  int rc = tsr__agree_flag(comm, status, &flag);
  if (!rc && flag && s && s->bf) *drain_err = tsr__sink_flush(s);
  return rc;
}

int tsr__sink_flush(tsr__sink *s) {
  if (!s->bf) return 0;
  double t0 = MPI_Wtime();
  int rc = s->ops->flush(s->bf, s->berr);
  s->st->writer_s += MPI_Wtime() - t0;
  return rc;
}

/* checksum=: every writer's sums chained, into the file's attributes (every
 * rank, for a parallel backend) and the manifest lines the renamer writes
 * at commit. The sums are given up here: a file closes once. */
static int checksum_close(tsr__sink *s) {
  const char *slash = strrchr(s->path, '/');
  tsr__sums_result r;
  int rc = tsr__sums_finish(s->sums, s->comm, s->schema, slash ? slash + 1 : s->path, &r);
  tsr__sums_free(s->sums);
  s->sums = NULL;
  if (rc) return rc;
  rc = s->ops->annotate(s->bf, TSR__CHECKSUM_ATT, r.att, s->berr);
  if (s->renamer) s->manifest = r.manifest, r.manifest = NULL;
  tsr__sums_result_free(&r, s->schema->nvars);
  return rc;
}

int tsr__sink_close(tsr__sink *s) {
  int rc = 0;
  if (s->bf && s->sums) {
    double t0 = MPI_Wtime();
    rc = checksum_close(s);
    if (s->st) s->st->writer_s += MPI_Wtime() - t0;
  }
  if (s->bf) {
    double t0 = MPI_Wtime();
    int cl = s->ops->close(s->bf, s->berr); /* always frees */
    rc = rc ? rc : cl;
    if (s->st) s->st->writer_s += MPI_Wtime() - t0;
  }
  s->bf = NULL;
  if (!s->tmp_path) free_names(s); /* opened for reading: nothing to commit */
  return rc;
}

int tsr__sink_commit(tsr__sink *s) {
  int rc = 0, oserr = 0;
  char msg[sizeof s->berr->message];
  if (s->tmp_path && s->renamer)
    rc = s->staged ? tsr__stage_commit(s->staged, s->path, s->hints->stage_drain_at_finalize,
                                       s->manifest, &oserr, msg, sizeof msg)
                   : tsr__promote(s->tmp_path, s->path, &oserr, msg, sizeof msg);
  /* checksum=: the frames are in the manifest once the file has its name
   * (a staged file's, once the drain has put it there). */
  if (!rc && s->tmp_path && s->renamer && !s->staged && s->manifest)
    rc = tsr__manifest_append(s->path, s->manifest, &oserr, msg, sizeof msg);
  if (rc && s->berr) {
    s->berr->code = oserr;
    snprintf(s->berr->message, sizeof s->berr->message, "%s", msg);
  }
  free_names(s);
  return rc;
}

void tsr__sink_discard(tsr__sink *s) {
  if (s->tmp_path && s->renamer) tsr__name_remove(s->tmp_path); /* a file or a log */
  free_names(s);
}

int tsr__sink_finish(tsr__sink *s, int ok) {
  if (ok) return tsr__sink_commit(s);
  tsr__sink_discard(s);
  return 0;
}

void tsr__sink_abort(tsr__sink *s) {
  if (s->bf) s->ops->abort(s->bf, s->tmp_path ? s->tmp_path : s->path);
  else if (s->tmp_path && s->renamer) tsr__name_remove(s->tmp_path); /* a file or a log */
  s->bf = NULL;
  free_names(s);
}

int tsr__sink_read(tsr__sink *s, int varid, int64_t frame, const int64_t start[],
                   const int64_t count[], void *buf, tsr__memview mem) {
  return s->ops->read_block(s->bf, varid, frame, start, count, buf, mem, s->berr);
}

int64_t tsr__sink_num_records(const tsr__sink *s) {
  return s->bf && s->ops->num_records ? s->ops->num_records(s->bf) : 0;
}

MPI_Info tsr__sink_file_info(const tsr__sink *s) {
  return s->bf && s->ops->file_info ? s->ops->file_info(s->bf) : MPI_INFO_NULL;
}
