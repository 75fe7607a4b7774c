/* The accumulators of reduce= streams, shared by core/reduce.c (folding
 * frames in, writing derived files) and core/reduce_partial.c (saving and
 * loading an incomplete period across jobs). */
#ifndef TSR_CORE_REDUCE_STATE_H
#define TSR_CORE_REDUCE_STATE_H

#include "api/api.h"
#include "core/hints_values.h"
#include "core/reduce_spec.h"

/* What the derived file needs of a source variable: its definition as the
 * latest source file of the stream gave it (dimension names and lengths,
 * the record dimension's as TSR_UNLIMITED, attributes copied). */
typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  int ndims;
  tsr__dim dims[TSR_MAX_DIMS];
  int natts;
  tsr__att *atts;
} tsr__rvar;

/* One statistic of one variable on this rank's tile: n elements, each with
 * its accumulator. */
typedef struct {
  int op;           /* tsr__reduce_op */
  int var;          /* index of its variable in the stream's vars */
  int64_t n;        /* elements of this rank's tile; -1 until the first put */
  tsr__box tile;    /* that tile (flat: count[0] = n), which must stay */
  int flat;
  double *sum;      /* mean, sum: the running sum; std: Welford's mean */
  double *m2;       /* std: Welford's sum of squared deviations */
  void *ext;        /* min, max: in the variable's type */
  int64_t frames;   /* frames folded into the current period */
  int64_t last_file, last_frame; /* the last frame folded (file serial, frame) */
  const tsr_decomp *vd; /* the decomposition of the latest put, for the derived file */
} tsr__racc;

typedef struct tsr__rstream {
  struct tsr__rstream *next;
  tsr__reduce spec;
  char prefix[TSR__NAME_MAX];
  tsr__hints hints; /* the latest source file's, reduce= removed: the derived file's */
  int nvars;
  tsr__rvar vars[TSR__REDUCE_MAX];
  int varid[TSR__REDUCE_MAX]; /* each var's id in the current source file */
  int nitems;
  tsr__racc items[TSR__REDUCE_MAX];
  tsr__rvar times;            /* Times, when the source has it */
  int has_times, times_varid;
  char *times_buf;            /* the latest frame's Times text, times_len bytes */
  int64_t times_len;
  int64_t file_serial;        /* serial of the current source file */
  char *first_path;           /* the file holding the period's first frame (NULL: none yet) */
  int64_t first_frame;
  char *last_path;            /* the file holding its latest frame */
  int64_t last_frame;
  char *partial;              /* the side file this period was loaded from, removed once written */
  /* The strategy's writers hold the accumulators (strategy.h, reduce_put):
   * this rank counts frames only. sid: the stream's number in the context;
   * vseq: each variable's frames put in this job. */
  int held, sid;
  int64_t vseq[TSR__REDUCE_MAX];
} tsr__rstream;

/* The streams of a context. */
typedef struct tsr__reducer {
  tsr__rstream *streams;
  int64_t files; /* source files seen, for file serials */
  int nstreams;  /* streams made, for their numbers */
} tsr__reducer;

/* Bytes of accumulator per element of @p op for a variable of @p type. */
int64_t tsr__racc_elem_bytes(int op, tsr_type type);
/* Allocate an item's arrays for @p n elements (counted in the statistics).
 * Returns 0 or TSR_ENOMEM. */
int tsr__racc_alloc(tsr_ctx *ctx, tsr__racc *a, tsr_type type, int64_t n);
/* The derived path of the file at @p src: its base name's first '_'-token
 * replaced by @p prefix, same directory (malloc'd; NULL when out of memory). */
char *tsr__reduce_derived_path(const char *src, const char *prefix);

/* Calls @p fn for each run of the tile of @p vd (an innermost row of the
 * tile inside its memory box, or all of a flat decomposition's elements)
 * with the run's offsets in memory and in the tile, in elements. */
typedef void (*tsr__reduce_run_fn)(void *arg, int64_t mem_off, int64_t tile_off, int64_t n);
void tsr__reduce_walk(const tsr_decomp *vd, tsr__reduce_run_fn fn, void *arg);

/* core/reduce_partial.c: save the stream's incomplete period into
 * "<derived path>.tessera-partial" (collective over ctx->comm, agreed). */
int tsr__reduce_partial_save(tsr_ctx *ctx, tsr__rstream *s, char *msg, size_t msglen);
/* The same when the strategy's writers hold the accumulators: model rank
 * 0 makes the header and the writers save (strategy.h, reduce_ctl). */
int tsr__reduce_partial_save_held(tsr_ctx *ctx, const struct tsr__strategy_ops *st,
                                  tsr__rstream *s);
/* Load the partial of stream @p s, if one lies beside @p path (the stream's
 * first source file of this job) and continues it; collective, agreed. */
int tsr__reduce_partial_load(tsr_ctx *ctx, tsr__rstream *s, const char *path, char *msg,
                             size_t msglen);

#endif
