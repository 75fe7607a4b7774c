/* A small JSON reader for the Zarr v3 documents (format=zarr read side,
 * backend/zarr_read.c): the whole text parsed into a tree. Strings are
 * unescaped to bytes: \uXXXX to UTF-8, except \u0080..\u00ff, which the
 * writer (zarr_meta.c) uses for bytes that start no valid UTF-8 sequence and
 * which therefore come back as those single bytes. */
#ifndef TSR_BACKEND_ZARR_JSON_H
#define TSR_BACKEND_ZARR_JSON_H

#include <stddef.h>

enum { TSR__ZJ_NULL, TSR__ZJ_FALSE, TSR__ZJ_TRUE, TSR__ZJ_NUM, TSR__ZJ_STR, TSR__ZJ_ARR,
       TSR__ZJ_OBJ };

typedef struct tsr__zj {
  int type;
  char *key;            /* the member's name inside an object, else NULL */
  char *str;            /* TSR__ZJ_STR: the bytes (NUL-terminated too); NUM: its text */
  size_t len;           /* bytes of str */
  double num;           /* TSR__ZJ_NUM */
  int is_int;           /* a number without '.', 'e' or 'E' */
  struct tsr__zj *kids; /* ARR and OBJ: the elements or members, in order */
  int nkids;
} tsr__zj;

/* Parse @p n bytes at @p text into *out. 0, or -1 with a reason in @p why. */
int tsr__zj_parse(const char *text, size_t n, tsr__zj *out, char *why, size_t whylen);
void tsr__zj_free(tsr__zj *j);
/* The member @p key of object @p j, or NULL (also when j is NULL or no object). */
const tsr__zj *tsr__zj_get(const tsr__zj *j, const char *key);

#endif
