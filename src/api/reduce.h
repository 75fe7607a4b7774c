/* reduce=: time statistics of a stream's variables, accumulated on the
 * model ranks over each rank's own tile as tsr_put hands the data over, and
 * written to a derived file when a period completes (docs/reductions.md).
 * The API layer calls these; no strategy knows about them. */
#ifndef TSR_CORE_REDUCE_H
#define TSR_CORE_REDUCE_H

#include "api/api.h"

struct tsr__rstream; /* one stream's accumulators (core/reduce.c) */

/* tsr_enddef of a file with reduce=: check the items against the schema
 * (variable present, numeric, with a record dimension) and find
 * or start the file's stream, loading a partial period a previous job saved
 * (core/reduce_partial.c). Collective: returns an agreed code, the sentence
 * in f->berr. */
int tsr__reduce_enddef(tsr_file *f);

/* Before a put's agreement: this rank's checks of the put of @p varid at
 * @p frame through the canonical decomposition @p vd (accumulators
 * allocated on the first put, within the memory this process may have;
 * frames in order; the period not yet full). Local; the sentence in f->berr. */
int tsr__reduce_put_check(tsr_file *f, int varid, int64_t frame, const tsr_decomp *vd);

/* After the agreed put: fold this rank's tile of @p frame in. @p d is
 * the caller's decomposition, @p vd its canon (or d), @p vbuf the data laid
 * out as vd describes or NULL when they still need packing from @p buf;
 * @p memtype the type of the values in memory. Local, cannot fail. */
void tsr__reduce_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                     const tsr_decomp *vd, const void *vbuf, const void *buf, tsr_type memtype);

/* After the put's agreement, before the strategy's put: f->rput says where
 * this put stands in its stream, for a strategy whose writers fold
 * (strategy.h, reduce_put). Local. */
void tsr__reduce_tag(tsr_file *f, int varid);

/* tsr_put_global of the stream's Times: keep the frame's text for the
 * derived file. Local. */
void tsr__reduce_put_global(tsr_file *f, int varid, const void *buf);

/* tsr_close of a source file (@p ok: it reached its final name): write the
 * derived file of a period that ends with it. Collective; an agreed code.
 * With @p ok 0 (a failed close, tsr_abort) the period the file belongs to
 * is dropped, locally, since its statistics would cover frames that no
 * file holds. */
int tsr__reduce_close(tsr_file *f, int ok);

/* tsr_finalize: save every incomplete period beside its derived file, then
 * free the streams. Collective; an agreed code, the sentence in @p msg. */
int tsr__reduce_finalize(tsr_ctx *ctx, char *msg, size_t msglen);

#endif
