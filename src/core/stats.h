/* Per-file I/O statistics (docs/stats-format.md): counted on every rank while
 * the file is open, reduced and reported at tsr_close when TESSERA_STATS or
 * TESSERA_STATS_FILE is set. */
#ifndef TSR_CORE_STATS_H
#define TSR_CORE_STATS_H

#include <stdint.h>

#define TSR__NBUCKETS 10 /* Darshan's size buckets: 0-100, 100-1K, ..., 1G+ */

typedef struct {
  double blocked_s;      /* time in Tessera calls on this file (model ranks) */
  double writer_s;       /* time in backend write/flush/close on this rank */
  double first_put;      /* MPI_Wtime of the first put, 0 before */
  double closed_at;      /* MPI_Wtime when the close finished */
  int64_t bytes_put;     /* data bytes this rank put */
  int64_t writes;        /* requests this rank issued to the backend */
  int64_t bytes_written; /* bytes in those requests */
  int64_t size_hist[TSR__NBUCKETS];
  int64_t not_aligned;   /* requests not starting on an alignment boundary */
  int64_t consec;        /* requests starting where the previous one ended */
  int64_t last_end;      /* file offset after the previous request, -1 unknown */
  int64_t alignment;     /* stripe size used for the alignment count */
  int64_t rearranged_bytes; /* bytes this rank sent to other ranks */
  int64_t peak_buffer;   /* most bytes held for pending data on this rank */
  int64_t frames;        /* highest frame put + 1 */
  int is_writer;
} tsr__fstats;

struct tsr_file;
void tsr__fstats_init(tsr__fstats *s, int64_t alignment);
int tsr__size_bucket(int64_t bytes);
/* Count one backend request of @p bytes at file offset @p offset (-1: unknown). */
void tsr__fstats_request(tsr__fstats *s, int64_t bytes, int64_t offset);
void tsr__fstats_buffer(tsr__fstats *s, int64_t bytes_held);
/* Collective over the file's communicator: reduce and report (stdout on rank 0
 * with TESSERA_STATS=1; one JSON line appended with TESSERA_STATS_FILE). */
int tsr__stats_report(struct tsr_file *f);

#endif
