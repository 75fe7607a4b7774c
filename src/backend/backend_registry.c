/* Backend registry: the one place (with CMake) that knows which backends exist
 * and which were built, and which one serves a writer or a reader that names
 * none. A backend left out of the build stays listed with NULL ops, so its
 * name answers TSR_ENOTBUILT rather than looking like a typo (TSR_EHINT).
 * Adding a backend: its file, one row here, one line in src/CMakeLists.txt. */
#include <string.h>

#include "backend/backend.h"
#include "tessera.h"

extern const tsr__backend_ops tsr__backend_netcdf;
extern const tsr__backend_ops tsr__backend_null;
#ifdef TESSERA_HAVE_PNETCDF
extern const tsr__backend_ops tsr__backend_pnetcdf;
#define TSR__PNETCDF_OPS (&tsr__backend_pnetcdf)
#else
#define TSR__PNETCDF_OPS NULL
#endif

/* Default roles: for each, the built row with the lowest rank (> 0) serves a
 * writer or reader that names no backend. */
static const struct {
  const char *name;
  const tsr__backend_ops *ops; /* NULL: known but not built */
  int serial_rank, parallel_rank, read_rank;
} registry[] = {
    {"netcdf", &tsr__backend_netcdf, 1, 0, 2},
    {"pnetcdf", TSR__PNETCDF_OPS, 0, 1, 1},
    {"null", &tsr__backend_null, 0, 0, 0},
};
#define NROWS ((int)(sizeof registry / sizeof registry[0]))

int tsr__backend_find(const char *name, const tsr__backend_ops **ops) {
  if (ops) *ops = NULL;
  if (!name || !ops) return TSR_EINVAL;
  for (int i = 0; i < NROWS; i++) {
    if (strcmp(registry[i].name, name) != 0) continue;
    /* A backend compiled against another version of backend.h would read
     * the table wrongly: it counts as not built. */
    if (!registry[i].ops || registry[i].ops->version != TSR__BACKEND_VERSION) return TSR_ENOTBUILT;
    *ops = registry[i].ops;
    return 0;
  }
  return TSR_EHINT;
}

int tsr__backend_known(const char *name, size_t n) {
  for (int i = 0; i < NROWS; i++)
    if (strlen(registry[i].name) == n && memcmp(registry[i].name, name, n) == 0) return 1;
  return 0;
}

enum { SERIAL, PARALLEL, READ };

static int rank_of(int i, int role) {
  return role == SERIAL ? registry[i].serial_rank
         : role == PARALLEL ? registry[i].parallel_rank : registry[i].read_rank;
}

/* The default row for a role; with @p built_only 0 also a row not built, so
 * the caller reports TSR_ENOTBUILT with its name. */
static const char *first_for(int role, int built_only) {
  int best = -1;
  for (int i = 0; i < NROWS; i++) {
    int r = rank_of(i, role);
    if (r > 0 && (registry[i].ops || !built_only) && (best < 0 || r < rank_of(best, role))) best = i;
  }
  return best < 0 ? NULL : registry[best].name;
}

const char *tsr__backend_default_write(int want) {
  switch (want) {
  case TSR__BACKEND_WANT_PARALLEL: return first_for(PARALLEL, 0);
  case TSR__BACKEND_PREFER_PARALLEL: {
    const char *p = first_for(PARALLEL, 1);
    return p ? p : first_for(SERIAL, 1);
  }
  default: return first_for(SERIAL, 1);
  }
}

const char *tsr__backend_default_read(const char *path) {
  int best = -1;
  for (int i = 0; i < NROWS; i++) {
    const tsr__backend_ops *ops = registry[i].ops;
    if (registry[i].read_rank <= 0 || !ops || (ops->can_open && !ops->can_open(path))) continue;
    if (best < 0 || registry[i].read_rank < registry[best].read_rank) best = i;
  }
  return best < 0 ? NULL : registry[best].name;
}

int tsr__backend_count(void) { return NROWS; }

const char *tsr__backend_name_at(int i) { return i >= 0 && i < NROWS ? registry[i].name : NULL; }
