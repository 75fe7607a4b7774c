/* Hints: the parsed form of a hint string (docs/hints.md).
 *
 * A hint string is one or more groups separated by ','; a group is
 * `[glob:]key=value[:key=value...]`. The first token of a group that holds no
 * '=' is a file-name glob. For a given path, the unglobbed groups apply in
 * order, then the first globbed group whose glob matches the path (or its base
 * name) applies over them. Sources merge with precedence
 * environment (TESSERA_HINTS) > tsr_create's hints > tsr_init's hints.
 */
#ifndef TSR_CORE_HINTS_H
#define TSR_CORE_HINTS_H

#include <stddef.h>
#include <stdint.h>

/* A spelling of an enumerated hint value and the number it stands for; a
 * table ends with {NULL, 0}. The first spelling of a value is canonical. */
typedef struct {
  const char *text;
  int value;
} tsr__choice;

#define TSR__NAME_MAX 16 /* strategy and backend names, NUL included */

/* One pass-through hint for MPI_Info (MPI-IO and PnetCDF keys). */
typedef struct {
  char key[64];
  char value[256];
} tsr__kv;

#define TSR__MAX_PASSTHROUGH 32

/* quantize= mode:N (NetCDF 4.9 nc_def_var_quantize); the numbers are NetCDF's
 * NC_QUANTIZE_* (the backend maps them, core includes no NetCDF header). */
enum { TSR__QUANTIZE_NONE = 0, TSR__QUANTIZE_BITGROOM = 1, TSR__QUANTIZE_GRANULARBR = 2,
       TSR__QUANTIZE_BITROUND = 3 };
typedef struct {
  int mode; /* TSR__QUANTIZE_* */
  int nsd;  /* significant digits (bitgroom, granularbr) or bits (bitround) */
} tsr__quantize;

/* chunks= auto (n 0: one horizontal level per chunk) | contiguous (n -1) |
 * AxBx... (n > 0 lengths for the last n non-record dimensions). */
#define TSR__CHUNKS_MAX 8
#define TSR__CHUNKS_CONTIGUOUS (-1)
typedef struct {
  int n;
  int64_t len[TSR__CHUNKS_MAX];
} tsr__chunks;

/* The types of hint fields that hold text (core/hint_keys.h's ctype). */
typedef char tsr__hint_name[TSR__NAME_MAX]; /* a name of a registry; "" = not chosen */
typedef char tsr__hint_path[256];           /* a path; "" = none */

#include "core/reduce_spec.h"
#include "core/hint_keys.h"

/* TSR__HI_<BIT>: the key's index in TSR__HINT_KEYS (its printing order). */
enum {
#define TSR__HINT_INDEX(key, BIT, field, ctype, type, arg, mem, dflt) TSR__HI_##BIT,
  TSR__HINT_KEYS(TSR__HINT_INDEX)
#undef TSR__HINT_INDEX
  TSR__NHINT_KEYS
};
_Static_assert(TSR__NHINT_KEYS <= 64, "tsr__hints.set has 64 bits, one per hint key");

/* TSR__H_<BIT>: bits of tsr__hints.set, which fields a source set, so merging
 * knows. Constants, not an enum: an enumerator is an int and there are more
 * than 31 keys. TSR__HBIT(BIT) is the same bit as a constant expression (for
 * static initializers and case labels). */
#define TSR__HBIT(BIT) ((uint64_t)1 << TSR__HI_##BIT)
#define TSR__HINT_BIT(key, BIT, field, ctype, type, arg, mem, dflt) \
  static const uint64_t TSR__H_##BIT = TSR__HBIT(BIT);
TSR__HINT_KEYS(TSR__HINT_BIT)
#undef TSR__HINT_BIT

/* One field per key of core/hint_keys.h (the meaning of each value is in
 * docs/hints.md; the numbers of a CHOICE key are its choice table's, in
 * api/hints.c), then the pass-through keys. */
typedef struct tsr__hints {
  uint64_t set; /* TSR__H_* bits of the fields given explicitly */
#define TSR__HINT_FIELD(key, BIT, field, ctype, type, arg, mem, dflt) ctype field;
  TSR__HINT_KEYS(TSR__HINT_FIELD)
#undef TSR__HINT_FIELD
  int npass;                   /* pass-through keys for MPI_Info, in order given */
  tsr__kv pass[TSR__MAX_PASSTHROUGH];
} tsr__hints;

/* Defaults for every field, nothing marked as set. */
void tsr__hints_defaults(tsr__hints *h);

/*
 * Parse @p text (may be NULL or empty: no change) and merge the groups that
 * apply to @p path into @p h (fields the text sets override h's). @p path NULL
 * means "no file yet" (tsr_init): only unglobbed groups apply, except that the
 * server layout keys (strategy=servers, io_groups, io_tasks, server_ranks, io_placement) are
 * taken from any group, since servers must exist before any file is created.
 * Returns 0, or TSR_EHINT with a message naming the key in @p err.
 * Unknown keys are errors unless the merged result has strict == 0, in which
 * case they are skipped (and logged when TESSERA_VERBOSE is set).
 */
int tsr__hints_parse(const char *text, const char *path, tsr__hints *h, char *err, size_t errlen);

/* Apply the three sources in precedence order: init_text, then create_text,
 * then the TESSERA_HINTS environment variable. */
int tsr__hints_resolve(const char *init_text, const char *create_text, const char *path,
                       tsr__hints *h, char *err, size_t errlen);

/* Parse a size with optional k/m/g suffix (powers of 1024). Returns 0 or -1. */
int tsr__parse_size(const char *s, int64_t *out);

/* Format the hints in effect as one hint string (for display and stats). */
void tsr__hints_format(const tsr__hints *h, char *out, size_t outlen);

#endif
