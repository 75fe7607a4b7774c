/* The value of the reduce= hint (docs/reductions.md): which time statistics
 * of which variables a stream of files gets in its derived files, parsed and
 * printed by the codec tsr__hint_reduce (core/hints_values.h). */
#ifndef TSR_CORE_REDUCE_SPEC_H
#define TSR_CORE_REDUCE_SPEC_H

#include <stdint.h>

/* The statistics, in the order their names are tried. */
typedef enum {
  TSR__RED_MEAN, TSR__RED_MIN, TSR__RED_MAX, TSR__RED_SUM, TSR__RED_COUNT, TSR__RED_STD,
  TSR__RED_NOPS
} tsr__reduce_op;

#define TSR__REDUCE_MAX 16      /* items of one reduce= value */
#define TSR__REDUCE_VAR 48      /* a variable name, NUL included */
#define TSR__REDUCE_GLOB 64     /* the hint group's glob, NUL included */

typedef struct {
  char var[TSR__REDUCE_VAR];
  int op; /* tsr__reduce_op */
} tsr__reduce_item;

typedef struct {
  int n;      /* items; 0: no reduce= (the default) */
  int period; /* frames per period; 0: each source file's frames */
  tsr__reduce_item item[TSR__REDUCE_MAX];
  /* The glob of the hint group that gave the value ("" unglobbed): the
   * stream's name, so that files of one stream share accumulators
   * (hints.c fills it in, not the codec). */
  char glob[TSR__REDUCE_GLOB];
} tsr__reduce;

/* "mean", "min", ...: the op's name in reduce=. */
const char *tsr__reduce_op_name(int op);
/* "MEAN", "MIN", ...: the suffix of the derived variable's name. */
const char *tsr__reduce_op_suffix(int op);
/* The CF cell_methods word: "mean", "minimum", "maximum", "sum", "point"
 * (count), "standard_deviation". */
const char *tsr__reduce_op_cf(int op);

#endif
