/* The log backend (layout in backend/log.h): appending blocks on the fast
 * tier, and reading a log directory back (tsr_open of a staged log). */
#include "backend/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend_block.h"
#include "tessera.h"
#include "tier/safe_names.h"
#include "tier/fs.h" /* tsr__write_full, tsr__tier_errno_code */

struct tsr__bfile {
  char *dir;
  int rank; /* writer: its number in the create communicator */
  int fd_log, fd_idx;
  int64_t off; /* writer: bytes appended to the log so far */
  tsr__bvar *vars;
  int nvars;
  /* reader: every writer's entries, in writer order then write order */
  int nlogs, *fds;
  tsr__log_entry *ents;
  int *ent_log; /* which log each entry's data is in */
  int nents;
  int64_t nrecs;
  const tsr__schema *schema;
};

static int os_fail(tsr__berr *err, int e, const char *what, const char *path) {
  if (err) {
    err->code = e;
    snprintf(err->message, sizeof err->message, "log: %s %s: %s", what, path, strerror(e));
  }
  return tsr__tier_errno_code(e);
}

static int read_all_at(int fd, void *p, size_t n, int64_t off) {
  char *c = p;
  while (n > 0) {
    ssize_t r = pread(fd, c, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO; /* a short log: torn, not what was closed */
      return -1;
    }
    c += r;
    n -= (size_t)r;
    off += r;
  }
  return 0;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* The schema record: magic, target backend name, the hints as this build
 * lays them out (their size guards against a converter of another build),
 * the packed schema. */
static int write_schema(const char *dir, const tsr__schema *s, const tsr__hints *h,
                        const char *target, tsr__berr *err) {
  void *packed = NULL;
  size_t plen = 0;
  int rc = tsr__schema_pack(s, &packed, &plen);
  if (rc) return rc;
  char *path = join(dir, TSR__LOG_SCHEMA);
  char name[TSR__NAME_MAX] = {0};
  snprintf(name, sizeof name, "%s", target);
  uint64_t sizes[2] = {sizeof *h, plen};
  int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (fd < 0 || tsr__write_full(fd, TSR__LOG_MAGIC, 8) || tsr__write_full(fd, name, sizeof name) ||
      tsr__write_full(fd, sizes, sizeof sizes) || tsr__write_full(fd, h, sizeof *h) ||
      tsr__write_full(fd, packed, plen))
    rc = os_fail(err, errno, "cannot write", path ? path : dir);
  if (fd >= 0 && close(fd) != 0 && !rc) rc = os_fail(err, errno, "cannot close", path);
  free(path);
  free(packed);
  return rc;
}

/* Read the schema record of @p dir: target name, hints, schema. */
static int read_schema(const char *dir, char target[TSR__NAME_MAX], tsr__hints *h,
                       tsr__schema *s, tsr__berr *err) {
  char *path = join(dir, TSR__LOG_SCHEMA);
  int fd = path ? open(path, O_RDONLY) : -1;
  char magic[8];
  uint64_t sizes[2];
  int rc = 0;
  void *packed = NULL;
  if (fd < 0 || read_all_at(fd, magic, 8, 0) || memcmp(magic, TSR__LOG_MAGIC, 8) ||
      read_all_at(fd, target, TSR__NAME_MAX, 8) ||
      read_all_at(fd, sizes, sizeof sizes, 8 + TSR__NAME_MAX) || sizes[0] != sizeof *h) {
    rc = fd < 0 ? os_fail(err, errno, "cannot open", path ? path : dir) : TSR_EFORMAT;
    if (rc == TSR_EFORMAT && err)
      snprintf(err->message, sizeof err->message,
               "log: %s is not a Tessera log of this build (magic or hints size)", dir);
    goto done;
  }
  int64_t off = 8 + TSR__NAME_MAX + (int64_t)sizeof sizes;
  packed = malloc(sizes[1] ? sizes[1] : 1);
  if (!packed) {
    rc = TSR_ENOMEM;
    goto done;
  }
  if (read_all_at(fd, h, sizeof *h, off) ||
      read_all_at(fd, packed, sizes[1], off + (int64_t)sizeof *h)) {
    rc = os_fail(err, errno, "cannot read", path);
    goto done;
  }
  target[TSR__NAME_MAX - 1] = '\0';
  rc = tsr__schema_unpack(packed, sizes[1], s);
done:
  if (fd >= 0) close(fd);
  free(packed);
  free(path);
  return rc;
}

int tsr__log_is_log(const char *path) {
  struct stat sb;
  if (!path || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
  char *p = join(path, TSR__LOG_SCHEMA);
  char magic[8] = {0};
  int fd = p ? open(p, O_RDONLY) : -1;
  int ok = fd >= 0 && read_all_at(fd, magic, 8, 0) == 0 && memcmp(magic, TSR__LOG_MAGIC, 8) == 0;
  if (fd >= 0) close(fd);
  free(p);
  return ok;
}

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  if (bf->fd_log >= 0) close(bf->fd_log);
  if (bf->fd_idx >= 0) close(bf->fd_idx);
  for (int i = 0; i < bf->nlogs; i++)
    if (bf->fds[i] >= 0) close(bf->fds[i]);
  free(bf->fds);
  free(bf->ents);
  free(bf->ent_log);
  free(bf->vars);
  free(bf->dir);
  free(bf);
}

static tsr__bfile *new_file(const char *dir) {
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf) return NULL;
  bf->fd_log = bf->fd_idx = -1;
  bf->dir = strdup(dir);
  if (!bf->dir) free(bf), bf = NULL;
  return bf;
}

static void writer_names(const char *dir, int rank, char **log, char **idx) {
  char n[32];
  snprintf(n, sizeof n, "%06d.log", rank);
  *log = join(dir, n);
  snprintf(n, sizeof n, "%06d.idx", rank);
  *idx = join(dir, n);
}

/* Collective over @p comm (every writer of the file): rank 0 makes the
 * directory @p dir and writes the schema record naming @p target; every rank
 * opens its own log and index. */
static int open_writer(MPI_Comm comm, const char *dir, const tsr__schema *s, const tsr__hints *h,
                       const char *target, tsr__bfile **out, tsr__berr *err) {
  int me = 0, rc = 0;
  *out = NULL;
  MPI_Comm_rank(comm, &me);
  if (me == 0) {
    /* A new directory, never a stale one or a link to one: the writers'
     * files in it are then ours alone (tier/safe_names.h). */
    if (tsr__name_mkdir(dir, 0755) != 0) rc = os_fail(err, errno, "cannot make", dir);
    if (!rc) rc = write_schema(dir, s, h, target, err);
  }
  /* The directory exists before anyone opens a log in it; rank 0's failure
   * travels with the same reduction, so nobody goes on alone. */
  int any = rc;
  if (MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return TSR_EMPI;
  if (any) return rc ? rc : any;
  tsr__bfile *bf = new_file(dir);
  char *log = NULL, *idx = NULL;
  if (bf) writer_names(dir, me, &log, &idx);
  if (!bf || !log || !idx) rc = TSR_ENOMEM;
  if (!rc) rc = tsr__bvars_from_schema(s, &bf->vars);
  if (!rc) {
    bf->nvars = s->nvars;
    bf->rank = me;
    bf->fd_log = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (bf->fd_log < 0) rc = os_fail(err, errno, "cannot create", log);
  }
  if (!rc) {
    bf->fd_idx = open(idx, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (bf->fd_idx < 0) rc = os_fail(err, errno, "cannot create", idx);
  }
  free(log);
  free(idx);
  if (rc) free_file(bf);
  else *out = bf;
  return rc;
}

static int tsr__log_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                           const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  (void)comm, (void)s, (void)h, (void)out;
  if (err) snprintf(err->message, sizeof err->message,
                    "log: %s: a log is written only into a stage (stage_format=log)", path);
  return TSR_EHINT;
}

/* A log stands for the backend that will write the file from it. */
static int tsr__log_create_over(const tsr__backend_ops *below, MPI_Comm comm, const char *path,
                                const tsr__schema *s, const tsr__hints *h, tsr__bfile **out,
                                tsr__berr *err) {
  return open_writer(comm, path, s, h, below->name, out, err);
}

static int tsr__log_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                                const int64_t count[], const void *buf, tsr__memview mem,
                                tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, "log",
                            bf->dir, &v, err);
  if (rc) return rc;
  tsr__log_entry e;
  memset(&e, 0, sizeof e);
  e.varid = varid;
  e.nd = v->nd;
  e.frame = v->is_record ? frame : 0;
  e.offset = bf->off;
  e.bytes = tsr__block_elems(v->nd, count) * (int64_t)v->esize;
  for (int i = 0; i < v->nd; i++) e.start[i] = start[i], e.count[i] = count[i];
  const void *data = buf;
  void *packed = NULL;
  if (mem.mshape) { /* the block sits inside a larger array: the log holds it packed */
    packed = malloc((size_t)e.bytes);
    if (!packed) return TSR_ENOMEM;
    tsr__block_pack(packed, buf, v->esize, v->nd, count, mem);
    data = packed;
  }
  if (tsr__write_full(bf->fd_log, data, (size_t)e.bytes) != 0)
    rc = os_fail(err, errno, "cannot append to", bf->dir);
  else if (tsr__write_full(bf->fd_idx, &e, sizeof e) != 0)
    rc = os_fail(err, errno, "cannot index", bf->dir);
  else bf->off += e.bytes;
  free(packed);
  return rc;
}

static int tsr__log_flush(tsr__bfile *bf, tsr__berr *err) {
  (void)bf, (void)err; /* every block is in the log when write_block returns */
  return 0;
}

static int tsr__log_close(tsr__bfile *bf, tsr__berr *err) {
  int rc = 0;
  if (bf->fd_log >= 0 && close(bf->fd_log) != 0) rc = os_fail(err, errno, "cannot close", bf->dir);
  if (bf->fd_idx >= 0 && close(bf->fd_idx) != 0 && !rc)
    rc = os_fail(err, errno, "cannot close", bf->dir);
  bf->fd_log = bf->fd_idx = -1;
  free_file(bf);
  return rc;
}

/* Each writer removes its own log and index; the schema goes with rank 0;
 * whoever comes last removes the directory. */
static void tsr__log_abort(tsr__bfile *bf, const char *path) {
  char *log = NULL, *idx = NULL;
  writer_names(bf->dir, bf->rank, &log, &idx);
  if (log) unlink(log);
  if (idx) unlink(idx);
  if (bf->rank == 0) {
    char *s = join(bf->dir, TSR__LOG_SCHEMA);
    if (s) unlink(s);
    free(s);
  }
  rmdir(path ? path : bf->dir);
  free(log);
  free(idx);
  free_file(bf);
}

/* ---- reading ---- */

/* Load every writer's index (NNNNNN.idx, in writer order). */
static int load_index(tsr__bfile *bf, tsr__berr *err) {
  for (int w = 0;; w++) {
    char *log = NULL, *idx = NULL;
    writer_names(bf->dir, w, &log, &idx);
    if (!log || !idx) return free(log), free(idx), TSR_ENOMEM;
    int fi = open(idx, O_RDONLY), fl = fi >= 0 ? open(log, O_RDONLY) : -1;
    int e = errno;
    free(log);
    if (fi < 0) return free(idx), 0; /* writers are numbered 0.. without gaps */
    struct stat sb;
    int rc = 0;
    if (fl < 0 || fstat(fi, &sb) != 0) rc = os_fail(err, fl < 0 ? e : errno, "cannot open", idx);
    int n = rc ? 0 : (int)(sb.st_size / (off_t)sizeof(tsr__log_entry));
    int *fds = rc ? NULL : realloc(bf->fds, (size_t)(bf->nlogs + 1) * sizeof *fds);
    if (fds) bf->fds = fds, bf->fds[bf->nlogs++] = fl, fl = -1;
    size_t room = (size_t)(bf->nents + n + 1);
    tsr__log_entry *ents = fds ? realloc(bf->ents, room * sizeof *ents) : NULL;
    if (ents) bf->ents = ents;
    int *el = ents ? realloc(bf->ent_log, room * sizeof *el) : NULL;
    if (el) bf->ent_log = el;
    if (!rc && !el) rc = TSR_ENOMEM;
    if (!rc && n > 0 && read_all_at(fi, bf->ents + bf->nents, (size_t)n * sizeof *ents, 0))
      rc = os_fail(err, errno, "cannot read", idx);
    for (int i = 0; !rc && i < n; i++) bf->ent_log[bf->nents + i] = bf->nlogs - 1;
    if (!rc) bf->nents += n;
    close(fi);
    if (fl >= 0) close(fl);
    free(idx);
    if (rc) return rc;
  }
}

static int tsr__log_open(MPI_Comm comm, const char *path, const tsr__hints *h,
                         tsr__schema *schema_out, tsr__bfile **out, tsr__berr *err) {
  (void)comm, (void)h;
  *out = NULL;
  tsr__hints stored;
  char target[TSR__NAME_MAX];
  tsr__schema_init(schema_out);
  tsr__bfile *bf = new_file(path);
  if (!bf) return TSR_ENOMEM;
  int rc = read_schema(path, target, &stored, schema_out, err);
  if (!rc) rc = tsr__bvars_from_schema(schema_out, &bf->vars);
  if (!rc) bf->nvars = schema_out->nvars, rc = load_index(bf, err);
  for (int i = 0; !rc && i < bf->nents; i++) {
    const tsr__log_entry *e = &bf->ents[i];
    if (e->varid < 0 || e->varid >= bf->nvars) rc = TSR_EFORMAT;
    else if (bf->vars[e->varid].is_record && e->frame + 1 > bf->nrecs) bf->nrecs = e->frame + 1;
  }
  if (rc) {
    free_file(bf);
    return rc;
  }
  bf->schema = schema_out;
  *out = bf;
  return 0;
}

/* Copy the part of log entry @p e that falls inside the request (start,
 * count) into @p dst, the request's contiguous block: one pread per row of
 * the intersection along the fastest dimension. */
static int copy_overlap(const tsr__bfile *bf, int k, const int64_t start[], const int64_t count[],
                        char *dst, size_t es, tsr__berr *err) {
  const tsr__log_entry *e = &bf->ents[k];
  int nd = e->nd;
  int64_t lo[TSR_MAX_DIMS], hi[TSR_MAX_DIMS], at[TSR_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    lo[i] = start[i] > e->start[i] ? start[i] : e->start[i];
    int64_t a = start[i] + count[i], b = e->start[i] + e->count[i];
    hi[i] = a < b ? a : b;
    if (hi[i] <= lo[i]) return 0;
    at[i] = lo[i];
  }
  int64_t run = nd ? hi[nd - 1] - lo[nd - 1] : 1;
  for (;;) {
    int64_t src = 0, dof = 0;
    for (int i = 0; i < nd; i++) {
      src = src * e->count[i] + (at[i] - e->start[i]);
      dof = dof * count[i] + (at[i] - start[i]);
    }
    if (read_all_at(bf->fds[bf->ent_log[k]], dst + dof * (int64_t)es, (size_t)(run * (int64_t)es),
                    e->offset + src * (int64_t)es))
      return os_fail(err, errno, "cannot read", bf->dir);
    int i = nd - 2; /* next row: odometer over every dimension but the last */
    for (; i >= 0; i--) {
      if (++at[i] < hi[i]) break;
      at[i] = lo[i];
    }
    if (i < 0) return 0;
  }
}

static int tsr__log_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                               const int64_t count[], void *buf, tsr__memview mem,
                               tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, "log",
                            bf->dir, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  char *blk = mem.mshape ? malloc((size_t)(n * (int64_t)v->esize) + 1) : buf;
  if (!blk) return TSR_ENOMEM;
  /* Points no block covers read as the fill value, as in a NetCDF file. */
  char fill[8];
  tsr__var_fill(bf->schema, varid, fill);
  for (int64_t i = 0; i < n; i++) memcpy(blk + i * (int64_t)v->esize, fill, v->esize);
  for (int k = 0; !rc && k < bf->nents; k++) /* later blocks win, as later writes do */
    if (bf->ents[k].varid == varid && (!v->is_record || bf->ents[k].frame == frame))
      rc = copy_overlap(bf, k, start, count, blk, v->esize, err);
  if (mem.mshape) {
    if (!rc) tsr__block_unpack(buf, blk, v->esize, v->nd, count, mem);
    free(blk);
  }
  return rc;
}

static int64_t tsr__log_num_records(const tsr__bfile *bf) { return bf->nrecs; }

const tsr__backend_ops tsr__backend_log = {
    .version = TSR__BACKEND_VERSION,
    .name = "log",
    .parallel = 0,
    .create = tsr__log_create,
    .write_block = tsr__log_write_block,
    .flush = tsr__log_flush,
    .close = tsr__log_close,
    .abort = tsr__log_abort,
    .open = tsr__log_open,
    .read_block = tsr__log_read_block,
    .num_records = tsr__log_num_records,
    .create_over = tsr__log_create_over,
    .stacked = "stage_format=log",
    .unstacked = "stage_format=native",
};

/* ---- for the converter (backend/log_convert.c) ---- */

int tsr__log_open_stored(const char *dir, char target[TSR__NAME_MAX], tsr__hints *h,
                         tsr__schema *s, tsr__bfile **out, tsr__berr *err) {
  int rc = tsr__log_open(MPI_COMM_SELF, dir, NULL, s, out, err);
  if (rc) return rc;
  tsr__schema tmp;
  tsr__schema_init(&tmp);
  rc = read_schema(dir, target, h, &tmp, err); /* the target and hints this time */
  tsr__schema_free(&tmp);
  if (rc) free_file(*out), *out = NULL;
  return rc;
}

int tsr__log_target(const char *dir, char target[TSR__NAME_MAX]) {
  tsr__hints h;
  tsr__schema s;
  tsr__schema_init(&s);
  int rc = read_schema(dir, target, &h, &s, NULL);
  tsr__schema_free(&s);
  return rc;
}

int tsr__log_count(const tsr__bfile *bf) { return bf->nents; }

const tsr__log_entry *tsr__log_entry_at(const tsr__bfile *bf, int k) { return &bf->ents[k]; }

int tsr__log_entry_data(const tsr__bfile *bf, int k, void *buf, tsr__berr *err) {
  const tsr__log_entry *e = &bf->ents[k];
  if (read_all_at(bf->fds[bf->ent_log[k]], buf, (size_t)e->bytes, e->offset))
    return os_fail(err, errno, "cannot read", bf->dir);
  return 0;
}
