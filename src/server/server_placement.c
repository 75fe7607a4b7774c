/* io_placement: this rank's position among the servers' ranks
 * (server_placement.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle/handles.h"
#include "server/server_placement.h"

/* The node of this rank: the lowest rank of comm that shares its memory
 * (MPI_COMM_TYPE_SHARED), or entry @p rank of TESSERA_TEST_NODE_OF. */
static int node_of(MPI_Comm comm, int rank, int *node) {
  const char *fake = getenv("TESSERA_TEST_NODE_OF");
  if (fake && *fake) {
    const char *p = fake;
    for (int r = 0; r < rank && p; r++) {
      p = strchr(p, ',');
      if (p) p++;
    }
    if (!p) return TSR_EHINT; /* fewer entries than ranks: a broken test */
    *node = atoi(p);
    return 0;
  }
  MPI_Comm shared;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared) != MPI_SUCCESS)
    return TSR_EMPI;
  int rc = MPI_Allreduce(&rank, node, 1, MPI_INT, MPI_MIN, shared) == MPI_SUCCESS ? 0 : TSR_EMPI;
  MPI_Comm_free(&shared);
  return rc;
}

/* Mark the ranks of whole nodes, from the last node down (or the first up),
 * until S are marked; -1 when S is no sum of whole nodes, with the node
 * sizes met in @p sizes. */
static int mark_whole_nodes(const int *node, int size, int S, int from_first, char *server,
                            char *sizes, size_t n) {
  int marked = 0, len = 0;
  sizes[0] = '\0';
  for (int k = 0; k < size && marked < S; k++) {
    int r = from_first ? k : size - 1 - k;
    if (server[r]) continue;
    int count = 0;
    for (int q = 0; q < size; q++) count += node[q] == node[r];
    if (len < (int)n) len += snprintf(sizes + len, n - (size_t)len, "%s%d", len ? " + " : "", count);
    for (int q = 0; q < size; q++)
      if (node[q] == node[r]) server[q] = 1;
    marked += count;
  }
  return marked == S ? 0 : -1;
}

int tsr__srv_placement_key(MPI_Comm comm, const tsr__hints *h, const tsr__srv_layout *L, int *key) {
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  *key = rank;
  if (!h->io_placement_nodes) return 0;
  int me;
  int rc = tsr__agree(comm, node_of(comm, rank, &me));
  if (rc) return rc;
  int *node = malloc((size_t)size * sizeof *node);
  char *server = calloc((size_t)size, 1);
  rc = node && server ? 0 : TSR_ENOMEM;
  rc = tsr__agree(comm, rc);
  if (!rc && MPI_Allgather(&me, 1, MPI_INT, node, 1, MPI_INT, comm) != MPI_SUCCESS) rc = TSR_EMPI;
  rc = tsr__agree(comm, rc);
  char sizes[256];
  /* Every rank decides from the same table: the outcome is the same everywhere. */
  if (!rc && mark_whole_nodes(node, size, L->S, L->first, server, sizes, sizeof sizes) != 0) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "io_placement=nodes: io_groups x io_tasks = %d servers fill no whole nodes: the %s "
             "nodes hold %s ranks; ask for a number of servers that whole nodes hold",
             L->S, L->first ? "first" : "last", sizes);
    TSR_LOG("%s", msg);
    tsr__set_last_error(msg);
    rc = TSR_ESERVERS;
  }
  if (!rc) {
    /* Model ranks, then servers (server_ranks=last), each in rank order. */
    int before = 0;
    for (int r = 0; r < rank; r++) before += server[r] == server[rank];
    int base = server[rank] ? (L->first ? 0 : L->M) : (L->first ? L->S : 0);
    *key = base + before;
  }
  free(node);
  free(server);
  return rc;
}
