/* Hint values with structure (quantize=bitround:12, chunks=1x64x64): the
 * key table in hints.c points at one codec per such key, which parses the
 * text into the key's field and prints it back in the form it accepts. */
#ifndef TSR_CORE_HINTS_VALUES_H
#define TSR_CORE_HINTS_VALUES_H

#include <stddef.h>

typedef struct {
  /* Parse NUL-terminated @p text into @p field (zeroed by the caller, the
   * size of the key's field). Returns 0, or -1 when the text is invalid. */
  int (*parse)(const char *text, void *field);
  /* The canonical text of @p field, which parse accepts. */
  void (*format)(const void *field, char *buf, size_t cap);
  const char *expected; /* what a valid value looks like, for messages */
  /* 1: the value may contain ':' (the parser lets it run on over following
   * tokens that hold no '='). */
  int colon_args;
} tsr__hint_codec;

extern const tsr__hint_codec tsr__hint_quantize; /* field: tsr__quantize */
extern const tsr__hint_codec tsr__hint_chunks;   /* field: tsr__chunks */
extern const tsr__hint_codec tsr__hint_shards;   /* field: tsr__chunks */
extern const tsr__hint_codec tsr__hint_reduce;        /* field: tsr__reduce (core/reduce_spec.h) */
extern const tsr__hint_codec tsr__hint_reduce_prefix; /* field: tsr__hint_name */
extern const tsr__hint_codec tsr__hint_concentrators; /* field: int (-1 per_node, N >= 1) */

#endif
