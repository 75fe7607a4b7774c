/* A machine profile of the cost model (python/tessera/model/profile.py,
 * docs/model.md) as strategy=auto's first ranking reads it: the parameters
 * that price the synchronous strategies' amounts, and the machine facts
 * that stretch them. Read from TESSERA_PROFILE (a JSON file, rank 0 reads,
 * every rank parses the same bytes), else the shipped default profile
 * (python/tessera/profiles/here.json, compiled in at configure time). */
#ifndef TSR_CORE_COST_PROFILE_H
#define TSR_CORE_COST_PROFILE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The parameters, in profile.py's PARAMS order: index, JSON key, 1 when
 * stored as a rate (B/s: the per-unit cost is its inverse, 0 = free). */
#define TSR__COST_KEYS(X)   \
  X(COPY, "copy_bw", 1)     \
  X(NET, "net_bw", 1)       \
  X(MSG, "msg_s", 0)        \
  X(MATCH, "match_s", 0)    \
  X(COLL, "coll_s", 0)      \
  X(WRITE, "write_bw", 1)   \
  X(FS, "fs_bw", 1)         \
  X(REQ, "req_s", 0)        \
  X(FILE, "file_s", 0)      \
  X(OPEN, "open_s", 0)      \
  X(SLICE, "slice_s", 0)    \
  X(PIECE, "piece_s", 0)    \
  X(MPIIO, "mpiio_bw", 1)

enum {
#define TSR__COST_ENUM(id, key, rate) TSR__COST_##id,
  TSR__COST_KEYS(TSR__COST_ENUM)
#undef TSR__COST_ENUM
  TSR__COST_NKEYS
};

typedef struct tsr__cost_profile_s {
  char name[64];
  double value[TSR__COST_NKEYS]; /* as stored: B/s or seconds */
  int cores;                     /* 0: one core per process */
  int cb_nodes;                  /* 0: the MPI-IO's own choice */
  int64_t cb_buffer_bytes;
  int mpi_yield; /* waiting ranks yield their core once processes outnumber cores */
} tsr__cost_profile;

/* Seconds per unit of amount @p key (1/rate for rates; 0 for a rate of 0). */
double tsr__cost_unit(const tsr__cost_profile *p, int key);

/* Parse a profile's JSON @p text; @p origin names it in messages. 0, or -1
 * with one sentence in @p err naming the origin and the field (a missing
 * or non-numeric field, text that is not JSON, a build without json-c). */
int tsr__cost_profile_parse(const char *text, const char *origin, tsr__cost_profile *p,
                            char *err, size_t errlen);

/* Collective: the profile of this job. 1: read from TESSERA_PROFILE (rank
 * 0's); 0: the shipped default; -1: neither could be read, with the reason
 * in @p note (the same on every rank: every rank parses the same bytes). */
int tsr__cost_profile_load(MPI_Comm comm, tsr__cost_profile *p, char *note, size_t notelen);

#endif
