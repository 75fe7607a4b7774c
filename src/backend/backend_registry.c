/* Backend registry: the one place (with CMake) that knows which backends exist
 * and which were built, and which one serves a writer or a reader that names
 * none. A backend left out of the build stays listed with NULL ops, so its
 * name answers TSR_ENOTBUILT rather than looking like a typo (TSR_EHINT).
 * Adding a backend: its file, one row here, one line in src/CMakeLists.txt. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/backend.h"
#include "backend/log.h"
#include "tessera.h"

extern const tsr__backend_ops tsr__backend_netcdf;
extern const tsr__backend_ops tsr__backend_null;
extern const tsr__backend_ops tsr__backend_netcdf4;
extern const tsr__backend_ops tsr__backend_log;
#ifdef TESSERA_HAVE_ECCODES
extern const tsr__backend_ops tsr__backend_grib2;
#define TSR__GRIB2_OPS (&tsr__backend_grib2)
#else
#define TSR__GRIB2_OPS NULL
#endif
#ifdef TESSERA_HAVE_ZARR
extern const tsr__backend_ops tsr__backend_zarr;
#define TSR__ZARR_OPS (&tsr__backend_zarr)
#else
#define TSR__ZARR_OPS NULL
#endif
#ifdef TESSERA_HAVE_PNETCDF
extern const tsr__backend_ops tsr__backend_pnetcdf;
#define TSR__PNETCDF_OPS (&tsr__backend_pnetcdf)
#else
#define TSR__PNETCDF_OPS NULL
#endif

/* Formats as bits of the NC_FORMAT_* numbers the schema and hints use:
 * 1 classic, 2 CDF-2, 3 netCDF-4, 4 netCDF-4 classic model, 5 CDF-5; and
 * 16 GRIB2 and 17 Zarr v3 (no NetCDF numbers). */
#define F(n) (1u << (n))
#define CLASSIC (F(1) | F(2) | F(5))
#define NC4 (F(3) | F(4))

/* Default roles: for each, the built row with the lowest rank (> 0) among
 * those that handle the file's format serves a writer or reader that names
 * no backend; so format=netcdf4 alone selects netcdf4. The first bit of
 * `writes` is the format a backend named without format= writes. */
static const struct {
  const char *name;
  const tsr__backend_ops *ops; /* NULL: known but not built */
  int serial_rank, parallel_rank, read_rank;
  unsigned writes, reads; /* F(format) bits */
} registry[] = {
    {"netcdf", &tsr__backend_netcdf, 1, 0, 2, F(2) | F(5), CLASSIC | NC4},
    {"pnetcdf", TSR__PNETCDF_OPS, 0, 1, 1, F(2) | F(5), CLASSIC},
    {"netcdf4", &tsr__backend_netcdf4, 1, 1, 1, F(3), NC4},
    {"grib2", TSR__GRIB2_OPS, 1, 1, 0, F(16), 0},
    {"zarr", TSR__ZARR_OPS, 1, 1, 3, F(17), F(17)},
    {"null", &tsr__backend_null, 0, 0, 0, ~0u, 0},
    /* Last, and not a value of the backend= hint: a staged log
     * (stage_format=log, backend/log.h), which tsr_open picks by itself for
     * a log directory; written only through a stage. */
    {"log", &tsr__backend_log, 0, 0, 1, 0, F(TSR__LOG_FORMAT)},
};
#define NROWS ((int)(sizeof registry / sizeof registry[0]))
#define NLISTED (NROWS - 1) /* the rows the backend= hint names */

const tsr__choice tsr__format_choices[] = {
    {"cdf2", 2}, {"cdf5", 5}, {"netcdf4", 3}, {"grib2", 16}, {"zarr", 17}, {"64bit_offset", 2},
    {"64bit_data", 5},
    {NULL, 0}};

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
  for (int i = 0; i < NLISTED; i++)
    if (strlen(registry[i].name) == n && memcmp(registry[i].name, name, n) == 0) return 1;
  return 0;
}

/* The one layout that stacks over a backend: a staged file's writers append
 * to logs that the drain converts (stage_format=log). A backend that cuts
 * whole levels (grib2) needs its writers' order of flushes, which a log does
 * not keep. */
int tsr__backend_stack(const tsr__hints *h, int staged, const tsr__backend_ops *below,
                       const tsr__backend_ops **io, tsr__berr *err) {
  const tsr__backend_ops *over = &tsr__backend_log;
  *io = below;
  if (!staged || !h->stage_format_log) return 0;
  if (below->whole_levels) {
    if (err)
      snprintf(err->message, sizeof err->message,
               "%s cannot stand for backend '%s' (whole levels); use %s", over->stacked,
               below->name, over->unstacked);
    return TSR_EHINT;
  }
  *io = over;
  return 0;
}

enum { SERIAL, PARALLEL, READ };

static int rank_of(int i, int role) {
  return role == SERIAL ? registry[i].serial_rank
         : role == PARALLEL ? registry[i].parallel_rank : registry[i].read_rank;
}

static int handles(int i, int role, int format) {
  if (format <= 0 || format > 31) return 1; /* unknown: any row may try */
  return ((role == READ ? registry[i].reads : registry[i].writes) & F(format)) != 0;
}

/* The default row for a role and format; with @p built_only 0 also a row not
 * built, so the caller reports TSR_ENOTBUILT with its name. */
static const char *first_for(int role, int format, int built_only) {
  int best = -1;
  for (int i = 0; i < NROWS; i++) {
    int r = rank_of(i, role);
    if (r > 0 && handles(i, role, format) && (registry[i].ops || !built_only) &&
        (best < 0 || r < rank_of(best, role)))
      best = i;
  }
  return best < 0 ? NULL : registry[best].name;
}

const char *tsr__backend_default_write(int want, int format) {
  switch (want) {
  case TSR__BACKEND_WANT_PARALLEL: {
    /* A format no parallel backend writes gets its serial one: a strategy
     * that can use one writer does; direct then says it needs a parallel
     * backend. */
    const char *p = first_for(PARALLEL, format, 0);
    return p ? p : first_for(SERIAL, format, 1);
  }
  case TSR__BACKEND_PREFER_PARALLEL: {
    const char *p = first_for(PARALLEL, format, 1);
    return p ? p : first_for(SERIAL, format, 1);
  }
  default: return first_for(SERIAL, format, 1);
  }
}

int tsr__backend_write_format(const char *name, int given, int *format) {
  for (int i = 0; i < NROWS; i++) {
    if (strcmp(registry[i].name, name) != 0) continue;
    if (registry[i].writes & F(*format)) return 0;
    if (given) return TSR_EHINT;
    for (int b = 1; b < 32; b++)
      if (registry[i].writes & F(b)) return *format = b, 0;
  }
  return TSR_EHINT;
}

/* The format of an existing file from its first bytes: the classic magic
 * "CDF" + version, or HDF5's signature (netCDF-4). 0 when unknown or
 * unreadable (the reader's open then says why). */
static int sniff_format(const char *path) {
  /* Both a store and a log are directories: each is known by its own
   * document (zarr.json; a log's schema with its magic). */
  char doc[4096];
  struct stat sb;
  if (path && snprintf(doc, sizeof doc, "%s/zarr.json", path) < (int)sizeof doc &&
      stat(doc, &sb) == 0 && S_ISREG(sb.st_mode))
    return 17; /* a Zarr v3 store: a directory with its root document */
  if (tsr__log_is_log(path)) return TSR__LOG_FORMAT;
  unsigned char m[8] = {0};
  FILE *fp = path ? fopen(path, "rb") : NULL;
  if (!fp) return 0;
  size_t n = fread(m, 1, sizeof m, fp);
  fclose(fp);
  if (n >= 4 && memcmp(m, "CDF", 3) == 0) return m[3] == 1 ? 1 : m[3] == 2 ? 2 : m[3] == 5 ? 5 : 0;
  if (n == 8 && memcmp(m, "\x89HDF\r\n\x1a\n", 8) == 0) return 3;
  return 0;
}

/* The best built reader of @p format (0: any) that can open @p path. */
static const char *best_reader(const char *path, int format) {
  int best = -1;
  for (int i = 0; i < NROWS; i++) {
    const tsr__backend_ops *ops = registry[i].ops;
    if (registry[i].read_rank <= 0 || !ops || !handles(i, READ, format)) continue;
    if (ops->can_open && !ops->can_open(path)) continue;
    if (best < 0 || registry[i].read_rank < registry[best].read_rank) best = i;
  }
  return best < 0 ? NULL : registry[best].name;
}

const char *tsr__backend_default_read(const char *path) {
  const char *name = best_reader(path, sniff_format(path));
  return name ? name : best_reader(path, 0);
}

int tsr__backend_count(void) { return NLISTED; }

const char *tsr__backend_name_at(int i) { return i >= 0 && i < NLISTED ? registry[i].name : NULL; }
