/* The manifest beside the output (hint checksum=; docs/verify.md): a file
 * `tessera-manifest.jsonl` in each output directory, one JSON object per
 * line, one line per frame of each file Tessera committed there, written
 * after the file has its final name. A downstream reader (`tessera follow`)
 * may take any frame the manifest names: its file is complete.
 *
 * A line is added with one write(2) of O_APPEND, so lines of writers that
 * commit files in the same directory at once (one file per rank, several
 * streams) interleave whole, never mixed. The manifest is opened without
 * following a link (O_NOFOLLOW): a link planted under its name is refused. */
#ifndef TSR_TIER_MANIFEST_H
#define TSR_TIER_MANIFEST_H

#include <stddef.h>

#define TSR__MANIFEST_NAME "tessera-manifest.jsonl"

/* Append @p lines (whole lines, each ending in '\n') to the manifest of the
 * directory of @p final. 0, or a TSR_E* code with the reason in @p msg and
 * the errno in *oserr. */
int tsr__manifest_append(const char *final, const char *lines, int *oserr, char *msg,
                         size_t msglen);

/* A staged file's marker carries its manifest lines after the two lines it
 * has (tier/stage.c); once the drain has put the file at @p final, this
 * appends them. A marker without lines: 0, nothing done. */
int tsr__manifest_from_marker(const char *marker, const char *final, char *msg, size_t msglen);

#endif
