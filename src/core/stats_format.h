/* The reduced statistics of one file and its two printed forms: the text
 * block of TESSERA_STATS=1 and the JSON line of TESSERA_STATS_FILE
 * (docs/stats-format.md, docs/stats.schema.json). */
#ifndef TSR_CORE_STATS_FORMAT_H
#define TSR_CORE_STATS_FORMAT_H

#include <stdint.h>
#include <stdio.h>

#include "core/auto_rule.h"
#include "core/stats.h"

typedef struct {
  const char *file, *strategy, *backend, *hints;
  int model_ranks, io_ranks, writers;
  const int *writer_ranks; /* writers entries, or NULL when unknown */
  int64_t bytes, frames, variables;
  double blocked[3], writer[3]; /* min, max, mean */
  double first_put_to_close;
  int64_t rearranged;
  double peak[3];          /* model ranks' peak buffer bytes: min, max, mean */
  int reduce_valid;        /* the file feeds a reduce= stream */
  double reduce[3];        /* model ranks' reduce= accumulator bytes: min, max, mean */
  int io_valid;            /* writer side measured on I/O servers */
  int uses_mpiio;          /* the backend writes through MPI-IO (reports MPI_Info) */
  double io_peak[3];       /* the servers' peak buffer bytes */
  int64_t writes, bytes_written, hist[TSR__NBUCKETS], not_aligned, consec, alignment;
  int64_t offsets_known;   /* requests with a known file offset */
  int64_t mpiio[TSR__NMPIIO]; /* -1 unknown */
  const char *not_taken;   /* "key=value, ..." the MPI library did not take, or "" */
  const tsr__auto_record *autor; /* strategy=auto's decision for the file, or NULL */
} tsr__stats_summary;

/* The JSON record as one newline-terminated line (malloc'd; NULL on ENOMEM). */
char *tsr__stats_json(const tsr__stats_summary *s);
/* The text block of TESSERA_STATS=1. */
void tsr__stats_text(const tsr__stats_summary *s, FILE *out);

/* A growable string (also used by the hint display). */
typedef struct {
  char *s;
  size_t len, cap;
  int failed;
} tsr__sbuf;
void tsr__sbuf_printf(tsr__sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Append @p text as a JSON string literal, quotes included. */
void tsr__sbuf_json_string(tsr__sbuf *b, const char *text);

#endif
