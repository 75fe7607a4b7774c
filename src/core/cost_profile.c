/* Which profile a job's first ranking uses (contract in core/cost_profile.h):
 * TESSERA_PROFILE names a JSON file; without it the shipped default, the
 * profile the Python tools take when none is named (`here`), whose text
 * CMake compiles in (tessera_default_profile.h), so a library used from its
 * build tree and one installed anywhere rank alike and read no file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost_profile.h"
#include "core/text_bcast.h"
#include "core/verbose.h"
#include "tessera_default_profile.h"

static const int is_rate[TSR__COST_NKEYS] = {
#define TSR__COST_RATE(id, key, rate) rate,
    TSR__COST_KEYS(TSR__COST_RATE)
#undef TSR__COST_RATE
};

double tsr__cost_unit(const tsr__cost_profile *p, int key) {
  double v = p->value[key];
  if (is_rate[key]) return v > 0.0 ? 1.0 / v : 0.0;
  return v;
}

/* A profile is a few hundred bytes; anything near this is not one. */
#define PROFILE_MAX (1L << 20)

int tsr__cost_profile_load(MPI_Comm comm, tsr__cost_profile *p, char *note, size_t notelen) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  /* Rank 0's environment decides, so every rank reads the same profile. */
  char path[1024] = "";
  const char *env = getenv("TESSERA_PROFILE");
  if (rank == 0 && env) snprintf(path, sizeof path, "%s", env);
  MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, comm);
  char origin[1100], why[200];
  if (!path[0]) {
    snprintf(origin, sizeof origin, "the shipped profile '%s'", TSR__DEFAULT_PROFILE_NAME);
    if (tsr__cost_profile_parse((const char *)tsr__default_profile, origin, p, note, notelen)) return -1;
    return 0;
  }
  snprintf(origin, sizeof origin, "TESSERA_PROFILE '%s'", path);
  char *text = NULL;
  int missing = 0, rc = 1;
  if (tsr__text_bcast(comm, path, PROFILE_MAX, &text, &missing, why, sizeof why)) {
    snprintf(note, notelen, "%s %s", origin, why);
    rc = -1;
  } else if (tsr__cost_profile_parse(text, origin, p, note, notelen)) {
    rc = -1;
  }
  free(text);
  if (rc < 0) TSR_LOG("%s; strategy=auto ranks its first files with fixed constants", note);
  return rc;
}
