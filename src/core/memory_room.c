/* Memory a process may allocate (contract in core/memory_room.h). */
#include "core/memory_room.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A cgroup v1 "unlimited" is PAGE_COUNTER_MAX pages, about 2^63; anything
 * this large is no limit. */
#define UNLIMITED_ABOVE ((int64_t)1 << 62)

/* Keep the bound @p bytes, described by @p what, when it is the tightest. */
static void take(tsr__memory_room *r, int64_t bytes, const char *what) {
  if (bytes < 0) bytes = 0;
  if (bytes >= r->bytes) return;
  r->bytes = bytes;
  snprintf(r->what, sizeof r->what, "%s", what);
}

/* A "Key:   N kB" line of /proc/self/status, in bytes; -1 when absent. */
static int64_t status_kb(const char *key) {
  FILE *fp = fopen("/proc/self/status", "r");
  if (!fp) return -1;
  char line[256];
  size_t n = strlen(key);
  long long kb = -1;
  while (fgets(line, sizeof line, fp))
    if (strncmp(line, key, n) == 0 && line[n] == ':' && sscanf(line + n + 1, "%lld", &kb) == 1)
      break;
  fclose(fp);
  return kb < 0 ? -1 : (int64_t)kb * 1024;
}

/* What rlimit @p which leaves above @p used bytes already taken. */
static void rlimit_room(tsr__memory_room *r, int which, const char *status_key,
                        const char *name) {
  struct rlimit rl;
  if (getrlimit(which, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  int64_t used = status_kb(status_key);
  if (used < 0) used = 0;
  int64_t limit = rl.rlim_cur > (rlim_t)INT64_MAX ? INT64_MAX : (int64_t)rl.rlim_cur;
  char what[sizeof r->what];
  snprintf(what, sizeof what, "what %s of %lld bytes leaves it", name, (long long)limit);
  take(r, limit - used, what);
}

/* One number from the first line of a file ("max" and absence: -1). */
static int64_t read_limit(const char *path) {
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  long long v = -1;
  char word[32] = "";
  if (fscanf(fp, "%31s", word) == 1 && strcmp(word, "max") != 0) v = strtoll(word, NULL, 10);
  fclose(fp);
  return v > 0 && v < UNLIMITED_ABOVE ? (int64_t)v : -1;
}

/* cgroup v1 keeps the effective limit (its own and every ancestor's) in
 * memory.stat as hierarchical_memory_limit. */
static int64_t v1_limit(const char *dir, char *where, size_t cap) {
  char path[4096];
  snprintf(path, sizeof path, "%s/memory.stat", dir);
  FILE *fp = fopen(path, "r");
  long long v = -1;
  if (fp) {
    char line[256];
    while (fgets(line, sizeof line, fp))
      if (sscanf(line, "hierarchical_memory_limit %lld", &v) == 1) break;
    fclose(fp);
  }
  if (v <= 0 || v >= UNLIMITED_ABOVE) {
    snprintf(path, sizeof path, "%s/memory.limit_in_bytes", dir);
    v = read_limit(path);
  }
  if (v <= 0 || v >= UNLIMITED_ABOVE) return INT64_MAX;
  snprintf(where, cap, "%s", path);
  return v;
}

/* cgroup v2: every ancestor's memory.max binds too, up to the mount. */
static int64_t v2_limit(const char *mount, const char *dir, char *where, size_t cap) {
  char path[4096];
  int64_t best = INT64_MAX;
  snprintf(path, sizeof path, "%s", dir);
  size_t keep = strlen(mount);
  for (;;) {
    char file[4200];
    snprintf(file, sizeof file, "%s/memory.max", path);
    int64_t v = read_limit(file);
    if (v > 0 && v < best) {
      best = v;
      snprintf(where, cap, "%s", file);
    }
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) < keep) break;
    *slash = '\0';
  }
  return best;
}

/* The mount of hierarchy @p v2 (1: cgroup2; 0: v1 with the memory
 * controller) and its root, from mountinfo. */
static int find_mount(const char *mountinfo, int v2, char *mount, char *root, size_t cap) {
  FILE *fp = fopen(mountinfo, "r");
  if (!fp) return -1;
  char line[4096];
  int found = -1;
  while (found < 0 && fgets(line, sizeof line, fp)) {
    char r[1024], m[1024], fstype[64], opts[1024];
    const char *dash = strstr(line, " - ");
    if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
        sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
      continue;
    int is_v1_memory = strcmp(fstype, "cgroup") == 0 &&
                       (strstr(opts, ",memory") || strncmp(opts, "memory", 6) == 0);
    if (v2 ? strcmp(fstype, "cgroup2") == 0 : is_v1_memory) {
      snprintf(mount, cap, "%s", m);
      snprintf(root, cap, "%s", r);
      found = 0;
    }
  }
  fclose(fp);
  return found;
}

int64_t tsr__cgroup_limit(const char *proc_cgroup, const char *mountinfo, char *where,
                          size_t cap) {
  FILE *fp = fopen(proc_cgroup, "r");
  if (!fp) return INT64_MAX;
  char line[4096];
  int64_t best = INT64_MAX;
  while (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\n")] = '\0';
    /* hierarchy-ID:controllers:path; v2 is "0::path". */
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c2 = '\0';
    const char *controllers = c1 + 1, *cg = c2 + 1;
    int v2 = controllers[0] == '\0';
    int memory = !v2 && (strcmp(controllers, "memory") == 0 || strstr(controllers, "memory,") ||
                         strstr(controllers, ",memory"));
    if (!v2 && !memory) continue;
    char mount[1024], root[1024], dir[4096], w[4200] = "";
    if (find_mount(mountinfo, v2, mount, root, sizeof mount) != 0) continue;
    /* The cgroup's path is relative to the hierarchy's root, which the
     * mount may show only part of (containers mount their own subtree). */
    size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (rl && strncmp(cg, root, rl) != 0) continue;
    snprintf(dir, sizeof dir, "%s%s", mount, cg + rl);
    size_t dl = strlen(dir);
    if (dl > 1 && dir[dl - 1] == '/') dir[dl - 1] = '\0';
    int64_t v = v2 ? v2_limit(mount, dir, w, sizeof w) : v1_limit(dir, w, sizeof w);
    if (v < best) {
      best = v;
      if (where && cap) snprintf(where, cap, "%s", w);
    }
  }
  fclose(fp);
  return best;
}

void tsr__memory_room_get(tsr__memory_room *r) {
  r->bytes = INT64_MAX;
  r->what[0] = '\0';
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) take(r, (int64_t)pages * page, "this node's physical memory");
  rlimit_room(r, RLIMIT_AS, "VmSize", "the address-space limit RLIMIT_AS (ulimit -v)");
  rlimit_room(r, RLIMIT_DATA, "VmData", "the data-segment limit RLIMIT_DATA (ulimit -d)");
  char where[150] = "", what[sizeof r->what];
  int64_t cg = tsr__cgroup_limit("/proc/self/cgroup", "/proc/self/mountinfo", where, sizeof where);
  snprintf(what, sizeof what, "the memory limit of its cgroup (%s)", where);
  if (cg < INT64_MAX) take(r, cg, what);
}

int tsr__memory_can_allocate(int64_t bytes) {
  if (bytes <= 0) return 1;
  if ((uint64_t)bytes > (uint64_t)SIZE_MAX) return 0;
  void *p = malloc((size_t)bytes);
  free(p);
  return p != NULL;
}
