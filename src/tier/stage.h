/* Staging, the placement half (docs/staging.md): which files go through the
 * fast tier named by the stage_dir hint, the name a file has there, and the
 * commit that hands a staged file to the drain. The one rename protocol every
 * finished file follows, staged or not, is in tier/fs.h (included here).
 *
 * This layer moves finished files and knows no file format: it sits below
 * src/backend/ (the sink calls it at create and commit) and includes only
 * core services. */
#ifndef TSR_TIER_STAGE_H
#define TSR_TIER_STAGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/hints.h"
#include "core/schema.h"
#include "tier/fs.h" /* the rename protocol, TSR__DEST_SUFFIX: what stage.h offered before */

/* Same text as TSR__TMP_SUFFIX in backend/sink.h: one protocol, one suffix.
 * Kept here too because this layer sits below the sink. */
#define TSR__STAGE_TMP_SUFFIX ".tessera-tmp"

/* Bytes the file will hold according to its schema: every fixed variable,
 * plus frames_per_outfile records of the record variables (one record when
 * the number of records is not known at enddef). Headers are not counted. */
int64_t tsr__stage_schema_bytes(const tsr__schema *s, int frames);

/* 1 when the hints send a file with this schema through the stage: stage_dir
 * is set and the schema holds at least stage_min_bytes. The same answer on
 * every rank, since hints and schema are agreed. */
int tsr__stage_wanted(const tsr__hints *h, const tsr__schema *s);

/* Collective over @p comm: the name the file for @p final gets in the stage,
 * built on rank 0 (base name, a hash of the final path, rank 0's pid and a
 * sequence number, so that a file drained while the same path is written
 * again never collides) and broadcast. *staged is malloc'd. Rank 0 also checks
 * that the destination directory takes a new file, so that an unwritable
 * destination is an error at create and not a surprise at drain time.
 * Returns 0 or TSR_E*, with a message in @p msg on the failing rank. */
int tsr__stage_name(MPI_Comm comm, const char *stage_dir, const char *final, char **staged,
                    char *msg, size_t msglen);

/* Commit of a staged file on its renamer: write the marker, promote
 * `<staged>.tessera-tmp` to @p staged, and hand it to the drain (started now,
 * or by tsr_finalize when @p at_finalize). On failure
 * nothing is left in the stage and the error is returned (TSR_ENOSPC when the
 * stage is full). @p manifest (NULL: none) are the file's manifest lines
 * (tier/manifest.h): the marker carries them, and the drain appends them
 * beside @p final once the file is there. */
int tsr__stage_commit(const char *staged, const char *final, int at_finalize,
                      const char *manifest, int *oserr,
                      char *msg, size_t msglen);

/* The hash in staged names (FNV-1a of a path; 64 bits): the final path's in
 * staged output, so two destinations with one base name differ; the input's
 * resolved path in stage-in copies (`tessera stage in` computes the same). */
uint64_t tsr__stage_path_hash(const char *p);

#endif
