/* The internal shape of contexts, decompositions and files: the handles the
 * API layer (src/api) makes and hands to the strategies (src/strategy) and the
 * servers' model side (src/server), and what this layer (src/handle) does with
 * them: decompositions and their plan caches, a file's agreed status. The
 * services below (src/core) see none of this; they include core/base.h. */
#ifndef TSR_HANDLE_HANDLES_H
#define TSR_HANDLE_HANDLES_H

#include "backend/sink.h"
#include "core/base.h"
#include "core/define_log.h"
#include "core/hints.h"
#include "core/schema.h"
#include "core/stats.h"
#include "plan/plan.h"
#include "plan/runs.h"

struct tsr__server_client;  /* state of the strategy that owns dedicated ranks */
struct tsr__reducer;        /* reduce= streams of a context (api/reduce_state.h) */
struct tsr__rstream;        /* one of them */
struct tsr__reader;         /* a file opened for reading (src/api/read.c) */
struct tsr__strategy_ops;   /* src/strategy/strategy.h */

struct tsr_ctx {
  MPI_Comm comm; /* model communicator (private duplicate, MPI_ERRORS_RETURN) */
  int rank, size;
  char *init_hints;    /* tsr_init's hint text, re-resolved for every file */
  tsr__hints hints;    /* tsr_init's hints resolved without a path */
  tsr_stats stats;     /* this rank's running totals */
  uint64_t next_id;    /* ids of decompositions, for plan caches */
  /* The strategy that set dedicated ranks aside at tsr_init, and its state;
   * NULL without. */
  const struct tsr__strategy_ops *ranks_owner;
  struct tsr__server_client *servers;
  int nopen;           /* files open on this context */
  /* The last agreed failure of a collective call on this context that lost
   * output (tsr__ctx_failed) and its message: the servers return it from
   * tsr_init (docs/servers.md), so that every rank of a failed job exits
   * with the same code. */
  int last_failure;
  char last_message[256];
  struct tsr__auto_ctx *autos; /* strategy=auto's streams (core/auto.h); NULL without */
  struct tsr__reducer *reduce; /* reduce= accumulators (core/reduce.c); NULL until used */
};

struct tsr_decomp {
  tsr_ctx *ctx;
  uint64_t id;
  int ndims;
  int64_t gsize[TSR_MAX_DIMS];
  tsr__box tile; /* this rank's tile */
  tsr__box mem;  /* this rank's memory box (contains tile) */
  int64_t *all;  /* every rank's tile: size * 2 * ndims (start then count) */
  int64_t my_elems, owned_elems, total_elems;
  int nholes;     /* boxes no rank owns (filled with the fill value) */
  tsr__box *holes;
  tsr__plan *plans;
  tsr__tiles tiles; /* the plan engine's view of the above (set once) */
  /* Decompositions the strategies cannot read in place (handle/decomp_map.c):
   * index maps, several boxes per rank, a memory order other than the
   * file's. tsr_put packs the caller's buffer into what `canon` describes (a
   * box with no halo, or flat runs in index order) and hands `canon` to the
   * strategy; tsr_get unpacks. NULL for plain boxes. */
  struct tsr_decomp *canon;
  tsr__span *spans; /* buffer -> index order; NULL when the buffer already is */
  int64_t nspans;
  int32_t *perm;    /* instead of spans when they are mostly single elements
                       (shuffled maps): packed[j] = buf[perm[j]], 4 bytes each */
  int ordered;              /* memory order: C-ordered over mem with dims order[] */
  int order[TSR_MAX_DIMS];
  int64_t *runs;            /* flat canon: the runs tiles.runs points to */
  int holes_here;           /* holes[] are this rank's share (flat canon): every rank writes its own */
};

/* A box decomposition (tsr_decomp_box's work); @p rc0 is this rank's status
 * from earlier checks, agreed in the same collective. */
/* Collective: agree on @p rc, then that every rank gave the same ndims and
 * gsize (TSR_EINVAL if not). */
int tsr__decomp_agree_shape(tsr_ctx *ctx, int rc, int ndims, const int64_t gsize[]);
int tsr__decomp_new_box(tsr_ctx *ctx, int rc0, int ndims, const int64_t gsize[],
                        const int64_t start[], const int64_t count[], const int64_t mstart[],
                        const int64_t mcount[], tsr_decomp **out);
/* Free what decomp_map.c added to a decomposition (canon, spans, runs). */
void tsr__decomp_free_extra(struct tsr_decomp *d);
/* Put: the buffer the strategy reads for @p d (packed into f's scratch when
 * d->canon is set, else @p buf itself). Local; may fail with TSR_ENOMEM. */
int tsr__decomp_pack(tsr_file *f, const struct tsr_decomp *d, size_t esize, const void *buf,
                     const void **out);

/* Get: @p packed (d->canon's elements: a file-ordered tile or runs in index
 * order) into the caller's buffer as @p d lays it out. Local. */
void tsr__decomp_unpack(const struct tsr_decomp *d, size_t esize, const void *packed,
                        void *buf);

/* Rank r's tile as a box. */
void tsr__decomp_tile_of(const struct tsr_decomp *d, int r, tsr__box *out);
/* This rank's tile inside its memory box, as a backend memview (both NULL when
 * memory holds exactly the tile); @p moffset is the storage it points to. */
tsr__memview tsr__decomp_tile_view(const struct tsr_decomp *d, int64_t moffset[TSR_MAX_DIMS]);

struct tsr_file {
  tsr_ctx *ctx;
  char *path;
  tsr__hints hints;
  const struct tsr__strategy_ops *strategy;
  const tsr__backend_ops *backend; /* chosen at create/open; called only through a sink */
  struct tsr__auto_file *autof;    /* strategy=auto's choice for this file (core/auto.h) */
  tsr__schema schema;
  int in_define; /* 1 in define mode */
  int lock_fd;   /* rank 0 of a file being written: the exclusive-output lock, else -1 */
  tsr__deflog deflog; /* define calls, agreed at enddef (unless safe_mode=1) */
  void *sdata;   /* strategy-private state */
  int last_err;
  tsr__berr berr;
  /* The first failure of a data call once its strategy ran (put, put_global,
   * flush: data may be lost), with its message; 0 while every one succeeded.
   * Sticky: tsr_close then removes the file instead of renaming it and
   * returns this code (file_close.c). Set from agreed codes, so the same on
   * every rank. */
  int failed;
  tsr__berr failed_berr;
  tsr__fstats st;
  /* Non-NULL for a file opened by tsr_open (src/api/read.c): read-only, in
   * data mode, with no strategy (strategy stays NULL). */
  struct tsr__reader *reader;
  /* 1 while a strategy's put runs on the caller's own array under
   * put_mode=deferred (api/file.c sets it): the backend may write from it
   * up to the file's next flush or close. 0 for a buffer the API layer
   * packed or converted into, which the next put reuses or frees. */
  int put_lent;
  void *pack;        /* scratch for decompositions with a canon (handle/decomp_map.c) */
  int64_t pack_cap;
  struct tsr__rstream *reduce; /* the reduce= stream the file feeds (core/reduce.c), or NULL */
  /* reduce= with a strategy whose writers fold (strategy.h, reduce_put):
   * what the put being made is in its stream (var 0: not reduced), set by
   * the API before the strategy's put; and, on a derived file, 1 when its
   * data are the writers' accumulators. */
  struct { int sid, var; int64_t seq, frame; } rput;
  int reduce_held;
};

/* Agree on a file's status (handle/file_agree.c); the backend message of the lowest failing rank
 * is copied to every rank's handle. */
int tsr__file_agree(tsr_file *f, int err);
/* The same once the code is agreed elsewhere: this rank's status was @p err,
 * the ranks agreed on @p agreed; returns @p agreed. Collective when @p
 * agreed is a failure other than TSR_EMPI. */
int tsr__file_agreed(tsr_file *f, int err, int agreed);

/* Remember an agreed failure @p code of @p ctx, with @p msg (may be NULL),
 * when it lost output (I/O, memory, MPI, TSR_EBUSY); other codes (a call
 * made wrongly, which the program handles) and 0 are ignored. */
void tsr__ctx_failed(tsr_ctx *ctx, int code, const char *msg);

/* A sink for this file's backend, counting into its statistics and error slot
 * (strategy/strategy_common.c). */
void tsr__file_sink(tsr_file *f, tsr__sink *s);

/* The plan of a decomposition for a layout, built on first use and cached.
 * owner/key1/key2 identify the layout; make_layout builds it when missing. */
typedef int (*tsr__layout_fn)(const tsr_decomp *d, const void *arg, tsr__layout *out);
int tsr__plan_get(tsr_decomp *d, const void *owner, int64_t key1, int64_t key2, size_t esize,
                  int phased, tsr__layout_fn make_layout, const void *arg, tsr__plan **out);

#endif
