/* Staging, the placement half (docs/staging.md): which files go through the
 * fast tier named by the stage_dir hint, the name a file has there, and the
 * one rename protocol every finished file follows, staged or not.
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

/* A staged file `<stage_dir>/<name>` carries `<stage_dir>/<name>.tessera-dest`
 * (line 1: the final path, line 2: the staged size in bytes) from the moment
 * it is complete until its verified copy has been renamed into place. */
#define TSR__DEST_SUFFIX ".tessera-dest"
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

/* The one rename protocol: @p tmp (complete) becomes @p final, or is removed
 * when it cannot. Returns 0, TSR_ENOSPC or TSR_EACCES; *oserr holds errno. */
int tsr__promote(const char *tmp, const char *final, int *oserr, char *msg, size_t msglen);

/* When a staged file was complete: the modification time of its marker
 * (written at commit, just before the staged file takes its name), or of the
 * staged file itself when it has no marker. 1 from the marker, 0 from the
 * staged file, -1 (errno set) when neither can be read. */
int tsr__stage_made(const char *staged, struct timespec *made);

/* tsr__promote for a drain, a conversion or a recovery, which may run long
 * after the file was closed: @p tmp takes @p made as its modification time
 * (the final file then says when its data were complete, as `cp -p` would),
 * and replaces @p final only when @p final is not newer than @p made. A file
 * that a rerun or another job wrote there meanwhile is never replaced by an
 * older one: TSR_EBUSY, @p tmp removed, the staged file left to the caller. */
int tsr__promote_made(const char *tmp, const char *final, const struct timespec *made,
                      int *oserr, char *msg, size_t msglen);

/* Commit of a staged file on its renamer: write the marker, promote
 * `<staged>.tessera-tmp` to @p staged, and hand it to the drain (started now,
 * or by tsr_finalize when @p at_finalize). On failure
 * nothing is left in the stage and the error is returned (TSR_ENOSPC when the
 * stage is full). */
int tsr__stage_commit(const char *staged, const char *final, int at_finalize, int *oserr,
                      char *msg, size_t msglen);

/* The TSR_E* of a failed file operation of the tier (copy, log, marker):
 * a full or over-quota disk or a file too large is TSR_ENOSPC, ENOMEM
 * TSR_ENOMEM, EIO TSR_EIO, anything else TSR_EACCES. */
int tsr__tier_errno_code(int e);

/* write(2) until all @p n bytes are written (EINTR retried); -1 with errno
 * set (ENOSPC for a write that made no progress) otherwise. */
int tsr__write_full(int fd, const void *buf, size_t n);


/* The hash in staged names (FNV-1a of a path; 64 bits): the final path's in
 * staged output, so two destinations with one base name differ; the input's
 * resolved path in stage-in copies (`tessera stage in` computes the same). */
uint64_t tsr__stage_path_hash(const char *p);

/* A 64-bit checksum of a byte stream, updated in pieces (the drain verifies
 * every copy with it). Not cryptographic: it catches short, torn or
 * misplaced copies, which is what a copy can get wrong. */
typedef struct {
  uint64_t lane[4];
  unsigned char tail[32];
  size_t ntail;
  uint64_t total;
} tsr__sum64;
void tsr__sum64_init(tsr__sum64 *c);
void tsr__sum64_update(tsr__sum64 *c, const void *data, size_t n);
uint64_t tsr__sum64_final(const tsr__sum64 *c);

#endif
