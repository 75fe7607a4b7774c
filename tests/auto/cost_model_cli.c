/* The C cost model on a case given as text, for tests/auto/check_cost_model.py,
 * which holds it to python/tessera/model on the same cases. No MPI. Reads
 * stdin:
 *
 *   profile PATH                  a profile JSON file (parsed as TESSERA_PROFILE's)
 *   dim NAME LEN                  LEN 0: the record dimension
 *   var NAME TYPE DIM...          TYPE char byte short int float double
 *   run KIND AGG RANKS SLAB BUFFER INTERVAL   KIND serial direct aggregate
 *
 * and prints, per run line, the predicted seconds of one file (%.17g); the
 * variables are read as the library reads a schema (core/cost_case.c).
 * A profile it refuses prints its sentence and exits 3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost_model.h"
#include "core/schema.h"

static char *slurp(const char *path) {
  FILE *fp = fopen(path, "r");
  if (!fp) return NULL;
  char *buf = malloc(1 << 20);
  size_t n = buf ? fread(buf, 1, (1 << 20) - 1, fp) : 0;
  fclose(fp);
  if (buf) buf[n] = '\0';
  return buf;
}

static tsr_type type_of(const char *t) {
  const char *names[] = {"byte", "char", "short", "int", "float", "double"};
  tsr_type types[] = {TSR_BYTE, TSR_CHAR, TSR_SHORT, TSR_INT, TSR_FLOAT, TSR_DOUBLE};
  for (int i = 0; i < 6; i++)
    if (strcmp(t, names[i]) == 0) return types[i];
  return (tsr_type)0;
}

int main(void) {
  tsr__schema sc;
  tsr__schema_init(&sc);
  tsr__cost_profile prof;
  int have_prof = 0;
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    char *tok = strtok(line, " \t\n");
    if (!tok) continue;
    if (strcmp(tok, "profile") == 0) {
      const char *path = strtok(NULL, " \t\n");
      char *text = path ? slurp(path) : NULL, err[512];
      if (!text || tsr__cost_profile_parse(text, path, &prof, err, sizeof err)) {
        printf("%s\n", text ? err : "profile: cannot be read");
        free(text);
        return 3;
      }
      free(text);
      have_prof = 1;
    } else if (strcmp(tok, "dim") == 0) {
      const char *name = strtok(NULL, " \t\n"), *len = strtok(NULL, " \t\n");
      int id;
      if (!name || !len || tsr__schema_add_dim(&sc, name, atoll(len), &id)) return 2;
    } else if (strcmp(tok, "var") == 0) {
      const char *name = strtok(NULL, " \t\n"), *type = strtok(NULL, " \t\n");
      int dimids[TSR_MAX_DIMS], nd = 0, id;
      for (char *d; (d = strtok(NULL, " \t\n")) && nd < TSR_MAX_DIMS;) {
        int k = 0;
        while (k < sc.ndims && strcmp(sc.dims[k].name, d) != 0) k++;
        if (k == sc.ndims) return 2;
        dimids[nd++] = k;
      }
      if (!name || !type || !type_of(type) ||
          tsr__schema_add_var(&sc, name, type_of(type), nd, dimids, &id))
        return 2;
    } else if (strcmp(tok, "run") == 0) {
      const char *kind = strtok(NULL, " \t\n");
      tsr__cost_run r = {.kind = strcmp(kind, "serial") == 0   ? TSR__COST_SERIAL
                                 : strcmp(kind, "direct") == 0 ? TSR__COST_DIRECT
                                                               : TSR__COST_AGGREGATE};
      r.aggregators = atoi(strtok(NULL, " \t\n"));
      r.ranks = atoi(strtok(NULL, " \t\n"));
      r.slab_bytes = atoll(strtok(NULL, " \t\n"));
      r.buffer_bytes = atoll(strtok(NULL, " \t\n"));
      r.interval_s = atof(strtok(NULL, " \t\n"));
      tsr__cost_case c;
      if (!have_prof || tsr__cost_case_from_schema(&sc, &c) < 0) return 2;
      printf("%.17g\n", tsr__cost_predict(&c, &prof, &r));
      tsr__cost_case_free(&c);
    }
  }
  tsr__schema_free(&sc);
  return 0;
}
