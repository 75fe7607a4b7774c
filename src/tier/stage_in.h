/* Stage-in of inputs (docs/staging.md): tsr_open with the stage_dir hint
 * reads a copy in the fast tier, made once per node. */
#ifndef TSR_TIER_STAGE_IN_H
#define TSR_TIER_STAGE_IN_H

#include <mpi.h>
#include <stddef.h>

/* Collective over @p comm. One rank per node (MPI_Comm_split_type SHARED)
 * copies @p path to `<stage_dir>/<base>.<hash>.in` (base name and FNV-1a hash
 * of the resolved path, as `tessera stage in` names it) unless a copy with
 * the source's size and modification time is already there (rsync's quick
 * check: a later open, or another job on the node, reuses it); the others
 * wait for it, so the source is read once per node, not once per rank (the
 * ExPBB namelist problem). The copy follows the rename protocol (temporary,
 * verified, renamed). *local (malloc'd) is the path to open. Returns the
 * status agreed over @p comm, with the reason in @p msg where it failed. */
int tsr__stage_in(MPI_Comm comm, const char *path, const char *stage_dir, char **local,
                  char *msg, size_t msglen);

#endif
