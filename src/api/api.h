/* What the API files (src/api) share among themselves: handles made, freed
 * and checked, the reader's side of a file, the exclusive-output lock. No
 * layer below includes this; they see the handles through handle/handles.h. */
#ifndef TSR_API_API_H
#define TSR_API_API_H

#include "handle/handles.h"

/* Does decomposition @p d describe the non-record shape of variable @p varid
 * (and belong to the file's context)? The one shape check of tsr_put/tsr_get. */
int tsr__shape_matches(const tsr_file *f, int varid, const tsr_decomp *d);
/* Wait until the dedicated ranks (if any) finished every file closed so
 * far; collective over the model ranks; an agreed code. */
int tsr__ctx_settle(tsr_ctx *ctx);
/* A new file handle for tsr_create / tsr_open: path copied, schema empty,
 * hints resolved (tsr_init's, then @p hints, then TESSERA_HINTS for @p path).
 * *out is set whenever the handle could be allocated, also when the status is
 * an error, so the caller can agree on it through the handle; the message goes
 * into f->berr. Frees nothing on error: see tsr__file_free. */
int tsr__file_new(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **out);
/* Free a handle and what it owns (schema, path, reader); accepts NULL. */
void tsr__file_free(tsr_file *f);
/* tsr_enddef's work (file.c): agree on the define log, let the strategy lay
 * the file out; on failure the strategy has released what it made. Also
 * tsr_close's, for a file closed in define mode. */
int tsr__file_end_define(tsr_file *f);
/* tsr_create with hints already resolved (@p h replaces what the texts
 * give): the derived files of reduce= take their source file's hints. */
int tsr__create_with(tsr_ctx *ctx, const char *path, const tsr__hints *h, tsr_file **out);

/* The end of a handle (api/file_end.c). tsr__file_end: tsr_close's work
 * short of freeing (a file in define mode gets its schema, a written one is
 * completed and renamed, or removed after a failure); an agreed code.
 * tsr__file_release: the time, the statistics and the handle itself, with
 * @p rc's message for tsr_last_error; returns @p rc. tsr__file_close and
 * tsr__file_abort: tsr_close and tsr_abort without reduce= (what the
 * derived files of reduce= close with). */
int tsr__file_end(tsr_file *f);
int tsr__file_release(tsr_file **pf, double t0, int closed, int rc);
int tsr__file_close(tsr_file **pf);
int tsr__file_abort(tsr_file **pf);

/* Close the backend file of a file opened for reading and free the reader
 * (collective for parallel backends); tsr_close frees the rest. */
int tsr__reader_close(tsr_file *f);
/* Records (length of the record dimension) of a file opened for reading. */
int64_t tsr__reader_records(const tsr_file *f);
/* The read strategy tsr_open's hints named ("" without one). */
const char *tsr__reader_strategy(const tsr_file *f);
/* The read side tsr_open chose (its strategy row's, strategy/strategy.h),
 * or NULL for a file open for writing: for tests. */
const struct tsr__read_ops *tsr__reader_ops(const tsr_file *f);

/* Exclusive output (api/file_lock.c): take the lock of @p path, or
 * TSR_EBUSY (message in @p msg) while another process holds it. */
int tsr__lock_take(const char *path, int *fd, char *msg, size_t msglen);
/* Drop the lock and its file; accepts *fd == -1. */
void tsr__lock_release(const char *path, int *fd);

#endif
