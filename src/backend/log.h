/* The binary log layout of a staged file (stage_format=log, docs/staging.md).
 *
 * Instead of the backend writing a NetCDF file into the stage, every writer
 * rank appends the blocks it would have written to its own log and one
 * fixed-size index entry per block (no header rewrites, no seeks); the
 * file's schema, the hints and the name of the backend that would have
 * written it are stored once. The staged "file" is then a directory:
 *
 *   <staged>/schema        magic, target backend, hints, packed schema
 *   <staged>/NNNNNN.log    writer NNNNNN's block data, in write order
 *   <staged>/NNNNNN.idx    one tsr__log_entry per block of that log
 *
 * The drain hands the directory to the tessera-convert program, which
 * replays the blocks through the target backend into the final path (a
 * process of its own: NetCDF and HDF5 are not thread-safe, and the drain is
 * a thread next to a model that may be calling them). tsr_open reads a log
 * directory directly (the "log" row of the backend registry). */
#ifndef TSR_BACKEND_LOG_H
#define TSR_BACKEND_LOG_H

#include <mpi.h>

#include "backend/backend.h"

#define TSR__LOG_MAGIC "TSRLOG01"
#define TSR__LOG_SCHEMA "schema"
/* The registry's format number of a log directory: no NetCDF number, nor
 * grib2's 16 or zarr's 17 (a log and a store are both directories; the
 * registry told them apart by this number, and 17 once sent stores here). */
#define TSR__LOG_FORMAT 30

/* One block in a log; 160 bytes, the same on every platform Tessera builds on. */
typedef struct {
  int32_t varid;
  int32_t nd; /* non-record dimensions */
  int64_t frame;
  int64_t offset; /* in the writer's .log */
  int64_t bytes;
  int64_t start[TSR_MAX_DIMS];
  int64_t count[TSR_MAX_DIMS];
} tsr__log_entry;

/* Reading and writing ops of a log, a layout stacked over the file's backend:
 * writing starts with create_over, which records that backend (the ops' own
 * create refuses). The registry stacks it (tsr__backend_stack). */
extern const tsr__backend_ops tsr__backend_log;

/* 1 when @p path is a log directory (it holds a schema record with the magic). */
int tsr__log_is_log(const char *path);

/* In the converter's process: write the log @p dir into `<final>.tessera-tmp`
 * with the backend and hints the log records, sync it, read every block back
 * through that backend and compare it with the log (quantized variables,
 * which the backend changes on purpose, are compared by their presence
 * only), then rename it to @p final. The log is left as it is. Returns 0 or
 * TSR_E* with a message in @p msg. */
int tsr__log_convert(const char *dir, const char *final, char *msg, size_t msglen);

/* For the converter: open a log with the target backend's name and the
 * hints it was written with; its entries in replay order (writer by writer,
 * each in write order) and the bytes of entry @p k. Closed with the ops'
 * close. */
int tsr__log_open_stored(const char *dir, char target[TSR__NAME_MAX], tsr__hints *h,
                         tsr__schema *s, tsr__bfile **out, tsr__berr *err);
int tsr__log_count(const tsr__bfile *bf);
/* The name of the backend a log stands for (0 or TSR_E*). */
int tsr__log_target(const char *dir, char target[TSR__NAME_MAX]);
const tsr__log_entry *tsr__log_entry_at(const tsr__bfile *bf, int k);
int tsr__log_entry_data(const tsr__bfile *bf, int k, void *buf, tsr__berr *err);

#endif
