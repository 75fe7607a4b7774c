/* Null backend: accepts every block and discards it, creates no file and
 * never fails. It measures Tessera's data movement (gathers, exchanges,
 * server shipping) without any file system in the way (through a sink it
 * leaves an empty file, so that the file appears as every file does). With the hint
 * null_delay_ms=N it sleeps N ms per block: a slow file system, so tests can
 * make writers (I/O servers) fall behind without a slow disk. */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <string.h>

#include "backend/backend.h"
#include "backend/sink.h" /* TSR__TMP_SUFFIX */
#include "core/hints.h"
#include "tier/safe_names.h"

/* Handles are shared and stateless, one per delay in use: there is nothing
 * per file to keep, and not allocating means create cannot fail. */
struct tsr__bfile {
  int delay_ms;
};
static tsr__bfile null_file;

static int tsr__null_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                            const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  (void)s;
  (void)err;
  /* The sink commits a file by renaming its temporary into place, which
   * needs a file: when created through a sink (the temporary's name), leave
   * an empty one; called directly, create nothing, as always. */
  int me = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &me);
  size_t n = path ? strlen(path) : 0, ns = strlen(TSR__TMP_SUFFIX);
  if (me == 0 && n > ns && strcmp(path + n - ns, TSR__TMP_SUFFIX) == 0) {
    int fd = tsr__name_create(path, O_WRONLY, 0644); /* never through a link */
    if (fd >= 0) close(fd);
  }
  enum { NSLOW = 8 };
  static tsr__bfile slow[NSLOW]; /* delays seen in this process, each its own handle */
  *out = &null_file;
  if (!h || h->null_delay_ms <= 0) return 0;
  for (int i = 0; i < NSLOW; i++)
    if (slow[i].delay_ms == h->null_delay_ms || slow[i].delay_ms == 0) {
      slow[i].delay_ms = h->null_delay_ms;
      *out = &slow[i];
      return 0;
    }
  *out = &slow[NSLOW - 1]; /* more distinct delays than slots: the last slot's */
  return 0;
}

static int tsr__null_write_block(tsr__bfile *bf, int varid, int64_t frame,
                                 const int64_t start[], const int64_t count[], const void *buf,
                                 tsr__memview mem, tsr__berr *err) {
  (void)varid;
  (void)frame;
  (void)start;
  (void)count;
  (void)buf;
  (void)mem;
  (void)err;
  if (bf->delay_ms > 0) {
    struct timespec ts = {bf->delay_ms / 1000, (long)(bf->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  return 0;
}

static int64_t tsr__null_pending_bytes(const tsr__bfile *bf) {
  (void)bf;
  return 0;
}

static int tsr__null_flush(tsr__bfile *bf, tsr__berr *err) {
  (void)bf;
  (void)err;
  return 0;
}

static int tsr__null_close(tsr__bfile *bf, tsr__berr *err) {
  (void)bf;
  (void)err;
  return 0;
}

static void tsr__null_abort(tsr__bfile *bf, const char *path) {
  (void)bf;
  (void)path;
}

/* parallel = 1 so that strategies call it from every writer rank, as they
 * would call PnetCDF: the data movement measured is the parallel one. */
const tsr__backend_ops tsr__backend_null = {
    .version = TSR__BACKEND_VERSION,
    .name = "null",
    .parallel = 1,
    .create = tsr__null_create,
    .write_block = tsr__null_write_block,
    .pending_bytes = tsr__null_pending_bytes,
    .flush = tsr__null_flush,
    .close = tsr__null_close,
    .abort = tsr__null_abort,
    .file_info = NULL,
    .block_offset = NULL,
};
