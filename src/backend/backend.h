/* Backends: block-level operations only. A backend never knows which strategy
 * fed it; it creates a file from a whole schema, writes blocks of a variable at
 * a frame, flushes and closes; optionally it opens a file for reading and reads
 * blocks (close then closes that file). The registry (backend_registry.c) is the only
 * place that knows which backends were built. */
#ifndef TSR_BACKEND_H
#define TSR_BACKEND_H

#include <mpi.h>

#include "core/hints.h"
#include "core/schema.h"

#define TSR__BACKEND_VERSION 2

/* The backend's own error, kept for tsr_backend_error(). */
typedef struct {
  int code;          /* backend's native code, e.g. NC_ENOSPC */
  char message[256]; /* "PnetCDF: No space left on device" */
} tsr__berr;

typedef struct tsr__bfile tsr__bfile; /* backend-private open file */

/* A block in memory: the block's data sit at element offset `moffset` inside a
 * C-ordered array of shape `mshape` (both NULL: the block is contiguous). */
typedef struct {
  const int64_t *mshape;
  const int64_t *moffset;
  /* 1: the caller's own array, which it promised to leave unchanged until the
   * next flush or close (put_mode=deferred): a backend may write from it
   * later instead of copying it now. 0: the buffer may be reused on return. */
  int deferred;
} tsr__memview;

typedef struct tsr__backend_ops {
  int version;
  const char *name;
  /* 1: every rank of the comm given to create calls every operation (collective,
   * PnetCDF); 0: one rank owns the file, comm is MPI_COMM_SELF (serial NetCDF). */
  int parallel;
  /* 1: the backend writes each horizontal level (the last two dimensions)
   * as one unit (a GRIB2 message). Each writer's blocks must add up to whole
   * levels, so strategies with several writers cut their layouts between
   * levels, and strategies whose writers hold tiles (direct, server tasks)
   * cannot use it in parallel. Several writers put their units in the file
   * at each flush, in writer order, so such strategies flush after every
   * put: the file then holds the puts in order, as one writer's would. */
  int whole_levels;
  /* Create (clobber) @p path, define the whole schema, leave define mode.
   * MPI-IO / PnetCDF pass-through hints come from @p h. */
  int (*create)(MPI_Comm comm, const char *path, const tsr__schema *s, const tsr__hints *h,
                tsr__bfile **out, tsr__berr *err);
  /* Write one block of variable @p varid at @p frame (ignored for fixed
   * variables); start/count cover the non-record dimensions. The caller may
   * reuse @p buf when this returns (a backend that buffers copies it),
   * unless mem.deferred says it stays valid until the next flush/close.
   * Parallel backends: independent call; completion is collective in flush. */
  int (*write_block)(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                     const int64_t count[], const void *buf, tsr__memview mem, tsr__berr *err);
  /* Bytes buffered by write_block (copies it holds) and not yet flushed;
   * deferred writes hold no copy and do not count. */
  int64_t (*pending_bytes)(const tsr__bfile *bf);
  /* Complete every buffered write (collective for parallel backends). */
  int (*flush)(tsr__bfile *bf, tsr__berr *err);
  /* Flush, close and free (collective for parallel backends). Always frees. */
  int (*close)(tsr__bfile *bf, tsr__berr *err);
  /* Close and delete after an error, so a failed file never looks complete. */
  void (*abort)(tsr__bfile *bf, const char *path);
  /* Optional: the MPI_Info the MPI library reports for the open file (caller frees),
   * or MPI_INFO_NULL. */
  MPI_Info (*file_info)(const tsr__bfile *bf);
  /* Optional: file offset in bytes of element `start` of a variable at a frame,
   * for the alignment statistics; -1 when unknown. */
  int64_t (*block_offset)(const tsr__bfile *bf, int varid, int64_t frame, const int64_t start[]);
  /* Optional: after the data, before close, put the text attribute @p name
   * on each variable v whose texts[v] is not NULL (checksum=, whose sums are
   * known only once every block is written: backend/sink_checksum.h).
   * Collective for parallel backends, with the same texts on every rank.
   * NULL: the backend has no attributes, and checksum= is refused at create. */
  int (*annotate)(tsr__bfile *bf, const char *name, char *const texts[], tsr__berr *err);

  /* Reading (tsr_open / tsr_get). Optional: a backend that leaves open NULL
   * cannot read, and tsr_open answers TSR_ENOTBUILT. */
  /* Open @p path read-only and describe it in @p schema_out (initialised
   * here; the caller frees it): dims with their lengths, the record dimension
   * as TSR_UNLIMITED; variables with types, dims and attributes; global
   * attributes; the format (NC_FORMAT_* numbers: 1 classic, 2 CDF-2, 5 CDF-5,
   * 3/4 netCDF-4). Variables of a type Tessera has no tsr_type for, or whose
   * record dimension is not the first, are left out of the schema (ids are the
   * schema's, mapped inside the backend); so are attributes of such types.
   * Parallel backends: collective over @p comm, and the status is the same on
   * every rank (on failure no rank holds a file). Serial backends: comm is
   * MPI_COMM_SELF and every rank that reads opens the file itself. */
  int (*open)(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *schema_out,
              tsr__bfile **out, tsr__berr *err);
  /* Read one block of variable @p varid at @p frame into @p buf, which is the
   * whole block (mem.mshape NULL) or a larger C-ordered memory array in which
   * the block sits at mem.moffset; elements of buf outside the block are not
   * touched. Parallel backends: collective over the open comm; a rank with
   * nothing to read still calls it with a zero count, so all ranks make the
   * same number of calls (and a rank whose request is invalid still takes part
   * with an empty one before it returns its error). */
  int (*read_block)(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                    const int64_t count[], void *buf, tsr__memview mem, tsr__berr *err);
  /* Number of records (length of the record dimension) when the file was
   * opened; 0 when it has none. Not collective. */
  int64_t (*num_records)(const tsr__bfile *bf);
  /* Optional: 0 when the library cannot open @p path for reading at all
   * (PnetCDF takes the text before a ':' for a file-system prefix), so a
   * reader that named no backend gets another one. NULL: any path. */
  int (*can_open)(const char *path);

  /* A layout stacked over the file's backend instead of a backend of its own
   * (the log of stage_format=log, backend/log.h), as PnetCDF's burst-buffer
   * driver wraps its MPI-IO driver. create_over makes @p path, from which
   * @p below writes the file later, as create would; such a layout's plain
   * create refuses. `stacked` and `unstacked` name the hints that choose it
   * and not, for messages. NULL for a backend. */
  int (*create_over)(const struct tsr__backend_ops *below, MPI_Comm comm, const char *path,
                     const tsr__schema *s, const tsr__hints *h, tsr__bfile **out,
                     tsr__berr *err);
  const char *stacked, *unstacked;
} tsr__backend_ops;

/* ---- the registry (backend_registry.c): the only place that knows which
 * backends exist and which were built. ---- */

/* What a writer asks of the backend it gets when the hints name none. */
enum {
  TSR__BACKEND_WANT_SERIAL,    /* one rank owns the file */
  TSR__BACKEND_WANT_PARALLEL,  /* every writer calls every op (collective) */
  TSR__BACKEND_PREFER_PARALLEL /* parallel when built, else serial */
};

/* The values of the format= hint: NC_FORMAT_* numbers (16: GRIB2), the
 * first spelling of each canonical; ends with {NULL, 0}. */
extern const tsr__choice tsr__format_choices[];

/* Look a backend up by name. Returns 0 and sets *ops, TSR_ENOTBUILT when the
 * name is known but not built into this library (ops NULL), TSR_EHINT when the
 * name is unknown. */
int tsr__backend_find(const char *name, const tsr__backend_ops **ops);
/* The ops a created file's writers call: @p below itself, or in *io the
 * layout the hints stack over it for a file written into a stage (@p staged:
 * stage_format=log). TSR_EHINT, with the reason in @p err, when that layout
 * cannot stand for @p below. */
int tsr__backend_stack(const tsr__hints *h, int staged, const tsr__backend_ops *below,
                       const tsr__backend_ops **io, tsr__berr *err);
/* 1 when @p name (n bytes, not NUL-terminated) names a backend, built or not. */
int tsr__backend_known(const char *name, size_t n);
/* The name of the backend to write @p format (NC_FORMAT_* number, as in
 * tsr__hints.format) with when the hints name none. */
const char *tsr__backend_default_write(int want, int format);
/* Whether backend @p name writes *format. When it does not and the format
 * was not @p given explicitly, *format becomes the backend's own (netcdf4
 * alone writes netCDF-4) and 0 is returned; else TSR_EHINT. */
int tsr__backend_write_format(const char *name, int given, int *format);
/* The name of the backend to read @p path with when the hints name none: the
 * best one for the file's format (its first bytes tell) that can open that
 * path, so netCDF-4 files go to netcdf4, classic ones to pnetcdf, and paths
 * PnetCDF cannot open (a ':') to netcdf. */
const char *tsr__backend_default_read(const char *path);
/* Every name the backend= hint takes (built or not): i < tsr__backend_count().
 * The log reader (stage_format=log) is not among them. */
int tsr__backend_count(void);
const char *tsr__backend_name_at(int i);

#endif
