/* Text inputs of tessera-bench (namelists, CDL schemas), read with a size
 * bound: `--namelist /dev/zero` once read until memory ran out (issue 25).
 * Knows nothing of MPI or Tessera, so the namelist reader's tests link it. */
#ifndef TSR_BENCH_TEXT_FILE_H
#define TSR_BENCH_TEXT_FILE_H

#include <stddef.h>

/* The most a namelist or schema may hold: WRF's are kilobytes; a CDL with a
 * data section could be megabytes. Anything larger is not one. */
#define BENCH_TEXT_MAX ((size_t)64 << 20)
#define BENCH_TEXT_MAX_TEXT "64 MiB"

/* The whole text file @p path, NUL-terminated, in *@p text (malloc'd, the
 * caller frees it) and its length in *@p len. A file larger than
 * BENCH_TEXT_MAX (devices and pipes included: at most that much is read), or
 * one holding NUL bytes, is refused. @p what names the input in messages
 * ("namelist", "schema"). Returns 0, or -1 with "PATH: reason" in @p err. */
int bench_text_read(const char *path, const char *what, char **text, size_t *len, char *err,
                    size_t errlen);

/* 1 when @p path is a regular file (not a device, pipe or directory). */
int bench_text_is_regular(const char *path);

#endif
