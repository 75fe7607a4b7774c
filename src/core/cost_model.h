/* The cost model's prediction for one file of the synchronous strategies
 * (python/tessera/model/strategy.py and predict.py, ported for
 * strategy=auto's first ranking): the seconds the model ranks are blocked
 * writing one frame into one file, on the busiest rank, priced by a
 * profile and stretched as the profile's cores say. Strategies are named by
 * the enum below (their names live in src/strategy/). */
#ifndef TSR_CORE_COST_MODEL_H
#define TSR_CORE_COST_MODEL_H

#include <stdint.h>

#include "core/cost_case.h"
#include "core/cost_profile.h"

enum {
  TSR__COST_SERIAL,    /* one writer, slabs gathered to it */
  TSR__COST_DIRECT,    /* every rank writes its tile, MPI-IO two-phase */
  TSR__COST_AGGREGATE, /* tiles rearranged onto N writers' contiguous slabs */
};

typedef struct {
  int kind;        /* TSR__COST_* */
  int aggregators; /* TSR__COST_AGGREGATE: N (0: ranks / 4) */
  int ranks;       /* processes, every one a model rank */
  int64_t slab_bytes, buffer_bytes; /* the file's hints (serial's slabs, direct's buffer) */
  double interval_s; /* compute seconds before the file (0: unknown) */
} tsr__cost_run;

/* Predicted blocked seconds of one file of one frame (predict.py's
 * per_output_s of a run of one frame per file: the frame, the file's create
 * and close, and the wait for the slowest rank's compute when ranks share
 * the profile's cores unevenly). */
double tsr__cost_predict(const tsr__cost_case *c, const tsr__cost_profile *p,
                         const tsr__cost_run *r);

#endif
