/**
 * @file tessera.h
 * @brief Tessera: parallel output of tiled fields into one NetCDF file.
 *
 * A model rank holds a tile of every field. Tessera assembles the tiles into
 * one self-describing file with the strategy chosen at run time through hints
 * (see docs/hints.md): `serial` (gather to one writer, WRF io_form=2),
 * `direct` (collective PnetCDF, io_form=11), `aggregate` (rearrange onto a
 * subset of writer ranks, PIO / io_form=12), `split` (one file per rank,
 * io_form=102) and `servers` (dedicated asynchronous I/O ranks, quilting).
 *
 * Conventions that hold for every function:
 * - The return value is 0 on success or a negative TSR_E* code.
 * - A call documented as *collective* must be made by every rank of the
 *   model communicator with the same arguments (except buffers and tiles);
 *   it returns the same status on every rank, so one rank's bad argument or
 *   failed write gives every rank the same error and nothing hangs.
 * - Constructors set their output handle to NULL on failure; destructors
 *   accept a NULL handle (or a pointer to one) and set it to NULL.
 * - The library never prints unless TESSERA_VERBOSE is set, and never aborts.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TESSERA_BUILDING) && defined(__GNUC__)
#define TSR_EXTERN __attribute__((visibility("default")))
#else
#define TSR_EXTERN
#endif

/** Library version (of the header; tsr_inq_libvers() gives the library's): major. */
#define TSR_VERSION_MAJOR 0
#define TSR_VERSION_MINOR 1 /**< minor version */
#define TSR_VERSION_PATCH 0 /**< patch version */

/**
 * Error codes: one table generates the enum, tsr_strerror() and tsr_errname()
 * (and the Fortran constants), so they never drift apart.
 */
#define TSR_ERRNO_MAP(XX)                                                              \
  XX(EINVAL, -1, "invalid argument")                                                   \
  XX(ENOMEM, -2, "out of memory")                                                      \
  XX(EHINT, -3, "invalid hint: unknown key, malformed value or value out of range")    \
  XX(EDECOMP, -4, "invalid decomposition: tiles overlap or fall outside the shape")    \
  XX(EMODE, -5, "call not allowed in the file's current mode (define or data)")        \
  XX(EBADID, -6, "unknown variable, dimension or attribute id")                        \
  XX(ETYPE, -7, "invalid or mismatched type")                                          \
  XX(ESHAPE, -8, "decomposition does not match the variable's dimensions")             \
  XX(EIO, -9, "the backend reported an I/O error")                                     \
  XX(EACCES, -10, "the file cannot be created or opened at that path")                 \
  XX(ENOSPC, -11, "no space left on device, or file size limit exceeded")              \
  XX(ENOTBUILT, -12, "strategy or backend not built into this library")                \
  XX(ESERVERS, -13, "I/O server configuration does not fit the communicator")          \
  XX(EMPI, -14, "an MPI call failed")                                                  \
  XX(ENAME, -15, "name already defined, or not found")                                 \
  XX(ERANGE, -16, "frame or index out of range")                                       \
  XX(ETOOBIG, -17, "a single message or request would exceed 2 GiB")                   \
  XX(ESTATE, -18, "the library is not initialised, or a handle is already closed")     \
  XX(EFORMAT, -19, "the file is not in a format Tessera can read")                     \
  XX(EBUSY, -20, "another job or process is writing the same path")

/** Error codes (all negative; 0 is success). */
typedef enum {
  TSR_OK = 0,
#define TSR__ERR_ENUM(name, value, text) TSR_##name = value,
  TSR_ERRNO_MAP(TSR__ERR_ENUM)
#undef TSR__ERR_ENUM
  TSR_ELAST = -20
} tsr_error;

/**
 * Element types. The numbers equal NetCDF's nc_type values (NC_BYTE ...
 * NC_UINT64). Every format has BYTE (signed 8-bit), CHAR, SHORT, INT, FLOAT
 * and DOUBLE; UBYTE, USHORT, UINT, INT64 and UINT64 exist in `format=cdf5`
 * and `format=netcdf4` only: defining a variable or attribute of such a type
 * in a CDF-2 file returns TSR_ETYPE (tsr_backend_error says why).
 */
typedef enum {
  TSR_BYTE = 1,    /**< int8_t (Fortran integer(int8)) */
  TSR_CHAR = 2,    /**< char, text */
  TSR_SHORT = 3,   /**< int16_t (integer(int16)) */
  TSR_INT = 4,     /**< int32_t (integer(int32)) */
  TSR_FLOAT = 5,   /**< float (real(real32)) */
  TSR_DOUBLE = 6,  /**< double (real(real64)) */
  TSR_UBYTE = 7,   /**< uint8_t */
  TSR_USHORT = 8,  /**< uint16_t */
  TSR_UINT = 9,    /**< uint32_t */
  TSR_INT64 = 10,  /**< int64_t (integer(int64)) */
  TSR_UINT64 = 11  /**< uint64_t */
} tsr_type;

/** Length of the record dimension in tsr_def_dim. */
#define TSR_UNLIMITED 0
/** Variable id for global attributes in tsr_put_att. */
#define TSR_GLOBAL (-1)
/** Longest dimension, variable or attribute name. */
#define TSR_MAX_NAME 256
/** Most dimensions of one variable, record dimension included. */
#define TSR_MAX_DIMS 8

typedef struct tsr_ctx tsr_ctx;       /**< A library context over one communicator. */
typedef struct tsr_decomp tsr_decomp; /**< How a global array is spread over ranks. */
typedef struct tsr_file tsr_file;     /**< An open file. */

/**
 * The library's version as "MAJOR.MINOR.PATCH" (e.g. "0.1.0"), the version the
 * library was built as (which may differ from the TSR_VERSION_* macros a
 * program was compiled with). Static storage, never NULL, never freed. Not
 * collective; may be called before MPI_Init and without a context.
 * @return the version string.
 */
TSR_EXTERN const char *tsr_inq_libvers(void);

/** Text for an error code; never NULL. Not collective.
 * @param err a TSR_E* code (or 0).
 * @return the text; "unknown error code" for a value that is no code.
 */
TSR_EXTERN const char *tsr_strerror(int err);
/** Bytes of one element of @p type; 0 for a value that is no tsr_type. Not collective.
 * @param type an element type.
 * @return bytes of one element, or 0.
 */
TSR_EXTERN size_t tsr_type_size(tsr_type type);

/** Name of an error code ("TSR_EHINT"); never NULL. Not collective.
 * @param err a TSR_E* code (or 0).
 * @return the code's name.
 */
TSR_EXTERN const char *tsr_errname(int err);

/**
 * Why the most recent failing call on this thread that returns no handle to
 * ask (tsr_init, tsr_create, tsr_open, tsr_close, tsr_abort, tsr_finalize)
 * failed, in the style of dlerror():
 * e.g. "hint 'aggregators=two': expected an integer >= 1 (in TESSERA_HINTS)".
 * The same text on every rank (the failing rank's message is shared when the
 * error is agreed). "" when there is none. Valid until the next such call on
 * this thread. Not collective.
 * @return the message, or "" when there is none.
 */
TSR_EXTERN const char *tsr_last_error(void);

/**
 * Start Tessera on @p comm. Collective over @p comm.
 *
 * @p hints is a hint string (docs/hints.md), may be NULL; TESSERA_HINTS
 * overrides it. When the hints ask for `strategy=servers`, io_groups*io_tasks
 * ranks become I/O servers: on them tsr_init serves until the model ranks call
 * tsr_finalize, then returns with *model_comm == MPI_COMM_NULL and
 * *ctx == NULL: 0, or the code of the job's last failure that lost output
 * (TSR_EIO, TSR_ENOSPC, TSR_EACCES, TSR_ENOMEM, TSR_EMPI, TSR_ETOOBIG,
 * TSR_EBUSY; the same code on every server, its message in tsr_last_error),
 * so that server ranks exit as the model ranks do (docs/servers.md). On
 * model ranks *model_comm is the communicator the model should use instead
 * of @p comm (a duplicate of @p comm when there are no servers); the caller
 * frees it with MPI_Comm_free after tsr_finalize.
 *
 * @return 0, TSR_EHINT, TSR_ESERVERS, TSR_ENOMEM, TSR_EMPI (on a server also
 * the job's last failure, as above).
 * @param comm the communicator of every rank that takes part (model ranks and, with
 *            `strategy=servers`, the server ranks), e.g. MPI_COMM_WORLD.
 * @param hints hint string, or NULL.
 * @param ctx receives the context (NULL on failure and on server ranks).
 * @param model_comm receives the model ranks' communicator (MPI_COMM_NULL on servers).
 */
TSR_EXTERN int tsr_init(MPI_Comm comm, const char *hints, tsr_ctx **ctx, MPI_Comm *model_comm);

/**
 * Stop Tessera. Collective over the model communicator. Waits until every file
 * handed to servers is written and closed; reports a server-side write error
 * that no earlier call reported (its file and backend message in
 * tsr_last_error). Accepts *ctx == NULL.
 * @param ctx the context; set to NULL. May point to NULL.
 * @return 0, or the first server-side failure not reported before (TSR_EIO,
 *         TSR_ENOSPC, TSR_EACCES, TSR_ENOMEM, TSR_EMPI, ...), the same on every rank.
 */
TSR_EXTERN int tsr_finalize(tsr_ctx **ctx);

/**
 * Describe this rank's tile of a global array of @p ndims dimensions
 * (the record dimension excluded), slowest dimension first. Collective.
 *
 * @param gsize  global shape.
 * @param start  first global index of this rank's tile (0-based).
 * @param count  tile extent; a zero count means the rank owns nothing.
 * @param mstart first global index of this rank's memory array, which may be
 *               larger than the tile (halos, WRF's ims..ime); NULL = start.
 * @param mcount extent of the memory array; NULL = count. The buffer passed to
 *               tsr_put is C-ordered over mcount and the tile is read from it
 *               in place, without a copy by the caller.
 * @return 0; TSR_EDECOMP if any rank's tile overlaps another's or lies outside
 *         gsize, or its memory box does not contain its tile; TSR_EINVAL.
 * Points no rank owns are written as the variable's fill value.
 * @param ctx    the context.
 * @param ndims  number of dimensions (1 .. TSR_MAX_DIMS - 1).
 * @param d      receives the decomposition (NULL on failure).
 */
TSR_EXTERN int tsr_decomp_box(tsr_ctx *ctx, int ndims, const int64_t gsize[], const int64_t start[],
                              const int64_t count[], const int64_t mstart[],
                              const int64_t mcount[], tsr_decomp **d);

/**
 * Describe this rank's elements as a list of global indices (an index map,
 * as PIO's compdof or SMIOL's element list): cells of an unstructured mesh,
 * masked columns, cubed-sphere faces. Collective.
 *
 * @param gsize global shape, slowest dimension first (as tsr_decomp_box).
 * @param n     length of @p idx, which is also the number of elements of the
 *              buffer passed to tsr_put / tsr_get.
 * @param idx   idx[k] is the row-major flat index (0-based) of the global
 *              element held at buffer position k; -1 leaves position k out
 *              (it is neither written nor read). Any subset in any order, or
 *              nothing (n == 0).
 * @return 0; TSR_EDECOMP on every rank if an index lies outside gsize, is
 *         listed twice, or belongs to two ranks; TSR_EINVAL.
 *
 * Elements no rank lists are written as the variable's fill value. Indices
 * are sorted and merged into runs once, here; when every rank's elements form
 * one box the decomposition costs what that box costs (plus one reordering
 * copy per put when the list is not in index order). Strategies `serial`,
 * `direct`, `aggregate` and `servers` take any map; `split` takes maps whose
 * elements form one box per rank and answers TSR_EDECOMP otherwise.
 * @param ctx   the context.
 * @param ndims number of dimensions of @p gsize.
 * @param d     receives the decomposition (NULL on failure).
 */
TSR_EXTERN int tsr_decomp_map(tsr_ctx *ctx, int ndims, const int64_t gsize[], int64_t n,
                              const int64_t idx[], tsr_decomp **d);

/**
 * Describe this rank's elements as several boxes (cubed-sphere faces, a
 * nest's patches). Collective. Box b starts at start[b*ndims ..] and has
 * extent count[b*ndims ..] (0-based, slowest dimension first); in the buffer
 * the boxes follow one another, each C-ordered over its own extent. Boxes may
 * be empty; nboxes may be 0.
 * @return 0; TSR_EDECOMP on every rank if a box leaves gsize or two boxes
 *         (of any ranks) overlap; TSR_EINVAL. Strategies as tsr_decomp_map.
 * @param ctx    the context.
 * @param ndims  number of dimensions.
 * @param gsize  global shape, slowest first.
 * @param nboxes number of this rank's boxes (may be 0).
 * @param start  nboxes x ndims first indices (0-based).
 * @param count  nboxes x ndims extents.
 * @param d      receives the decomposition (NULL on failure).
 */
TSR_EXTERN int tsr_decomp_boxes(tsr_ctx *ctx, int ndims, const int64_t gsize[], int nboxes,
                                const int64_t start[], const int64_t count[], tsr_decomp **d);

/**
 * tsr_decomp_box for memory held in another dimension order, so tsr_put and
 * tsr_get read and write it in place (e.g. WRF's a(i,k,j), MemoryOrder XZY).
 * Collective.
 *
 * @p start, @p count, @p mstart, @p mcount are in file order, as for
 * tsr_decomp_box. @p order lists, slowest first, which file dimension each
 * memory dimension is: the buffer is C-ordered over the memory box with
 * dimensions order[0], ..., order[ndims-1]. For a file variable
 * (bottom_top, south_north, west_east) held as Fortran a(i,k,j), the C view
 * is [j][k][i], so order = {1, 0, 2}. NULL or the identity is tsr_decomp_box.
 * Every strategy takes it: `serial` and `aggregate` read the memory in place
 * while rearranging; the others get the tile packed into file order first
 * (innermost rows stay whole copies when the fastest dimension is the file's).
 * @return 0; TSR_EINVAL if @p order is not a permutation; as tsr_decomp_box.
 * @param ctx    the context.
 * @param ndims  number of dimensions.
 * @param gsize  global shape, file order, slowest first.
 * @param start  first index of the tile (0-based), file order.
 * @param count  tile extent, file order.
 * @param mstart first index of the memory box, file order; NULL = start.
 * @param mcount extent of the memory box, file order; NULL = count.
 * @param order  memory dimension order (see above), or NULL.
 * @param d      receives the decomposition (NULL on failure).
 */
TSR_EXTERN int tsr_decomp_box_ordered(tsr_ctx *ctx, int ndims, const int64_t gsize[],
                                      const int64_t start[], const int64_t count[],
                                      const int64_t mstart[], const int64_t mcount[],
                                      const int order[], tsr_decomp **d);

/** Free a decomposition. Not collective; accepts NULL.
 * @param d the decomposition; set to NULL. May point to NULL.
 */
TSR_EXTERN void tsr_decomp_free(tsr_decomp **d);

/**
 * Create (clobber) a file and enter define mode. Collective.
 * @p hints may be NULL; they override tsr_init's and are overridden by
 * TESSERA_HINTS entries whose glob matches @p path.
 * @return 0, TSR_EHINT, TSR_ENOTBUILT, TSR_EACCES, TSR_EIO, TSR_ENOMEM.
 * @param ctx   the context.
 * @param path  the file's final path (written as `<path>.tessera-tmp` until tsr_close).
 * @param hints hint string for this file, or NULL.
 * @param f     receives the file handle (NULL on failure; why: tsr_last_error).
 */
TSR_EXTERN int tsr_create(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **f);

/* Define calls (tsr_def_dim, tsr_def_var, tsr_put_att, tsr_def_var_decomp,
 * tsr_def_var_quantize) are
 * collective: every rank makes the same calls. Each returns this rank's result
 * at once; tsr_enddef agrees on all of them (safe_mode=1: each call agrees). */

/** Define a dimension; @p len TSR_UNLIMITED makes the record dimension. Collective.
 *  @return 0, TSR_EMODE, TSR_ENAME, TSR_EINVAL.
 * @param f     a file in define mode.
 * @param name  dimension name (at most TSR_MAX_NAME - 1 bytes).
 * @param len   length, or TSR_UNLIMITED for the record dimension.
 * @param dimid receives the dimension id.
 */
TSR_EXTERN int tsr_def_dim(tsr_file *f, const char *name, int64_t len, int *dimid);

/** Define a variable; a record variable has the record dimension first. Collective.
 *  @return 0, TSR_EMODE, TSR_ENAME, TSR_EBADID, TSR_ETYPE, TSR_EINVAL.
 * @param f      a file in define mode.
 * @param name   variable name.
 * @param type   element type.
 * @param ndims  number of dimensions (0 .. TSR_MAX_DIMS).
 * @param dimids dimension ids, slowest first (the record dimension first).
 * @param varid  receives the variable id.
 */
TSR_EXTERN int tsr_def_var(tsr_file *f, const char *name, tsr_type type, int ndims,
                           const int dimids[], int *varid);

/**
 * Give a variable its default decomposition (used when tsr_put gets NULL).
 * The `split` strategy needs it for every decomposed variable, because each
 * rank's file is laid out for its own tile at tsr_enddef. Collective. The
 * decomposition must outlive the file.
 * @return 0, TSR_EMODE, TSR_EBADID, TSR_ESHAPE.
 * @param f     a file in define mode.
 * @param varid the variable.
 * @param d     its decomposition (of the variable's non-record shape).
 */
TSR_EXTERN int tsr_def_var_decomp(tsr_file *f, int varid, const tsr_decomp *d);

/** Lossy quantization modes of tsr_def_var_quantize (NetCDF 4.9's NC_QUANTIZE_*). */
typedef enum {
  TSR_QUANTIZE_NONE = 0,       /**< keep every bit */
  TSR_QUANTIZE_BITGROOM = 1,   /**< keep @p nsd significant decimal digits */
  TSR_QUANTIZE_GRANULARBR = 2, /**< keep @p nsd significant decimal digits */
  TSR_QUANTIZE_BITROUND = 3    /**< keep @p nsd significant bits */
} tsr_quantize_mode;

/**
 * Quantize one float or double variable before compression (NetCDF's
 * nc_def_var_quantize), overriding the `quantize` hint for it: e.g. keep 10
 * bits of T but 16 of PSFC, or TSR_QUANTIZE_NONE to keep a variable exact
 * under a file-wide hint. Applies where the format compresses
 * (`format=netcdf4`); other formats write the values unchanged, as with the
 * hint. Collective.
 * @param nsd significant bits (BITROUND: 1..23 float, 1..52 double) or
 *            decimal digits (1..7 float, 1..15 double); ignored for NONE.
 * @return 0, TSR_EMODE, TSR_EBADID, TSR_ETYPE (not float or double),
 *         TSR_EINVAL (mode or @p nsd out of range).
 * @param f     a file in define mode.
 * @param varid a float or double variable.
 * @param mode  the quantization mode.
 */
TSR_EXTERN int tsr_def_var_quantize(tsr_file *f, int varid, tsr_quantize_mode mode, int nsd);

/** Put an attribute (varid TSR_GLOBAL for a global one). Collective. A
 *  `_FillValue` must have the variable's type and one value.
 *  @return 0, TSR_EMODE, TSR_EBADID, TSR_ETYPE, TSR_EINVAL.
 * @param f      a file in define mode.
 * @param varid  the variable, or TSR_GLOBAL.
 * @param name   attribute name.
 * @param type   element type of @p values.
 * @param n      number of values (characters for TSR_CHAR).
 * @param values the values.
 */
TSR_EXTERN int tsr_put_att(tsr_file *f, int varid, const char *name, tsr_type type, size_t n,
                           const void *values);

/** Leave define mode: the backend creates the file with the whole schema. Collective.
 *  Define calls are checked on each rank; here every rank's define calls are
 *  compared in one reduction, and a difference is TSR_EINVAL on every rank,
 *  naming the first differing call and rank (tsr_backend_error). With the hint
 *  safe_mode=1 each define call also agrees on its result when it is made.
 *  @return 0, TSR_EMODE, TSR_EINVAL, TSR_EIO, TSR_EACCES, TSR_ENOSPC, TSR_ESHAPE.
 * @param f a file in define mode.
 */
TSR_EXTERN int tsr_enddef(tsr_file *f);

/**
 * Write this rank's tile of variable @p varid at record @p frame (ignored for
 * fixed variables). @p buf holds elements of the variable's type, laid out
 * over the decomposition's memory box. Collective.
 *
 * Returns as soon as @p buf may be reused. The bytes may reach the file later,
 * but no later than tsr_flush or tsr_close, and the memory Tessera holds for
 * them never exceeds what the hints allow (buffer_bytes, slab_bytes).
 * With the hint put_mode=deferred the caller instead promises to leave @p buf
 * unchanged until the next tsr_flush or tsr_close of @p f, and Tessera may
 * write from it then without copying it now (as ADIOS2's deferred puts).
 * With strategy=servers the code may be an earlier file's failure, reported
 * at the first put or flush after the servers told of it, and
 * tsr_backend_error names the failed file.
 *
 * A failure once the data started moving (any code but those of the
 * argument checks: TSR_EMODE, TSR_EBADID, TSR_ESHAPE, TSR_ERANGE, TSR_EINVAL,
 * TSR_ESTATE, which change nothing, except that with strategy=split a rank
 * whose own arguments passed has written its tile into its own piece when
 * another rank's were refused; safe_mode=1 checks first there too) fails the
 * file for good, as does one of
 * tsr_put_typed, tsr_put_global or tsr_flush: later calls go on, but
 * tsr_close then removes the file and returns this first failure (see
 * tsr_close). An earlier file's failure reported here counts too: the caller
 * cannot tell what it skipped because of it.
 * @return 0, TSR_EMODE, TSR_EBADID, TSR_ESHAPE, TSR_ERANGE, TSR_EIO, TSR_ENOSPC.
 * @param f     a file in data mode, opened with tsr_create.
 * @param varid the variable.
 * @param frame record (0-based); ignored for fixed variables.
 * @param d     the decomposition, or NULL for the variable's own (tsr_def_var_decomp).
 * @param buf   this rank's memory box of the variable, in its type.
 */
TSR_EXTERN int tsr_put(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                       const void *buf);

/**
 * tsr_put with the memory's element type given: @p memtype equal to the
 * variable's type is tsr_put; TSR_DOUBLE memory into a TSR_FLOAT variable is
 * converted, each value to (float)x (round to nearest), so a model that
 * computes in double writes float files without a copy of its own. With
 * strategy=servers the hint precision=float converts on the model rank
 * before the hand-off (half the bytes move); by default the doubles travel
 * and the server converts. Any other pair: TSR_EINVAL. Collective.
 * @return as tsr_put, and TSR_EINVAL for a pair of types not converted.
 * @param f       a file in data mode.
 * @param varid   the variable.
 * @param frame   record (0-based); ignored for fixed variables.
 * @param d       the decomposition, or NULL for the variable's own.
 * @param memtype element type of @p buf.
 * @param buf     this rank's memory box.
 */
TSR_EXTERN int tsr_put_typed(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d,
                             tsr_type memtype, const void *buf);

/**
 * Write a replicated variable (every rank holds all of it, e.g. `Times`):
 * the whole variable at @p frame, written once. Collective; @p buf must hold
 * the same values on every rank (only one rank's copy is written).
 * @param f     a file in data mode.
 * @param varid the variable.
 * @param frame record (0-based); ignored for fixed variables.
 * @param buf   the whole variable at @p frame.
 * @return as tsr_put (TSR_EMODE, TSR_EBADID, TSR_ERANGE, TSR_EIO, TSR_ENOSPC, ...).
 */
TSR_EXTERN int tsr_put_global(tsr_file *f, int varid, int64_t frame, const void *buf);

/** Make every byte put so far reach the file. Collective.
 * @param f a file in data mode.
 * @return 0, TSR_EMODE, TSR_EIO, TSR_ENOSPC, TSR_ENOMEM, TSR_EMPI (with servers
 *         also an earlier file's failure, as tsr_put).
 */
TSR_EXTERN int tsr_flush(tsr_file *f);

/** Flush and close; frees the handle and sets *f = NULL, also on error.
 *  Collective. The file appears under its final name only when every put,
 *  flush and drain of it and this close succeeded on every rank; otherwise
 *  nothing of it is left (not the temporary `<path>.tessera-tmp`, no split
 *  piece, nothing staged) and the code is the first failure, the same on
 *  every rank, with its message in tsr_last_error(). So 0 means the file is
 *  complete (with `stage_dir`: complete in the stage, drained to its final
 *  path in the background).
 *  With `servers` it returns without waiting for the servers' write
 *  (tsr_open, tsr_flush of a later file and tsr_finalize wait); a failure
 *  the servers meet later deletes the file and is reported then.
 *  @return 0, TSR_EIO, TSR_ENOSPC, TSR_EACCES, TSR_ENOMEM, TSR_EMPI, ...
 * @param f the file; *f is set to NULL.
 */
TSR_EXTERN int tsr_close(tsr_file **f);

/** Give a file up: nothing of it is left (temporaries, split pieces, staged
 *  copies; with `servers`, the servers delete it), nothing is renamed, and
 *  data not yet written is dropped. Frees the handle and sets *f = NULL. For
 *  a model that stops writing a file it cannot complete. In define mode it
 *  only frees; a file opened with tsr_open is closed. Collective: when it
 *  returns, every rank's part is gone.
 *  @return 0, or TSR_EINVAL for a NULL handle.
 * @param f the file; *f is set to NULL.
 */
TSR_EXTERN int tsr_abort(tsr_file **f);

/**
 * Open an existing NetCDF file for reading (restart files, verification).
 * Collective over the context's model communicator, with the same @p path.
 * With `servers`, it first waits until the servers finished every file
 * closed before (their errors are reported by the next write call), so a
 * job reads back what it wrote.
 *
 * @p hints may be NULL; they are resolved as for tsr_create (tsr_init's,
 * then these, then TESSERA_HINTS entries whose glob matches @p path). Only
 * `backend` and the MPI-IO pass-through keys matter: `backend=pnetcdf` reads
 * collectively with PnetCDF (the default when it is built), `backend=netcdf`
 * lets every rank open the file itself with serial NetCDF. Strategy hints
 * are ignored.
 *
 * The file is in data mode and read-only: tsr_inq_varid works on it. Variable
 * ids are the file's, except that variables Tessera cannot describe (a type
 * with no tsr_type such as NC_BYTE or NC_SHORT, more than TSR_MAX_DIMS
 * dimensions) are left out and the ids after them move down; look ids up by
 * name. tsr_def_*, tsr_put_att, tsr_enddef, tsr_put, tsr_put_global and
 * tsr_flush return TSR_EMODE; tsr_close closes it and frees the handle. The
 * caller owns *f until tsr_close.
 *
 * Pieces of a file written with `strategy=split` are not joined here: opening
 * one returns TSR_EFORMAT (join them with `tessera join` first).
 *
 * @return 0; TSR_EACCES (no such file, or not readable); TSR_EFORMAT (not a
 *         NetCDF file, or a split piece); TSR_ENOTBUILT (the backend asked for
 *         is not built, or cannot read, e.g. `null`); TSR_EHINT; TSR_EINVAL
 *         (NULL or empty path, NULL f); TSR_EIO; TSR_ENOMEM; TSR_ESTATE (NULL
 *         ctx). The same code on every rank; *f is NULL on failure.
 * @param ctx   the context.
 * @param path  the file.
 * @param hints hint string, or NULL.
 * @param f     receives the file handle (NULL on failure).
 */
TSR_EXTERN int tsr_open(tsr_ctx *ctx, const char *path, const char *hints, tsr_file **f);

/**
 * Read this rank's tile of variable @p varid at record @p frame (ignored for
 * fixed variables) from a file opened by tsr_open. Collective.
 *
 * @p d may be any decomposition of the variable's non-record shape, not the
 * one the file was written with. Each rank's tile (d's start/count) is stored
 * into @p buf laid out over d's memory box, exactly as tsr_put reads it:
 * points of the memory box outside the tile (halos) are not touched, and
 * points no rank owns are simply not read. @p buf may be NULL on a rank whose
 * tile is empty. @p d NULL reads the whole frame of the variable on every rank
 * (replicated variables such as `Times`); @p buf then holds all of it. Values
 * are returned in the variable's own type, without conversion.
 *
 * @return 0; TSR_EMODE (@p f is open for writing); TSR_EBADID (no such
 *         variable); TSR_ERANGE (@p frame < 0, or not below the number of
 *         records in the file, for a record variable); TSR_ESHAPE (@p d does
 *         not match the variable's non-record dimensions); TSR_EINVAL (NULL
 *         @p buf with a non-empty tile); TSR_EIO; TSR_ENOMEM. A bad argument
 *         on one rank gives every rank the same code, and nothing is read.
 * @param f     a file opened with tsr_open.
 * @param varid the variable.
 * @param frame record (0-based); ignored for fixed variables.
 * @param d     a decomposition of the variable's non-record shape, or NULL.
 * @param buf   receives this rank's tile, laid out over d's memory box.
 */
TSR_EXTERN int tsr_get(tsr_file *f, int varid, int64_t frame, const tsr_decomp *d, void *buf);

/** Look up a variable id by name. Not collective. @return 0, TSR_ENAME.
 * @param f     a file.
 * @param name  variable name.
 * @param varid receives its id.
 */
TSR_EXTERN int tsr_inq_varid(const tsr_file *f, const char *name, int *varid);

/**
 * @name Inquiry
 * What a file holds, for files being written (after the define calls that
 * made it) and files opened with tsr_open alike: a restart reader learns
 * dimension lengths, variable types and shapes and attributes without calling
 * NetCDF. Ids are those of tsr_def_dim / tsr_def_var, or of the opened file
 * (see tsr_open for variables left out). Dimension lists are in file order,
 * slowest first, the record dimension first. The length of the record
 * dimension is the number of records: in the file when it was opened, or put
 * so far when it is being written. None of these calls is collective (every
 * rank holds the same description). Names are at most TSR_MAX_NAME bytes with
 * the NUL; output pointers may be NULL when the value is not wanted.
 * @{
 */
/** Counts of dimensions, variables and global attributes, and the record
 *  dimension's id (-1 when there is none). @return 0, TSR_EINVAL.
 * @param f          a file.
 * @param ndims      receives the number of dimensions.
 * @param nvars      receives the number of variables.
 * @param ngatts     receives the number of global attributes.
 * @param unlimdimid receives the record dimension's id, or -1.
 */
TSR_EXTERN int tsr_inq(const tsr_file *f, int *ndims, int *nvars, int *ngatts, int *unlimdimid);
/** Name and length of dimension @p dimid. @return 0, TSR_EINVAL, TSR_EBADID.
 * @param f     a file.
 * @param dimid the dimension.
 * @param name  receives its name (TSR_MAX_NAME bytes), or NULL.
 * @param len   receives its length, or NULL.
 */
TSR_EXTERN int tsr_inq_dim(const tsr_file *f, int dimid, char *name, int64_t *len);
/** Id of the dimension named @p name. @return 0, TSR_EINVAL, TSR_ENAME.
 * @param f     a file.
 * @param name  dimension name.
 * @param dimid receives its id.
 */
TSR_EXTERN int tsr_inq_dimid(const tsr_file *f, const char *name, int *dimid);
/**
 * Name, type, number of dimensions (record dimension included), their ids and
 * their lengths (@p dimids and @p shape hold TSR_MAX_DIMS entries).
 * @return 0, TSR_EINVAL, TSR_EBADID.
 * @param f      a file.
 * @param varid  the variable.
 * @param name   receives its name (TSR_MAX_NAME bytes), or NULL.
 * @param type   receives its type, or NULL.
 * @param ndims  receives its number of dimensions, or NULL.
 * @param dimids receives its dimension ids (TSR_MAX_DIMS entries), or NULL.
 * @param shape  receives its dimension lengths (TSR_MAX_DIMS entries), or NULL.
 */
TSR_EXTERN int tsr_inq_var(const tsr_file *f, int varid, char *name, tsr_type *type, int *ndims,
                           int dimids[], int64_t shape[]);
/** Number of attributes of variable @p varid (TSR_GLOBAL: global ones).
 *  @return 0, TSR_EINVAL, TSR_EBADID.
 * @param f     a file.
 * @param varid the variable, or TSR_GLOBAL.
 * @param natts receives the number of attributes.
 */
TSR_EXTERN int tsr_inq_natts(const tsr_file *f, int varid, int *natts);
/** Name of attribute @p attnum (0 .. natts-1) of @p varid, in definition
 *  order. @return 0, TSR_EINVAL, TSR_EBADID.
 * @param f      a file.
 * @param varid  the variable, or TSR_GLOBAL.
 * @param attnum attribute number, 0-based.
 * @param name   receives its name (TSR_MAX_NAME bytes).
 */
TSR_EXTERN int tsr_inq_attname(const tsr_file *f, int varid, int attnum, char *name);
/** Type and number of values of an attribute. @return 0, TSR_EINVAL,
 *  TSR_EBADID (no such variable), TSR_ENAME (no such attribute).
 * @param f     a file.
 * @param varid the variable, or TSR_GLOBAL.
 * @param name  attribute name.
 * @param type  receives its type, or NULL.
 * @param n     receives its number of values, or NULL.
 */
TSR_EXTERN int tsr_inq_att(const tsr_file *f, int varid, const char *name, tsr_type *type,
                           size_t *n);
/** Copy an attribute's values, in its own type, into @p values (room for n
 *  values of tsr_inq_att; text is not NUL-terminated, as in NetCDF).
 *  @return 0, TSR_EINVAL, TSR_EBADID, TSR_ENAME.
 * @param f      a file.
 * @param varid  the variable, or TSR_GLOBAL.
 * @param name   attribute name.
 * @param values receives the values.
 */
TSR_EXTERN int tsr_get_att(const tsr_file *f, int varid, const char *name, void *values);
/** @} */

/**
 * The last backend error on a file: the backend's own code (e.g. NC_ENOSPC)
 * and message ("PnetCDF: No space left on device"). Either output may be NULL.
 * Returns the last TSR_E* code seen on the file. Not collective.
 * @param f       a file.
 * @param code    receives the backend's own code, or NULL.
 * @param message receives the backend's message (owned by @p f), or NULL.
 * @return the last TSR_E* code seen on @p f (0: none).
 */
TSR_EXTERN int tsr_backend_error(const tsr_file *f, int *code, const char **message);

/** The strategy a file uses ("serial", "direct", ...). Not collective.
 * @param f a file.
 * @return the strategy's name (static storage).
 */
TSR_EXTERN const char *tsr_file_strategy(const tsr_file *f);

/** The hints a file is written with, as one hint string: with
 * strategy=auto, those of the candidate chosen for this file (docs/auto.md).
 * Not collective.
 * @param f a file.
 * @param out receives the text, NUL-terminated (truncated to @p outlen).
 * @param outlen the size of @p out in bytes.
 * @return 0, or TSR_EINVAL for a NULL argument.
 */
TSR_EXTERN int tsr_file_hints(const tsr_file *f, char *out, size_t outlen);

/** This rank's running totals since tsr_init (see tsr_get_stats). */
typedef struct {
  double blocked_s;      /**< time this rank spent inside Tessera calls */
  double writer_s;       /**< time this rank spent in backend writes, flushes and closes */
  double server_writer_s; /**< longest writer time of any I/O server, known after a
                              tsr_flush or tsr_close that waited for them; 0 without servers */
  int64_t bytes_put;     /**< bytes of variable data this rank handed to tsr_put / put_global */
  int64_t bytes_written; /**< bytes this rank wrote to files as a writer */
  int64_t files_closed;  /**< files closed */
  int64_t peak_buffer_bytes; /**< most memory Tessera held for pending data on this rank */
  int64_t server_peak_bytes; /**< most memory any I/O server held for data in flight
                                 (receive buffer, assembly slab, backend buffers), known
                                 when server_writer_s is; at most server_buffer_bytes */
  int64_t server_bytes_sent; /**< bytes this model rank handed to the I/O servers
                                  (messages with their headers; halved for double data
                                  with precision=float) */
  int64_t server_msgs_received; /**< most messages any I/O server received from model ranks
                                     since tsr_init (with concentrators: their bundles),
                                     known when server_writer_s is */
  int64_t reduce_bytes; /**< memory this rank holds for the accumulators of reduce= (time
                             statistics of its tiles, docs/reductions.md) */
  int64_t server_reduce_bytes; /**< strategy=servers: the accumulators of reduce= that I/O
                                    server 0 holds, known when server_writer_s is */
} tsr_stats;

/** Fill @p st with this rank's totals. Not collective. @return 0, TSR_EINVAL.
 * @param ctx the context.
 * @param st  receives the totals.
 */
TSR_EXTERN int tsr_get_stats(const tsr_ctx *ctx, tsr_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_H */
