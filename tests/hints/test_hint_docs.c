/* The doc table row check: every key of core/hint_keys.h has a row in the
 * table of keys of docs/hints.md (the one headed "| key | type | default |
 * meaning |"), and every row of that table names a key, once.
 * Usage: test_hint_docs PATH/docs/hints.md. No MPI_Init. */
#include <stdio.h>
#include <string.h>

#include "core/hint_keys.h"
#include "tsr_test.h"

/* The key names, straight from the list (the other columns are not expanded,
 * so none of the parser's tables is needed here). */
#define KEY_NAME(key, BIT, field, ctype, type, arg, mem, dflt) #key,
static const char *const keys[] = {TSR__HINT_KEYS(KEY_NAME)};
#define NKEYS (sizeof keys / sizeof keys[0])

enum { MAX_ROWS = 256 };

static int key_index(const char *name) {
  for (size_t i = 0; i < NKEYS; i++)
    if (strcmp(keys[i], name) == 0) return (int)i;
  return -1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "docs/hints.md";
  FILE *fp = fopen(path, "r");
  TSR_CHECKF(fp != NULL, "cannot open %s", path);
  if (!fp) return tsr_test_verdict("hint_docs");
  char line[8192], rows[MAX_ROWS][64];
  int in_table = 0, found_table = 0, nrows = 0;
  while (fgets(line, sizeof line, fp)) {
    if (!in_table) {
      if (strncmp(line, "| key | type | default | meaning |", 34) == 0) in_table = found_table = 1;
      continue;
    }
    if (line[0] != '|') break; /* the table ends at its first line that is not a row */
    if (strncmp(line, "| ---", 5) == 0) continue;
    /* A row starts "| `key` |". */
    char name[64];
    const char *p = line + 1;
    while (*p == ' ') p++;
    size_t n = 0;
    if (*p == '`')
      for (p++; *p && *p != '`' && n + 1 < sizeof name; p++) name[n++] = *p;
    name[n] = '\0';
    tsr_test_case("docs row '%.60s'", name);
    TSR_CHECKF(n > 0 && *p == '`', "a row of the keys table does not start with `key`: %.80s", line);
    if (n == 0 || nrows == MAX_ROWS) continue;
    TSR_CHECKF(key_index(name) >= 0, "docs/hints.md has a row for '%s', which core/hint_keys.h "
               "does not list", name);
    int twice = 0;
    for (int i = 0; i < nrows; i++) twice |= strcmp(rows[i], name) == 0;
    TSR_CHECKF(!twice, "docs/hints.md has two rows for '%s'", name);
    snprintf(rows[nrows++], sizeof rows[0], "%s", name);
  }
  fclose(fp);
  tsr_test_case("%s", "table");
  TSR_CHECKF(found_table, "%s has no table headed '| key | type | default | meaning |'", path);
  for (size_t k = 0; k < NKEYS; k++) {
    int seen = 0;
    for (int i = 0; i < nrows; i++) seen |= strcmp(rows[i], keys[k]) == 0;
    tsr_test_case("key '%s'", keys[k]);
    TSR_CHECKF(seen, "core/hint_keys.h lists '%s', which has no row in docs/hints.md's table",
               keys[k]);
  }
  return tsr_test_verdict("hint_docs");
}
