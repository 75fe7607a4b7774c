/* Hints: the parsed form of a hint string (docs/hints.md).
 *
 * A hint string is one or more groups separated by ','; a group is
 * `[glob:]key=value[:key=value...]`. The first token of a group that holds no
 * '=' is a file-name glob. For a given path, the unglobbed groups apply in
 * order, then the first globbed group whose glob matches the path (or its base
 * name) applies over them. Sources merge with precedence
 * environment (TESSERA_HINTS) > tsr_create's hints > tsr_init's hints.
 */
#ifndef TSR_CORE_HINTS_H
#define TSR_CORE_HINTS_H

#include <stddef.h>
#include <stdint.h>

/* A spelling of an enumerated hint value and the number it stands for; a
 * table ends with {NULL, 0}. The first spelling of a value is canonical. */
typedef struct {
  const char *text;
  int value;
} tsr__choice;

#define TSR__NAME_MAX 16 /* strategy and backend names, NUL included */

/* One pass-through hint for MPI_Info (MPI-IO and PnetCDF keys). */
typedef struct {
  char key[64];
  char value[256];
} tsr__kv;

#define TSR__MAX_PASSTHROUGH 32

/* Bits of tsr__hints.set: which fields a source set, so merging knows. */
#define TSR__H_STRATEGY (1ull << 0)
#define TSR__H_BACKEND (1ull << 1)
#define TSR__H_FORMAT (1ull << 2)
#define TSR__H_SLAB (1ull << 3)
#define TSR__H_BUFFER (1ull << 4)
#define TSR__H_AGGREGATORS (1ull << 5)
#define TSR__H_STRIDE (1ull << 6)
#define TSR__H_IO_GROUPS (1ull << 7)
#define TSR__H_IO_TASKS (1ull << 8)
#define TSR__H_SERVER_RANKS (1ull << 9)
#define TSR__H_SERVER_PICK (1ull << 10)
#define TSR__H_STRICT (1ull << 11)
#define TSR__H_WRITER (1ull << 12)
#define TSR__H_EXCHANGE (1ull << 13)
#define TSR__H_FRAMES_PER_OUTFILE (1ull << 14)
#define TSR__H_CLOBBER (1ull << 15)
#define TSR__H_SAFE_MODE (1ull << 16)
#define TSR__H_PUT_MODE (1ull << 17)
#define TSR__H_DEFLATE (1ull << 18)
#define TSR__H_SHUFFLE (1ull << 19)
#define TSR__H_QUANTIZE (1ull << 20)
#define TSR__H_ZSTD (1ull << 21)
#define TSR__H_CHUNKS (1ull << 22)
#define TSR__H_GRIB_BITS (1ull << 23)
#define TSR__H_GRIB_PACKING (1ull << 24)
#define TSR__H_TRANSPORT (1ull << 25)
#define TSR__H_SERVER_BUFFER (1ull << 26)
#define TSR__H_PRECISION (1ull << 27)
#define TSR__H_NULL_DELAY (1ull << 28)
#define TSR__H_STAGE_DIR (1ull << 29)
#define TSR__H_STAGE_MIN (1ull << 30)
#define TSR__H_STAGE_DRAIN (1ull << 31)
#define TSR__H_CONCENTRATORS (1ull << 32)
#define TSR__H_STAGE_FORMAT (1ull << 33)
#define TSR__H_IO_PLACEMENT (1ull << 34)


/* quantize= mode:N (NetCDF 4.9 nc_def_var_quantize); the numbers are NetCDF's
 * NC_QUANTIZE_* (the backend maps them, core includes no NetCDF header). */
enum { TSR__QUANTIZE_NONE = 0, TSR__QUANTIZE_BITGROOM = 1, TSR__QUANTIZE_GRANULARBR = 2,
       TSR__QUANTIZE_BITROUND = 3 };
typedef struct {
  int mode; /* TSR__QUANTIZE_* */
  int nsd;  /* significant digits (bitgroom, granularbr) or bits (bitround) */
} tsr__quantize;

/* chunks= auto (n 0: one horizontal level per chunk) | contiguous (n -1) |
 * AxBx... (n > 0 lengths for the last n non-record dimensions). */
#define TSR__CHUNKS_MAX 8
#define TSR__CHUNKS_CONTIGUOUS (-1)
typedef struct {
  int n;
  int64_t len[TSR__CHUNKS_MAX];
} tsr__chunks;

typedef struct tsr__hints {
  uint64_t set;                /* TSR__H_* bits of the fields given explicitly */
  char strategy[TSR__NAME_MAX]; /* strategy= a name of the strategy registry; "" = default */
  char backend[TSR__NAME_MAX];  /* backend= a name of the backend registry; "" = strategy's */
  int format;                  /* format= cdf2 (2, default) | cdf5 (5) */
  int64_t slab_bytes;          /* slab_bytes= size, default 64m: serial writer's slab */
  int64_t buffer_bytes;        /* buffer_bytes= size, default 128m: pending bytes per rank */
  int aggregators;             /* aggregators= N >= 1; 0 = default (ranks/4, at least 1) */
  int stride;                  /* stride= S >= 1; 0 = evenly spread */
  int io_groups;               /* io_groups= G >= 1 (servers) */
  int io_tasks;                /* io_tasks= T >= 1 (servers) */
  int server_ranks_first;      /* server_ranks= last (0, default) | first (1) */
  int io_placement_nodes;      /* io_placement= ranks (0, default: the last or first ranks)
                                  | nodes (1: whole nodes of their own, server_placement.c) */
  int server_pick_idle;        /* server_pick= roundrobin (0, default) | idle (1) */
  int strict;                  /* hints_strict= 1 (default) | 0: unknown keys warn */
  int writer;                  /* writer= rank of the serial writer, default 0 */
  int exchange_alltoall;       /* exchange= p2p (0, default) | alltoall (1) */
  int frames_per_outfile;      /* frames_per_outfile= N >= 1 (servers: frames per group) */
  int put_mode_deferred;       /* put_mode= copy (0, default: tsr_put returns when the
                                  buffer may be reused) | deferred (1: the caller keeps
                                  it unchanged until tsr_flush/tsr_close; no copy) */
  int safe_mode;               /* safe_mode= 0 (default: one schema agreement at enddef)
                                  | 1 (every define call agreed) */
  int clobber_force;           /* clobber= lock (0, default: TSR_EBUSY while another job
                                  writes the path) | force (1: no lock) */
  /* NetCDF-4 storage (docs/hints.md "Compression"): */
  int deflate;                 /* deflate= 0 (default, none) .. 9 */
  int shuffle;                 /* shuffle= 0 (default) | 1 */
  tsr__quantize quantize;      /* quantize= bitround:N | granularbr:N | bitgroom:N */
  int zstd;                    /* zstd= 0 (default, none) | 1..22 */
  tsr__chunks chunks;          /* chunks= auto (default) | contiguous | AxBx... */
  int grib_bits;               /* grib_bits= 1..32 bits per packed value; 0 = 16 */
  int grib_packing_ccsds;      /* grib_packing= simple (0, default) | ccsds (1) */
  char transport[TSR__NAME_MAX]; /* transport= a name of the servers' transport table
                                   (p2p, rma); "" = the table's first (tsr_init only) */
  int64_t server_buffer_bytes; /* server_buffer_bytes= size, 0 (default) = unbounded: a
                                  server's memory for data in flight (tsr_init only) */
  int precision_float;         /* precision= native (0, default) | float (1): double memory
                                  put into float variables is converted before the hand-off */
  int concentrators;           /* concentrators= per_node (-1) | N >= 1; 0 (default) = none:
                                  model ranks hand their messages to one concentrator per
                                  node or per N ranks, which forwards them (tsr_init only) */
  int null_delay_ms;           /* null_delay_ms= N >= 0: the null backend sleeps N ms per
                                  block (a slow backend for tests) */
  char stage_dir[256];         /* stage_dir= PATH of a fast tier: files are written there and
                                  drained to their final path (src/tier); "" = no staging */
  int64_t stage_min_bytes;     /* stage_min_bytes= size, default 0: files whose schema is
                                  smaller go straight to their final path */
  int stage_drain_at_finalize; /* stage_drain= thread (0, default: drained while the model
                                  computes) | finalize (1: drained by tsr_finalize) */
  int stage_format_log;        /* stage_format= native (0, default: the backend writes the file
                                  into the stage) | log (1: each writer appends its blocks to
                                  its own log, converted by the drain; docs/staging.md) */
  int npass;                   /* pass-through keys for MPI_Info, in order given */
  tsr__kv pass[TSR__MAX_PASSTHROUGH];
} tsr__hints;

/* Defaults for every field, nothing marked as set. */
void tsr__hints_defaults(tsr__hints *h);

/*
 * Parse @p text (may be NULL or empty: no change) and merge the groups that
 * apply to @p path into @p h (fields the text sets override h's). @p path NULL
 * means "no file yet" (tsr_init): only unglobbed groups apply, except that the
 * server layout keys (strategy=servers, io_groups, io_tasks, server_ranks, io_placement) are
 * taken from any group, since servers must exist before any file is created.
 * Returns 0, or TSR_EHINT with a message naming the key in @p err.
 * Unknown keys are errors unless the merged result has strict == 0, in which
 * case they are skipped (and logged when TESSERA_VERBOSE is set).
 */
int tsr__hints_parse(const char *text, const char *path, tsr__hints *h, char *err, size_t errlen);

/* Apply the three sources in precedence order: init_text, then create_text,
 * then the TESSERA_HINTS environment variable. */
int tsr__hints_resolve(const char *init_text, const char *create_text, const char *path,
                       tsr__hints *h, char *err, size_t errlen);

/* Parse a size with optional k/m/g suffix (powers of 1024). Returns 0 or -1. */
int tsr__parse_size(const char *s, int64_t *out);

/* Format the hints in effect as one hint string (for display and stats). */
void tsr__hints_format(const tsr__hints *h, char *out, size_t outlen);

#endif
