/* The bottom of the internal headers: what every service of src/core and
 * every layer above may use. It knows no handle (tsr_ctx, tsr_file,
 * tsr_decomp: handle/handles.h), so a service cannot reach into one. */
#ifndef TSR_CORE_BASE_H
#define TSR_CORE_BASE_H

#include <mpi.h>
#include <stdint.h>

#include "core/agree.h"
#include "core/verbose.h"
#include "tessera.h"

/* Record the message tsr_last_error() returns on this thread. */
void tsr__set_last_error(const char *msg);
static inline double tsr__now(void) { return MPI_Wtime(); }
/* Grow a reusable buffer to at least @p need bytes (never shrinks). */
int tsr__grow(void **buf, int64_t *cap, int64_t need);

#endif
