/* Null backend: accepts every block and discards it, creates no file and
 * never fails. It measures Tessera's data movement (gathers, exchanges,
 * server shipping) without any file system in the way. */
#include "backend/backend.h"

/* One shared, stateless handle: there is nothing per file to keep, and not
 * allocating means create cannot fail. */
struct tsr__bfile {
  int unused;
};
static tsr__bfile null_file;

static int null_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                       const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  (void)comm;
  (void)path;
  (void)s;
  (void)h;
  (void)err;
  *out = &null_file;
  return 0;
}

static int null_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                            const int64_t count[], const void *buf, tsr__memview mem,
                            tsr__berr *err) {
  (void)bf;
  (void)varid;
  (void)frame;
  (void)start;
  (void)count;
  (void)buf;
  (void)mem;
  (void)err;
  return 0;
}

static int64_t null_pending_bytes(const tsr__bfile *bf) {
  (void)bf;
  return 0;
}

static int null_flush(tsr__bfile *bf, tsr__berr *err) {
  (void)bf;
  (void)err;
  return 0;
}

static int null_close(tsr__bfile *bf, tsr__berr *err) {
  (void)bf;
  (void)err;
  return 0;
}

static void null_abort(tsr__bfile *bf, const char *path) {
  (void)bf;
  (void)path;
}

/* parallel = 1 so that strategies call it from every writer rank, as they
 * would call PnetCDF: the data movement measured is the parallel one. */
const tsr__backend_ops tsr__backend_null = {
    .version = TSR__BACKEND_VERSION,
    .name = "null",
    .parallel = 1,
    .create = null_create,
    .write_block = null_write_block,
    .pending_bytes = null_pending_bytes,
    .flush = null_flush,
    .close = null_close,
    .abort = null_abort,
    .file_info = NULL,
    .block_offset = NULL,
};
