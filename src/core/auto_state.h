/* strategy=auto's state file (TESSERA_AUTO_STATE, docs/auto.md): what one
 * job learned about its output streams, for the next job of the same case. */
#ifndef TSR_CORE_AUTO_STATE_H
#define TSR_CORE_AUTO_STATE_H

#include <mpi.h>

#include "core/auto_rule.h"

/* The streams as text (malloc'd; NULL on ENOMEM). */
char *tsr__auto_state_text(const tsr__auto_stream *list);
/* Streams from text, appended to *list: 0, or -1 for text that is not a
 * state file (what was read before the bad line is kept). */
int tsr__auto_state_parse(const char *text, tsr__auto_stream **list);
/* Collective: rank 0 reads @p path and every rank parses the same bytes.
 * A missing file is no error (a first job); a bad one is logged and skipped. */
void tsr__auto_state_load(MPI_Comm comm, const char *path, tsr__auto_stream **list);
/* Rank 0 writes the streams to @p path (through a temporary and a rename,
 * so a job killed meanwhile leaves the old state). */
void tsr__auto_state_save(int rank, const char *path, const tsr__auto_stream *list);
void tsr__auto_streams_free(tsr__auto_stream **list);

#endif
