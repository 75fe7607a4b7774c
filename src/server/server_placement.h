/* Where the I/O servers sit among tsr_init's ranks (io_placement=). The
 * servers' protocol numbers ranks of its own communicator wcomm (the last or
 * first S of it are the servers, server_layout.h); placement is the order of
 * tsr_init's ranks in wcomm, so every formula of the layout stays as it is.
 *
 * io_placement=ranks (default): wcomm keeps the ranks' order, and the servers
 * are the last (or first, server_ranks=) io_groups x io_tasks ranks, as WRF
 * quilting and CDI-PIO place them.
 * io_placement=nodes: the servers are every rank of whole nodes (the nodes
 * MPI_COMM_TYPE_SHARED finds), taken from the last nodes (or the first), so
 * that no model rank shares a node, its memory bandwidth or its network link
 * with a server; a layout that no whole nodes make is refused. */
#ifndef TSR_SERVER_PLACEMENT_H
#define TSR_SERVER_PLACEMENT_H

#include <mpi.h>

#include "core/hints.h"
#include "server/server_layout.h"

/* Collective over @p comm. *key: this rank's position in wcomm (for
 * MPI_Comm_split). Returns 0, TSR_ESERVERS (the same on every rank, with a
 * sentence in the library's log and last error) or TSR_EMPI.
 * TESSERA_TEST_NODE_OF="n0,n1,..." (tests only) fakes the node of each rank
 * (e.g. "0,1,2,0,1,2": three nodes filled round-robin, as `--map-by node`
 * places ranks), as a one-machine test cannot have several nodes. */
int tsr__srv_placement_key(MPI_Comm comm, const tsr__hints *h, const tsr__srv_layout *L, int *key);

#endif
