/* A cost-model profile read with json-c (contract in core/cost_profile.h).
 * Every field the first ranking prices must be there: python/tessera/model
 * reads an absent parameter as 0 (free), which in a hand-written profile is
 * more often a slip than a claim, so here it is refused with the field's
 * name and auto ranks with its fixed constants instead. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "core/cost_profile.h"

static const char *const keys[TSR__COST_NKEYS] = {
#define TSR__COST_NAME(id, key, rate) key,
    TSR__COST_KEYS(TSR__COST_NAME)
#undef TSR__COST_NAME
};

static int is_number(json_object *o) {
  return json_object_is_type(o, json_type_double) || json_object_is_type(o, json_type_int);
}

/* A number >= @p least (an integer when @p integer) at @p key of @p obj. */
static int number(json_object *obj, const char *where, const char *key, double least, int integer,
                  double *out, const char *origin, char *err, size_t errlen) {
  json_object *v;
  if (!json_object_object_get_ex(obj, key, &v)) {
    snprintf(err, errlen, "%s: no field '%s%s'", origin, where, key);
    return -1;
  }
  double d = is_number(v) ? json_object_get_double(v) : -1.0;
  if (!is_number(v) || d < least || (integer && d != (double)(int64_t)d) || d != d) {
    snprintf(err, errlen, "%s: field '%s%s' is not %s", origin, where, key,
             integer ? (least > 0 ? "a positive integer" : "a whole number >= 0")
                     : "a number >= 0");
    return -1;
  }
  *out = d;
  return 0;
}

int tsr__cost_profile_parse(const char *text, const char *origin, tsr__cost_profile *p,
                            char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  enum json_tokener_error jerr = json_tokener_success;
  json_object *root = json_tokener_parse_verbose(text, &jerr);
  if (!root || !json_object_is_type(root, json_type_object)) {
    snprintf(err, errlen, "%s: not a JSON object (%s)", origin,
             root ? "another JSON value" : json_tokener_error_desc(jerr));
    json_object_put(root);
    return -1;
  }
  int rc = -1;
  json_object *values, *o;
  double d[3];
  if (!json_object_object_get_ex(root, "values", &values) ||
      !json_object_is_type(values, json_type_object)) {
    snprintf(err, errlen, "%s: no field 'values' (an object of the model's parameters)", origin);
    goto out;
  }
  for (int k = 0; k < TSR__COST_NKEYS; k++)
    if (number(values, "values.", keys[k], 0.0, 0, &p->value[k], origin, err, errlen)) goto out;
  if (number(root, "", "cores", 0.0, 1, &d[0], origin, err, errlen) ||
      number(root, "", "cb_nodes", 0.0, 1, &d[1], origin, err, errlen) ||
      number(root, "", "cb_buffer_bytes", 1.0, 1, &d[2], origin, err, errlen))
    goto out;
  if (!json_object_object_get_ex(root, "mpi_yield", &o) ||
      !json_object_is_type(o, json_type_boolean)) {
    snprintf(err, errlen, "%s: no field 'mpi_yield' (true or false)", origin);
    goto out;
  }
  p->cores = (int)d[0];
  p->cb_nodes = (int)d[1];
  p->cb_buffer_bytes = (int64_t)d[2];
  p->mpi_yield = json_object_get_boolean(o);
  if (json_object_object_get_ex(root, "name", &o) && json_object_is_type(o, json_type_string))
    snprintf(p->name, sizeof p->name, "%s", json_object_get_string(o));
  rc = 0;
out:
  json_object_put(root);
  return rc;
}
