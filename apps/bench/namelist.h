/* WRF namelist.input reader for tessera-bench.
 *
 * Reads the Fortran namelist groups WRF uses and keeps the entries the bench
 * needs. Knows nothing of MPI or Tessera, so tests link it alone.
 *
 * It reads a real WRF namelist.input as WRF does:
 * - per-domain lists (`e_we = 425, 301,`) keep every column, repeat counts
 *   (`2*0`) and null values (`3*`) included; an entry's value is domain 1's
 *   until bench_namelist_pick_domain selects another column;
 * - text after the last group (job-script lines such as `LSF_TIME=0:30`) is
 *   ignored; text before the first group or between groups is an error;
 * - in the groups the bench reads (&time_control, &domains, &namelist_quilt)
 *   every key must be one WRF knows: a misspelt key stops the run with its
 *   line, as WRF stops on it; other groups (&physics, ...) are skipped;
 * - every value, in every group, must be a Fortran constant (integer, real,
 *   logical, quoted string, r*c repeat): junk such as `e_we = 101 @@` is an
 *   error with its line;
 * - &time_control and &domains must be present.
 */
#ifndef TSR_BENCH_NAMELIST_H
#define TSR_BENCH_NAMELIST_H

#include <stddef.h>

/* WRF's max_domains: the most columns a per-domain list holds. */
#define BENCH_NL_MAX_DOM 21

/* One entry's value and the line it came from (0 = absent). Integer and
 * logical entries (1 = .true.) use value; real entries use real. value and
 * real are domain 1's (column 1), or the picked domain's; col, rcol and has
 * keep every column a list gave. */
typedef struct {
  long value;
  double real;
  int line;
  long col[BENCH_NL_MAX_DOM];
  double rcol[BENCH_NL_MAX_DOM];
  unsigned char has[BENCH_NL_MAX_DOM];
} bench_nl_int;

typedef struct {
  /* &time_control */
  bench_nl_int run_days, run_hours, run_minutes, run_seconds;
  bench_nl_int start_year, start_month, start_day, start_hour, start_minute, start_second;
  bench_nl_int end_year, end_month, end_day, end_hour, end_minute, end_second;
  bench_nl_int history_interval; /* minutes */
  bench_nl_int history_interval_d, history_interval_h, history_interval_m, history_interval_s;
  bench_nl_int frames_per_outfile;
  bench_nl_int io_form_history;
  bench_nl_int restart_interval; /* minutes */
  bench_nl_int restart;          /* logical */
  bench_nl_int nocolons;         /* logical */
  /* &domains */
  bench_nl_int max_dom;
  bench_nl_int e_we, e_sn, e_vert;
  bench_nl_int time_step; /* seconds */
  bench_nl_int time_step_fract_num, time_step_fract_den;
  bench_nl_int dx, dy; /* metres (real) */
  bench_nl_int nproc_x, nproc_y;
  bench_nl_int parent_id, parent_time_step_ratio;
  /* &namelist_quilt */
  bench_nl_int nio_groups, nio_tasks_per_group;
  /* Lines where the groups start (0 = absent). */
  int time_control_line, domains_line, namelist_quilt_line;
} bench_namelist;

/* Parse namelist text. @p name names the source in messages ("namelist.input").
 * Returns 0, or -1 with "name:LINE: what is wrong" in err. */
int bench_namelist_parse(const char *text, const char *name, bench_namelist *nl, char *err,
                         size_t errlen);

/* Make domain @p domain's column the value of every per-domain entry
 * (history_interval, e_we, dx, start_year, ...; WRF's max_domains lists);
 * a list without that column leaves the entry absent. Single entries
 * (time_step, max_dom, ...) keep their one value. */
void bench_namelist_pick_domain(bench_namelist *nl, int domain);

/* Read and parse a file. Returns 0 or -1 with a message in err. */
int bench_namelist_read(const char *path, bench_namelist *nl, char *err, size_t errlen);

/* Tessera hints for io_form_history and quilting: io_form 2 -> serial,
 * 11 -> direct, 12 -> aggregate, 102 -> split; nio_tasks_per_group > 0 ->
 * servers (io_form 2: netcdf group roots, 11: pnetcdf groups). Writes "" when
 * the namelist sets neither. Returns 0, or -1 with "name:LINE: ..." in err. */
int bench_namelist_hints(const bench_namelist *nl, const char *name, char *hints, size_t n,
                         char *err, size_t errlen);

/* ---------------------------------------------------- namelist_keys.c */

/* 1 if the bench checks the keys of this group (it reads it). */
int bench_nl_group_checked(const char *group);
/* 1 if WRF knows @p key (lower case, no subscript) in @p group. */
int bench_nl_key_known(const char *group, const char *key);
/* The known key of @p group closest to @p key (at most 2 edits), or NULL. */
const char *bench_nl_key_suggest(const char *group, const char *key);

#endif
