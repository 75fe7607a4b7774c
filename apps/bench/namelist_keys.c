/* The keys WRF (4.x, ARW) accepts in the namelist groups the bench reads:
 * &time_control, &domains and &namelist_quilt, after WRF's Registry and
 * run/README.namelist. WRF stops on a key it does not know; so does the bench,
 * in these groups, so that a misspelt `histroy_interval` is not silently
 * dropped. The numbered stream families (auxinput1..24, auxhist1..24) are
 * matched by pattern instead of being listed 24 times. A key missing here
 * that WRF knows is a bug of this table: add it below. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "namelist.h"

static const char *const time_control_keys[] = {
    "run_days", "run_hours", "run_minutes", "run_seconds",
    "start_year", "start_month", "start_day", "start_hour", "start_minute", "start_second",
    "end_year", "end_month", "end_day", "end_hour", "end_minute", "end_second",
    "interval_seconds", "input_from_file", "fine_input_stream", "input_from_hires",
    "history_interval", "history_interval_d", "history_interval_h", "history_interval_m",
    "history_interval_s", "history_interval_y", "frames_per_outfile",
    "history_begin", "history_begin_y", "history_begin_d", "history_begin_h", "history_begin_m",
    "history_begin_s", "history_end", "history_end_y", "history_end_d", "history_end_h",
    "history_end_m", "history_end_s",
    "restart", "restart_interval", "restart_interval_d", "restart_interval_h",
    "restart_interval_m", "restart_interval_s", "restart_begin", "restart_begin_y",
    "restart_begin_d", "restart_begin_h", "restart_begin_m", "restart_begin_s",
    "override_restart_timers", "write_hist_at_0h_rst", "write_restart_at_0h",
    "reset_simulation_start", "cycling",
    "io_form_history", "io_form_restart", "io_form_input", "io_form_boundary",
    "history_outname", "history_inname", "rst_outname", "rst_inname", "input_outname",
    "input_inname", "bdy_outname", "bdy_inname",
    "write_input", "inputout_interval", "inputout_interval_d", "inputout_interval_h",
    "inputout_interval_m", "inputout_interval_s", "inputout_begin_y", "inputout_begin_d",
    "inputout_begin_h", "inputout_begin_m", "inputout_begin_s", "inputout_end_y",
    "inputout_end_d", "inputout_end_h", "inputout_end_m", "inputout_end_s",
    "all_ic_times", "adjust_output_times", "adjust_input_times", "force_use_old_data",
    "debug_level", "diag_print", "nocolons", "ncd_nofill", "use_netcdf_classic",
    "output_ready_flag", "output_diagnostics", "nwp_diagnostics", "iofields_filename",
    "ignore_iofields_warning", "self_test_domain", "reset_interval1", "julyr", "julday", "gmt",
    "io_form_sgfdda", "io_form_gfdda", "rsmas_data_path", "auxinput1_inname",
    "io_form_auxinput1", "output_state_only", "diag_nwp2", "wrf_hydro",
};

static const char *const domains_keys[] = {
    "time_step", "time_step_fract_num", "time_step_fract_den", "time_step_dfi", "max_dom",
    "s_we", "e_we", "s_sn", "e_sn", "s_vert", "e_vert", "dx", "dy", "ztop", "grid_id",
    "parent_id", "i_parent_start", "j_parent_start", "parent_grid_ratio",
    "parent_time_step_ratio", "feedback", "smooth_option", "smooth_cg_topo",
    "num_metgrid_levels", "num_metgrid_soil_levels", "p_top_requested", "interp_type",
    "extrap_type", "t_extrap_type", "use_levels_below_ground", "use_surface", "lagrange_order",
    "force_sfc_in_vinterp", "zap_close_levels", "lowest_lev_from_sfc", "sfcp_to_sfcp",
    "use_tavg_for_tsk", "aggregate_lu", "rh2qv_wrt_liquid", "rh2qv_method", "qv_max_p_safe",
    "qv_max_flag", "qv_max_value", "qv_min_p_safe", "qv_min_flag", "qv_min_value",
    "eta_levels", "auto_levels_opt", "dzbot", "dzstretch_s", "dzstretch_u", "max_dz",
    "ideal_init_method", "interp_theta", "hypsometric_opt", "wif_input_opt", "num_wif_levels",
    "nproc_x", "nproc_y", "numtiles", "numtiles_x", "numtiles_y", "tile_sz_x", "tile_sz_y",
    "tile_strategy", "use_adaptive_time_step", "step_to_output_time", "target_cfl",
    "target_hcfl", "max_step_increase_pct", "starting_time_step", "starting_time_step_den",
    "max_time_step", "max_time_step_den", "min_time_step", "min_time_step_den",
    "adaptation_domain", "max_ts_locs", "ts_buf_size", "max_ts_level",
    "tslist_unstagger_winds", "vert_refine_method", "vert_refine_fact", "rebalance",
    "num_moves", "move_id", "move_interval", "move_cd_x", "move_cd_y", "vortex_interval",
    "max_vortex_speed", "corral_dist", "track_level", "time_to_move", "nest_interp_coord",
    "interp_method_type", "maxw_horiz_pres_diff", "trop_horiz_pres_diff",
    "maxw_above_this_level", "use_maxw_level", "use_trop_level", "sr_x", "sr_y", "id",
    "reasonable_time_step_ratio", "terrain_smoothing", "ptsgm", "num_traj", "nproc_x_nest",
    "nproc_y_nest", "min_dz",
};

static const char *const quilt_keys[] = {"nio_tasks_per_group", "nio_groups", "poll_servers"};

static const struct {
  const char *group;
  const char *const *keys;
  size_t n;
} groups[] = {
    {"time_control", time_control_keys, sizeof time_control_keys / sizeof time_control_keys[0]},
    {"domains", domains_keys, sizeof domains_keys / sizeof domains_keys[0]},
    {"namelist_quilt", quilt_keys, sizeof quilt_keys / sizeof quilt_keys[0]},
};

static int find_group(const char *group) {
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
    if (strcmp(groups[g].group, group) == 0) return (int)g;
  return -1;
}

int bench_nl_group_checked(const char *group) { return find_group(group) >= 0; }

/* "auxinput<N>_..." / "auxhist<N>_..." and their io_form_ and frames_per_
 * forms, N in 1..24, with the suffixes every stream has. */
static int stream_key(const char *key) {
  static const char *const prefixes[] = {"io_form_auxinput", "io_form_auxhist",
                                         "frames_per_auxinput", "frames_per_auxhist", "auxinput",
                                         "auxhist"};
  static const char *const suffixes[] = {
      "_inname", "_outname", "_interval", "_interval_y", "_interval_d", "_interval_h",
      "_interval_m", "_interval_s", "_begin", "_begin_y", "_begin_d", "_begin_h", "_begin_m",
      "_begin_s", "_end", "_end_y", "_end_d", "_end_h", "_end_m", "_end_s"};
  for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
    size_t len = strlen(prefixes[p]);
    if (strncmp(key, prefixes[p], len) != 0 || !isdigit((unsigned char)key[len])) continue;
    char *end = NULL;
    long n = strtol(key + len, &end, 10);
    if (n < 1 || n > 24) return 0;
    if (p < 4) return *end == '\0'; /* io_form_auxhist3, frames_per_auxinput4 */
    for (size_t s = 0; s < sizeof suffixes / sizeof suffixes[0]; s++)
      if (strcmp(end, suffixes[s]) == 0) return 1;
    return 0;
  }
  return 0;
}

int bench_nl_key_known(const char *group, const char *key) {
  int g = find_group(group);
  if (g < 0) return 1; /* groups the bench does not read: not its business */
  for (size_t i = 0; i < groups[g].n; i++)
    if (strcmp(groups[g].keys[i], key) == 0) return 1;
  return g == 0 && stream_key(key);
}

/* Levenshtein distance, capped: enough to suggest a spelling. */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 99;
  int row[64];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      if (up + 1 < best) best = up + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *bench_nl_key_suggest(const char *group, const char *key) {
  int g = find_group(group);
  if (g < 0) return NULL;
  const char *best = NULL;
  int best_d = 3;
  for (size_t i = 0; i < groups[g].n; i++) {
    int d = distance(key, groups[g].keys[i]);
    if (d < best_d) {
      best_d = d;
      best = groups[g].keys[i];
    }
  }
  return best;
}
