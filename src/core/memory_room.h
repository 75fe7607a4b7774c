/* How much memory this process may really allocate: the smallest of the
 * node's physical memory, what RLIMIT_AS (ulimit -v) and RLIMIT_DATA
 * (ulimit -d) leave of the address space and data segment, and the memory
 * limit of the process's own cgroup (v2 memory.max up the hierarchy, v1
 * hierarchical_memory_limit). Size hints that make every rank allocate
 * (buffer_bytes, slab_bytes, server_buffer_bytes) are checked against it, so
 * a buffer that cannot exist is a hint error, not a SIGSEGV inside PnetCDF
 * at the first write (issue 25). */
#ifndef TSR_CORE_MEMORY_ROOM_H
#define TSR_CORE_MEMORY_ROOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int64_t bytes;  /* the tightest bound; INT64_MAX when none is known */
  /* Which bound it is, for messages: "this node's physical memory", "what the
   * address-space limit RLIMIT_AS (ulimit -v) of N bytes leaves it", "the
   * memory limit of its cgroup (FILE)". */
  char what[200];
} tsr__memory_room;

/* The room now, on this process (not collective: callers agree). */
void tsr__memory_room_get(tsr__memory_room *r);

/* The memory limit of the cgroup that @p proc_cgroup (the format of
 * /proc/self/cgroup) places the process in, found through the mounts in
 * @p mountinfo (the format of /proc/self/mountinfo); INT64_MAX when there is
 * none. @p where (cap bytes) names the limit's file. Separate so tests can
 * give it a made-up hierarchy. */
int64_t tsr__cgroup_limit(const char *proc_cgroup, const char *mountinfo, char *where,
                          size_t cap);

/* 1 when @p bytes can be had at once, tried with malloc and freed again
 * (untouched, so it costs an mmap and no pages): for libraries that do not
 * check their own allocation (PnetCDF 1.12's ncmpi_buffer_attach). */
int tsr__memory_can_allocate(int64_t bytes);

#endif
