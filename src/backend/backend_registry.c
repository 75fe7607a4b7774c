/* Backend registry: the one place (with CMake) that knows which backends were
 * built. A backend left out of the build stays listed with NULL ops, so its
 * name answers TSR_ENOTBUILT rather than looking like a typo (TSR_EHINT). */
#include <string.h>

#include "backend/backend.h"

static const struct {
  const char *name;
  const tsr__backend_ops *ops; /* NULL: known but not built */
} registry[] = {
    {"netcdf", &tsr__backend_netcdf},
#ifdef TESSERA_HAVE_PNETCDF
    {"pnetcdf", &tsr__backend_pnetcdf},
#else
    {"pnetcdf", NULL},
#endif
    {"null", &tsr__backend_null},
};

int tsr__backend_find(const char *name, const tsr__backend_ops **ops) {
  if (ops) *ops = NULL;
  if (!name || !ops) return TSR_EINVAL;
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
    if (strcmp(registry[i].name, name) != 0) continue;
    if (!registry[i].ops) return TSR_ENOTBUILT;
    *ops = registry[i].ops;
    return 0;
  }
  return TSR_EHINT;
}
