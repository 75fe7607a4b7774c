/* Converting a log into the file it stands for (contract in backend/log.h).
 * Runs in the tessera-convert process, never in a drain thread: it calls the
 * target backend, and NetCDF/HDF5 are not thread-safe. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/log.h"
#include "backend/sink.h"
#include "tessera.h"
#include "tier/stage.h"

/* The replay: the blocks in the order the writers wrote them, through the
 * backend the native path would have used, with the same hints, on one
 * process. The target then lays out header and data exactly as it would
 * have: its layout depends on the schema and the hints, not on who wrote. */
static int replay(tsr__bfile *log, const tsr__backend_ops *ops, const tsr__schema *s,
                  const tsr__hints *h, const char *tmp, char *buf, tsr__berr *err) {
  tsr__bfile *bf = NULL;
  int rc = ops->create(MPI_COMM_SELF, tmp, s, h, &bf, err);
  for (int k = 0; !rc && k < tsr__log_count(log); k++) {
    const tsr__log_entry *e = tsr__log_entry_at(log, k);
    rc = tsr__log_entry_data(log, k, buf, err);
    if (!rc)
      rc = ops->write_block(bf, e->varid, e->frame, e->start, e->count, buf, (tsr__memview){0}, err);
    if (!rc && ops->pending_bytes && ops->pending_bytes(bf) > h->buffer_bytes)
      rc = ops->flush(bf, err);
  }
  if (bf && rc) ops->abort(bf, tmp);
  else if (bf) rc = ops->close(bf, err);
  return rc;
}

static int quantized(const tsr__schema *s, const tsr__hints *h, int varid) {
  const tsr__var *v = &s->vars[varid];
  int mode = v->quantize_set ? v->quantize_mode : h->quantize.mode;
  return mode != TSR__QUANTIZE_NONE && (v->type == TSR_FLOAT || v->type == TSR_DOUBLE);
}

/* Read every block back through the target's reader and compare it with the
 * log: a conversion verifies like a copy does, against its source. */
static int verify(tsr__bfile *log, const tsr__backend_ops *ops, const tsr__schema *s,
                  const tsr__hints *h, const char *tmp, char *buf, char *back, tsr__berr *err) {
  if (!ops->open) return 0; /* a write-only target (grib2): synced, not read back */
  /* PnetCDF cannot open a path with ':' (WRF's file names have them): then
   * the reader the registry picks for that path, as tsr_open would. */
  if (ops->can_open && !ops->can_open(tmp)) {
    const tsr__backend_ops *other = NULL;
    const char *name = tsr__backend_default_read(tmp);
    if (!name || tsr__backend_find(name, &other) || !other->open) return 0;
    ops = other;
  }
  tsr__schema rs;
  tsr__bfile *bf = NULL;
  int rc = ops->open(MPI_COMM_SELF, tmp, h, &rs, &bf, err);
  for (int k = 0; !rc && k < tsr__log_count(log); k++) {
    const tsr__log_entry *e = tsr__log_entry_at(log, k);
    rc = tsr__log_entry_data(log, k, buf, err);
    if (!rc)
      rc = ops->read_block(bf, e->varid, e->frame, e->start, e->count, back, (tsr__memview){0}, err);
    if (!rc && !quantized(s, h, e->varid) && memcmp(buf, back, (size_t)e->bytes) != 0) {
      snprintf(err->message, sizeof err->message,
               "convert: block %d of variable %.64s (frame %lld) reads back different", k,
               s->vars[e->varid].name, (long long)e->frame);
      rc = TSR_EIO;
    }
  }
  if (bf) ops->close(bf, err);
  if (bf || !rc) tsr__schema_free(&rs);
  return rc;
}

int tsr__log_convert(const char *dir, const char *final, char *msg, size_t msglen) {
  char target[TSR__NAME_MAX];
  tsr__hints h;
  tsr__schema s;
  tsr__bfile *log = NULL;
  tsr__berr err = {0, ""};
  const tsr__backend_ops *ops = NULL;
  char *buf = NULL, *back = NULL, *tmp = NULL;
  int rc = tsr__log_open_stored(dir, target, &h, &s, &log, &err);
  if (rc) {
    snprintf(msg, msglen, "convert: %s: %s", dir, err.message[0] ? err.message : tsr_strerror(rc));
    return rc;
  }
  rc = tsr__backend_find(target, &ops);
  if (rc) snprintf(err.message, sizeof err.message, "backend '%s' of the log is not built", target);
  int64_t most = 1;
  for (int k = 0; k < tsr__log_count(log); k++)
    if (tsr__log_entry_at(log, k)->bytes > most) most = tsr__log_entry_at(log, k)->bytes;
  size_t n = strlen(final) + sizeof TSR__TMP_SUFFIX;
  buf = malloc((size_t)most);
  back = malloc((size_t)most);
  tmp = malloc(n);
  if (!rc && (!buf || !back || !tmp)) rc = TSR_ENOMEM;
  if (!rc) {
    snprintf(tmp, n, "%s%s", final, TSR__TMP_SUFFIX);
    rc = replay(log, ops, &s, &h, tmp, buf, &err);
  }
  if (!rc) { /* on disk before it takes the final name: the log may go next */
    int fd = open(tmp, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) {
      snprintf(err.message, sizeof err.message, "cannot sync %s", tmp);
      rc = TSR_EIO;
    }
    if (fd >= 0) close(fd);
  }
  if (!rc) rc = verify(log, ops, &s, &h, tmp, buf, back, &err);
  if (!rc) {
    /* A staged log (it has a marker) never replaces a newer file; a log
     * converted by hand to a path of the user's choice simply replaces it. */
    int oserr = 0;
    struct timespec made;
    rc = tsr__stage_made(dir, &made) == 1
             ? tsr__promote_made(tmp, final, &made, &oserr, err.message, sizeof err.message)
             : tsr__promote(tmp, final, &oserr, err.message, sizeof err.message);
  } else if (tmp) {
    unlink(tmp); /* a failed conversion never stays; the log always does */
  }
  if (rc)
    snprintf(msg, msglen, "convert: %s -> %s: %s", dir, final,
             err.message[0] ? err.message : tsr_strerror(rc));
  tsr__backend_log.close(log, &err);
  tsr__schema_free(&s);
  free(buf);
  free(back);
  free(tmp);
  return rc;
}
