/* What the MPI-IO layer holds for an open file (its MPI_Info), read once
 * here for the hint display, the statistics of model-rank writers and those
 * of the servers.
 *
 * Which pass-through hints the MPI library did not take: the value it holds
 * for the open file differs from the value given, or it holds none. ROMIO drops striping keys on file systems that do not stripe and
 * OMPIO ignores romio_* keys, without a word; Tessera says so in the
 * statistics and under TESSERA_HINTS_DISPLAY (docs/statistics.md). */
#ifndef TSR_CORE_MPIIO_TAKEN_H
#define TSR_CORE_MPIIO_TAKEN_H

#include <mpi.h>
#include <stdint.h>

#include "core/hints.h"
#include "core/stats_format.h"

/* 1 and @p key's value in @p out when @p info holds it in fewer than
 * @p outlen bytes; 0 when it holds none; -1 when it holds one too long for
 * @p out (then "" in @p out). */
int tsr__info_get(MPI_Info info, const char *key, char *out, int outlen);
/* The numeric MPI-IO hints of tsr__mpiio_keys that @p info holds, as sizes;
 * -1 for each it does not hold (or not as a size). */
void tsr__mpiio_record(MPI_Info info, int64_t out[]);

/* Bit i set: h->pass[i] was not taken. @p why, when not NULL, gets
 * "key=given (holds held)" or "key=given (holds nothing)" for each, joined
 * by ", ". Numeric values compare as sizes, others case-insensitively. */
uint32_t tsr__mpiio_not_taken(const tsr__hints *h, MPI_Info info, tsr__sbuf *why);

/* "key=given, key=given" of the bits of @p mask (the given values, which
 * every rank knows), into @p b. */
void tsr__mpiio_not_taken_list(const tsr__hints *h, uint32_t mask, tsr__sbuf *b);

#endif
