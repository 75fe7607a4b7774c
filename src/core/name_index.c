/* The name index (contract in core/name_index.h). */
#include "core/name_index.h"

#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tsr__name_index {
  struct hsearch_data tab;
  const void *base; /* the array the keys point into */
  int cap;          /* entries the table was made for */
  int n;            /* records indexed */
};

static const char *name_at(const void *base, size_t stride, int i) {
  return (const char *)base + (size_t)i * stride;
}

static int enter(tsr__name_index *ix, const char *name, int i) {
  /* hsearch_r's ENTRY has a non-const key; it never writes through it. */
  ENTRY e = {(char *)(uintptr_t)name, (void *)(intptr_t)i}, *got;
  return hsearch_r(e, ENTER, &got, &ix->tab) != 0;
}

void tsr__name_index_free(tsr__name_index **ix) {
  if (!ix || !*ix) return;
  hdestroy_r(&(*ix)->tab);
  free(*ix);
  *ix = NULL;
}

/* A table holding all @p n records with room for as many again before it
 * is half full (hsearch_r's open addressing slows as it fills, and it
 * cannot grow): rebuilt only each time the records double. */
static tsr__name_index *build(const void *base, size_t stride, int n) {
  tsr__name_index *ix = calloc(1, sizeof *ix);
  if (!ix) return NULL;
  ix->cap = n < 16 ? 64 : 4 * n;
  if (!hcreate_r((size_t)ix->cap, &ix->tab)) {
    free(ix);
    return NULL;
  }
  ix->base = base;
  for (int i = 0; i < n; i++)
    if (!enter(ix, name_at(base, stride, i), i)) {
      tsr__name_index_free(&ix);
      return NULL;
    }
  ix->n = n;
  return ix;
}

void tsr__name_index_added(tsr__name_index **ix, const void *base, size_t stride, int n) {
  tsr__name_index *x = *ix;
  if (x && x->base == base && x->n == n - 1 && 2 * n <= x->cap &&
      enter(x, name_at(base, stride, n - 1), n - 1)) {
    x->n = n;
    return;
  }
  tsr__name_index_free(ix);
  *ix = build(base, stride, n);
}

int tsr__name_index_find(const tsr__name_index *ix, const void *base, size_t stride, int n,
                         const char *name) {
  if (ix && ix->base == base && ix->n == n) {
    ENTRY e = {(char *)(uintptr_t)name, NULL}, *got = NULL;
    /* FIND does not change the table; hsearch_r's signature just is not const. */
    struct hsearch_data *tab = (struct hsearch_data *)(uintptr_t)&ix->tab;
    return hsearch_r(e, FIND, &got, tab) && got ? (int)(intptr_t)got->data : -1;
  }
  for (int i = 0; i < n; i++) /* no index (it could not be allocated): scan */
    if (strcmp(name_at(base, stride, i), name) == 0) return i;
  return -1;
}
