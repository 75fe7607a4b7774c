/* WRF namelist.input reader for tessera-bench.
 *
 * Reads the Fortran namelist groups WRF uses and keeps the few entries the
 * bench needs. Knows nothing of MPI or Tessera, so tests link it alone.
 * Per-domain lists (`e_we = 425, 301,`) keep the first value (domain 1).
 * Unknown groups and keys are skipped, as a real namelist has hundreds.
 */
#ifndef TSR_BENCH_NAMELIST_H
#define TSR_BENCH_NAMELIST_H

#include <stddef.h>

/* One integer entry: value and the line it came from (0 = absent). */
typedef struct {
  long value;
  int line;
} bench_nl_int;

typedef struct {
  /* &time_control */
  bench_nl_int run_days, run_hours, run_minutes, run_seconds;
  bench_nl_int start_year, start_month, start_day, start_hour, start_minute, start_second;
  bench_nl_int history_interval; /* minutes */
  bench_nl_int frames_per_outfile;
  bench_nl_int io_form_history;
  /* &domains */
  bench_nl_int e_we, e_sn, e_vert;
  bench_nl_int time_step; /* seconds */
  bench_nl_int nproc_x, nproc_y;
  /* &namelist_quilt */
  bench_nl_int nio_groups, nio_tasks_per_group;
} bench_namelist;

/* Parse namelist text. @p name names the source in messages ("namelist.input").
 * Returns 0, or -1 with "name:LINE: what is wrong" in err. */
int bench_namelist_parse(const char *text, const char *name, bench_namelist *nl, char *err,
                         size_t errlen);

/* Read and parse a file. Returns 0 or -1 with a message in err. */
int bench_namelist_read(const char *path, bench_namelist *nl, char *err, size_t errlen);

/* Tessera hints for io_form_history and quilting: io_form 2 -> serial,
 * 11 -> direct, 12 -> aggregate, 102 -> split; nio_tasks_per_group > 0 ->
 * servers (io_form 2: netcdf group roots, 11: pnetcdf groups). Writes "" when
 * the namelist sets neither. Returns 0, or -1 with "name:LINE: ..." in err. */
int bench_namelist_hints(const bench_namelist *nl, const char *name, char *hints, size_t n,
                         char *err, size_t errlen);

#endif
