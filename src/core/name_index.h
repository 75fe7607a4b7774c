/* A hash index over the names of a growing array of records (the schema's
 * variables and dimensions), so that a duplicate-name check or a lookup by
 * name costs O(1) instead of a scan: defining N variables was O(N^2) and took
 * minutes at N = 100k (issue 25). Built on glibc's hsearch_r, a maintained
 * facility, rather than a table of our own. */
#ifndef TSR_CORE_NAME_INDEX_H
#define TSR_CORE_NAME_INDEX_H

#include <stddef.h>

typedef struct tsr__name_index tsr__name_index;

/* Records @p n - 1 just appended to the array @p base of @p n records of
 * @p stride bytes, each beginning with its NUL-terminated name (unique).
 * The index keeps pointers into the array, so it rebuilds itself when the
 * array has moved (realloc) or its table is half full: with an array that
 * grows geometrically, the total cost stays linear. On allocation failure
 * the index is dropped (*ix = NULL) and lookups fall back to scanning. */
void tsr__name_index_added(tsr__name_index **ix, const void *base, size_t stride, int n);
/* The position of @p name among the @p n records at @p base, or -1. */
int tsr__name_index_find(const tsr__name_index *ix, const void *base, size_t stride, int n,
                         const char *name);
void tsr__name_index_free(tsr__name_index **ix);

#endif
