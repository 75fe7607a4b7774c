/* Per-frame checksums of what a sink writes (hint checksum=crc32; docs/verify.md).
 *
 * What is summed: for each variable and frame, the CRC-32 (zlib's, the one
 * Python's zlib.crc32 computes) of the frame's values in the variable's type,
 * little-endian, in C order over the variable's whole shape: the bytes a
 * reader gets back, whatever the format stores or compresses. So the sum is
 * the same for every strategy, server layout and format that write the same
 * values, and `tessera verify` recomputes it from the values read back.
 *
 * Where: each writer sums the rows of the blocks it hands its backend, as it
 * hands them (the data are in memory there: nothing is read back), keeping
 * (offset, length, crc) runs in file order; at close the runs of every writer
 * of the file meet on the first one, which chains them with crc32_combine.
 * A (variable, frame) whose runs do not cover it exactly once (a frame some
 * variable was never written in) has no sum; the others are recorded in the
 * file (a text attribute per variable) and in the manifest beside it
 * (tier/manifest.h), when the file is committed. */
#ifndef TSR_BACKEND_SINK_CHECKSUM_H
#define TSR_BACKEND_SINK_CHECKSUM_H

#include <mpi.h>
#include <stdint.h>

#include "backend/backend.h"

/* The attribute each summed variable gets: one 8-digit hex CRC-32 per frame,
 * separated by spaces, "-" for a frame without a sum (fixed variables: one). */
#define TSR__CHECKSUM_ATT "tessera_crc32"

typedef struct tsr__sums tsr__sums;

/* A new, empty set of runs (NULL when out of memory). */
tsr__sums *tsr__sums_new(void);
void tsr__sums_free(tsr__sums *s);

/* Sum the block of @p varid at @p frame (start/count over the non-record
 * dimensions) that sits in @p buf as @p mem describes (backend.h). */
int tsr__sums_add(tsr__sums *s, const tsr__schema *schema, int varid, int64_t frame,
                  const int64_t start[], const int64_t count[], const void *buf, tsr__memview mem);

/* What the writers of one file summed, chained. */
typedef struct {
  char **att;     /* per variable: the attribute text, NULL for one never written */
  char *manifest; /* the manifest lines (one JSON object per frame), on the first writer only */
} tsr__sums_result;

/* Collective over @p comm (the file's writers): chain every writer's runs on
 * rank 0 and hand the attribute texts to every rank (a parallel backend puts
 * attributes collectively). @p name is the file's name as the manifest gives
 * it (beside the manifest: no directory). */
int tsr__sums_finish(tsr__sums *s, MPI_Comm comm, const tsr__schema *schema, const char *name,
                     tsr__sums_result *out);
void tsr__sums_result_free(tsr__sums_result *r, int nvars);

/* A classic file's header cannot grow after create without moving the data
 * behind it, but an attribute may be overwritten in data mode by one no
 * longer. So classic backends define each variable's attribute at create
 * with this placeholder (dashes, as long as @p frames sums: the hint
 * frames_per_outfile, one for a fixed variable), and annotate pads the sums
 * to its length (tsr__sums_fit). malloc'd, NULL when out of memory. */
char *tsr__sums_placeholder(const tsr__schema *schema, int varid, int frames);
/* @p text padded with spaces to @p len (the placeholder's) in @p out (len+1
 * bytes); 0 when it does not fit (more frames than the placeholder has). */
int tsr__sums_fit(const char *text, size_t len, char *out);

#endif
