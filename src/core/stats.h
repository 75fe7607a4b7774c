/* Per-file I/O statistics (docs/stats-format.md): counted on every rank while
 * the file is open, reduced and reported at tsr_close when TESSERA_STATS or
 * TESSERA_STATS_FILE is set. */
#ifndef TSR_CORE_STATS_H
#define TSR_CORE_STATS_H

#include <stdint.h>

#define TSR__NBUCKETS 10 /* Darshan's size buckets: 0-100, 100-1K, ..., 1G+ */

/* MPI-IO hints the MPI library reports for the open file (tsr__mpiio_keys). */
enum { TSR__MPIIO_CB_NODES, TSR__MPIIO_CB_BUFFER_SIZE, TSR__MPIIO_STRIPING_FACTOR,
       TSR__MPIIO_STRIPING_UNIT, TSR__NMPIIO };
extern const char *const tsr__mpiio_keys[TSR__NMPIIO];

/* Writer-side figures of a strategy whose writers are not model ranks
 * (servers): filled on model rank 0 before tsr__stats_report (e.g. from the
 * servers' acknowledgement of the close); they then replace the writer
 * figures reduced over the model ranks. Zeroed by tsr__fstats_init. */
typedef struct {
  int valid;              /* 1: the fields below hold the writers' figures */
  int io_ranks;           /* dedicated I/O ranks of the context */
  int writers;            /* I/O ranks that wrote this file */
  int *writer_ranks;      /* their ranks in tsr_init's communicator, or NULL;
                             malloc'd, freed by tsr__stats_report */
  double writer_s[3];     /* min, max, mean over those writers */
  double first_put_to_close_s; /* first put reached the servers -> file closed */
  int64_t writes, bytes_written, size_hist[TSR__NBUCKETS];
  int64_t not_aligned, consec, offsets_known, alignment;
  int64_t peak_buffer[3]; /* min, max, mean over the I/O ranks */
  int64_t mpiio[TSR__NMPIIO]; /* as reported for the servers' file, -1 unknown */
  uint32_t mpiio_not_taken;   /* pass-through hints the servers' MPI-IO did not take */
} tsr__io_fstats;

typedef struct {
  double blocked_s;      /* time in Tessera calls on this file (model ranks) */
  double writer_s;       /* time in backend write/flush/close on this rank */
  double first_put;      /* MPI_Wtime of the first put, 0 before */
  double blocked_before; /* the context's blocked_s at that first put */
  double closed_at;      /* MPI_Wtime when the close finished */
  int64_t bytes_put;     /* data bytes this rank put */
  int64_t writes;        /* requests this rank issued to the backend */
  int64_t bytes_written; /* bytes in those requests */
  int64_t size_hist[TSR__NBUCKETS];
  int64_t not_aligned;   /* requests not starting on an alignment boundary */
  int64_t consec;        /* requests starting where the previous one ended */
  int64_t offsets_known; /* requests whose file offset the backend reported */
  int64_t last_end;      /* file offset after the previous request, -1 unknown */
  int64_t alignment;     /* stripe size used for the alignment count */
  int64_t rearranged_bytes; /* bytes this rank sent to other ranks */
  int64_t peak_buffer;   /* most bytes held for pending data on this rank */
  int64_t frames;        /* highest frame put + 1 */
  int is_writer;
  int64_t mpiio[TSR__NMPIIO]; /* first writer only (tsr__file_created), -1 unknown */
  uint32_t mpiio_not_taken;   /* first writer only: bits of hints.pass not taken
                                 (core/mpiio_taken.h) */
  tsr__io_fstats io;          /* writer side of strategy=servers */
} tsr__fstats;

struct tsr_file;
struct tsr__sink;
struct tsr__hints;
void tsr__fstats_init(tsr__fstats *s, int64_t alignment);
int tsr__size_bucket(int64_t bytes);
/* Count one backend request of @p bytes at file offset @p offset (-1: unknown). */
void tsr__fstats_request(tsr__fstats *s, int64_t bytes, int64_t offset);
void tsr__fstats_buffer(tsr__fstats *s, int64_t bytes_held);
/* Collective over the file's communicator: reduce and report (stdout on rank 0
 * with TESSERA_STATS=1; one JSON line appended with TESSERA_STATS_FILE). */
int tsr__stats_report(struct tsr_file *f);
/* The alignment requests are counted against: the striping_unit pass-through
 * hint when given, else 1 MiB. */
int64_t tsr__stats_alignment(const struct tsr__hints *h);
/* Environment switches, read once per process (assumed equal on all ranks):
 * TESSERA_STATS, TESSERA_STATS_FILE, TESSERA_HINTS_DISPLAY. */
typedef struct {
  int text;          /* TESSERA_STATS set, not "0" */
  const char *file;  /* TESSERA_STATS_FILE, NULL when unset or empty */
  int display;       /* TESSERA_HINTS_DISPLAY set, not "0" */
} tsr__stats_env_t;
const tsr__stats_env_t *tsr__stats_env(void);

/* Call on every rank that created a backend file, right after the create
 * succeeded (src/api/hints_display.c). @p writers lists the model ranks that
 * write the file (NULL: ranks 0..nwriters-1); writers[0] is the first writer.
 * Not collective. Sets the alignment the statistics count against; on the
 * first writer, when statistics or TESSERA_HINTS_DISPLAY are on, records the
 * MPI-IO hints the MPI library reports for the file (tsr__sink_file_info), and
 * with TESSERA_HINTS_DISPLAY=1 prints the hints in effect to stdout. Returns 0. */
int tsr__file_created(struct tsr_file *f, const struct tsr__sink *sink, const int *writers,
                      int nwriters);

#endif
