/* tessera-bench: shared types of the benchmark model.
 *
 * The bench is split by concept:
 *   options.c         command line and the namelist-derived configuration
 *   namelist.c        WRF namelist.input reader (no MPI, no Tessera)
 *   wrf_time.c        WRF date strings and calendar arithmetic
 *   schema.c          the in-memory schema (dims, vars, attributes) and resizing
 *   schema_default.c  the default WRF-like field set
 *   schema_cdl.c      --schema FILE.cdl: ncgen + NetCDF inquiry
 *   grid.c            process grid and the tile cut rule (bench_tile)
 *   fields.c          Tessera decompositions and model arrays per shape
 *   shape.c           walking a shape's points: rows, offsets, (k, j, i)
 *   atmosphere.c      the physical state: a standard atmosphere in WRF units
 *   kernel.c          stencil kernel and halo exchange
 *   output.c          history files through Tessera
 *   schedule.c        when output happens: steps, output indices, dates
 *   plain.c           --plain: the same files without Tessera (plain_pnetcdf.c)
 *   restart.c         restart and input files: the model state, written and read back
 *   check.c           check values and the read-back verification
 *   metrics.c         timers, reductions, JSON and the summary line
 *   main.c            the model's time loop
 */
#ifndef TSR_BENCH_H
#define TSR_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

#define BENCH_HALO 1
#define BENCH_PATH 4096
#define BENCH_ERR 1024
#define BENCH_DATE_LEN 19 /* "2026-01-01_00:00:00" */
#define BENCH_STEP_VAR "BENCH_STEP" /* the step counter in restart and input files */

/* Exit codes: the demo tool tells "not built" apart from failures. */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAIL = 1, BENCH_EXIT_USAGE = 2, BENCH_EXIT_NOTBUILT = 3 };

/* ------------------------------------------------------------------ schema */

typedef enum { BD_OTHER = 0, BD_X, BD_X_STAG, BD_Y, BD_Y_STAG, BD_Z, BD_Z_STAG } bench_dim_kind;

typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  size_t len;   /* elements */
  void *values; /* len elements of type; text is not NUL-terminated */
} bench_att;

typedef struct {
  int n, cap;
  bench_att *v;
} bench_att_list;

typedef struct {
  char name[TSR_MAX_NAME];
  int64_t len; /* TSR_UNLIMITED (0) for the record dimension */
  bench_dim_kind kind;
} bench_dim;

typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  int ndims; /* record dimension included */
  int dimids[TSR_MAX_DIMS];
  bench_att_list atts;
} bench_var;

typedef struct {
  int ndims, dcap;
  bench_dim *dims;
  int nvars, vcap;
  bench_var *vars;
  bench_att_list gatts;
} bench_schema;

void bench_schema_init(bench_schema *s);
void bench_schema_free(bench_schema *s);
int bench_schema_add_dim(bench_schema *s, const char *name, int64_t len);
int bench_schema_find_dim(const bench_schema *s, const char *name);
/* Add a variable over named dimensions; returns its index or -1. */
int bench_schema_add_var(bench_schema *s, const char *name, tsr_type type, int ndims,
                         const char *const dimnames[]);
int bench_att_put(bench_att_list *l, const char *name, tsr_type type, size_t n, const void *v);
int bench_att_text(bench_att_list *l, const char *name, const char *text);
int bench_att_int(bench_att_list *l, const char *name, int value);
int bench_att_float(bench_att_list *l, const char *name, float value);
const bench_att *bench_att_find(const bench_att_list *l, const char *name);
const char *bench_type_name(tsr_type t);
/* Kind of a dimension name (west_east -> BD_X, ...). */
bench_dim_kind bench_dim_kind_of(const char *name);
/* Resize the horizontal and vertical dimensions; checks the variables. */
int bench_schema_resize(bench_schema *s, int nx, int ny, int nz, char *err, size_t errlen);
/* 1 if the variable's first dimension is the record dimension. */
int bench_var_is_record(const bench_schema *s, const bench_var *v);
/* 1 if the variable has a horizontal (x or y) dimension: it is decomposed. */
int bench_var_is_decomposed(const bench_schema *s, const bench_var *v);

struct bench_config;
/* Update the WRF global attributes that describe the run (grid size, dates). */
int bench_schema_run_atts(bench_schema *s, const struct bench_config *c, int px, int py);

int bench_schema_default(bench_schema *s, char *err, size_t errlen);
/* Collective over comm: rank 0 runs ncgen into workdir, every rank reads. */
int bench_schema_load_cdl(const char *cdl, const char *workdir, MPI_Comm comm, bench_schema *s,
                          char *err, size_t errlen);

/* ------------------------------------------------------------------ config */

enum {
  BO_NX = 1u << 0,
  BO_NY = 1u << 1,
  BO_NZ = 1u << 2,
  BO_PX = 1u << 3,
  BO_PY = 1u << 4,
  BO_STEPS = 1u << 5,
  BO_EVERY = 1u << 6,
  BO_FPF = 1u << 7,
  BO_DT = 1u << 8,
  BO_START = 1u << 9,
  BO_DX = 1u << 10,
  BO_DY = 1u << 11,
  BO_NOCOLONS = 1u << 12,
  BO_RESTART_EVERY = 1u << 13
};

typedef struct bench_config {
  int nx, ny, nz;
  int px, py; /* 0: from MPI_Dims_create */
  int steps, output_every, sweeps, frames_per_file; /* output_every 0: output_every_s */
  double output_every_s; /* a namelist's history interval that is no whole number of steps
                            (s): outputs as WRF's alarm rings (bench_alarm_count) */
  int halo; /* halo width of the model's arrays: BENCH_HALO, or 0 (--halo 0) */
  int change_step, change_sweeps; /* --compute-change STEP:SWEEPS; change_step 0: none */
  double dt;                          /* model seconds per step */
  double dx, dy;                      /* grid spacing, metres */
  char start_date[BENCH_DATE_LEN + 1]; /* WRF form */
  char schema[BENCH_PATH];            /* "" = default fields */
  char out[BENCH_PATH];
  char json[BENCH_PATH];
  char namelist[BENCH_PATH];
  int domain; /* --domain: the namelist's domain this run models (1 when not given) */
  char user_hints[2048]; /* --hints */
  char nl_hints[512];    /* from io_form_history / quilting */
  char hints[2900];      /* passed to tsr_init: namelist, --hints, --stage-dir */
  char stage_dir[256];   /* --stage-dir (the library's stage_dir field is as long) */
  char reduce[256];      /* --reduce: the history files' reduce= hint value */
  char restart[BENCH_PATH]; /* --restart FILE: resume from it */
  char input[BENCH_PATH];   /* --input FILE: initial state from a wrfinput */
  int restart_every;        /* steps between restart files, 0 = none */
  double restart_every_s;   /* a namelist's restart_interval that is no whole number of
                               steps (s): written as WRF's alarm rings, below */
  int write_input;          /* write <out>/wrfinput_d01 */
  int nocolons;             /* '_' for ':' in file names */
  char plain[16];           /* --plain METHOD: "" = through Tessera */
  int check, dry_run, quiet;
  int xzy;   /* --memory-order xzy: 3-D fields held as WRF's a(i,k,j) */
  int cells; /* --decomp cells: shuffled horizontal points through an index map */
  int inject_error; /* test hook: one wrong value in the first output */
  unsigned set; /* BO_* given on the command line (they win over the namelist) */
} bench_config;

/* Returns 0, 1 when --help was printed, -1 on error (message in err). */
int bench_parse_args(int argc, char **argv, bench_config *c, char *err, size_t errlen);
/* Apply --namelist (if any) to the options not given on the command line. */
int bench_apply_namelist(bench_config *c, char *err, size_t errlen);
/* Validate and build c->hints. */
int bench_finish_config(bench_config *c, char *err, size_t errlen);
void bench_print_config(const bench_config *c);

/* ------------------------------------------------------------------ time */

/* out = start + seconds, both "YYYY-MM-DD_hh:mm:ss". Returns 0 or -1. */
int bench_date_add(const char *start, int64_t seconds, char out[BENCH_DATE_LEN + 1]);
int bench_date_valid(const char *date);
/* Year and day of the year (1-based) of a date. */
int bench_date_julian(const char *date, int *year, int *jday);
/* *seconds = b - a for two valid dates. Returns 0 or -1. */
int bench_date_diff(const char *a, const char *b, int64_t *seconds);
/* WRF's alarms, for an interval that is no whole number of time steps: the
 * times the alarm of @p interval_s has rung by the end of @p step (steps of
 * @p dt s): it rings at the first step at or after each multiple of the
 * interval, and then moves on by the interval, not from the step it rang at. */
int64_t bench_alarm_count(int64_t step, double dt, double interval_s);
/* 1 if the alarm rings at @p step (step 0: the start, where it has rung once). */
int bench_alarm_rings(int64_t step, double dt, double interval_s);
/* 1 when something done every @p every steps, or (every == 0) as the alarm
 * of @p every_s seconds rings, is due at @p step; 0 when both are 0 (never):
 * history output and restart files follow the same rule. */
int bench_every_due(int every, double every_s, double dt, int64_t step);

/* ------------------------------------------------------------------ fields */

typedef struct {
  MPI_Comm comm; /* model communicator */
  int rank, size, px, py, cx, cy;
  int west, east, south, north; /* neighbours, MPI_PROC_NULL at the domain edge */
  int nx, ny, nz;
} bench_grid;

typedef struct {
  int ndims; /* non-record dims */
  int dimids[TSR_MAX_DIMS];
  int64_t gsize[TSR_MAX_DIMS], start[TSR_MAX_DIMS], count[TSR_MAX_DIMS];
  int64_t mstart[TSR_MAX_DIMS], mcount[TSR_MAX_DIMS];
  int xdim, ydim;  /* position of the x / y dimension, -1 if none */
  int std;         /* (..., y, x) layout with halos in both: the kernel steps it */
  int xzy;         /* 3-D (z, y, x) held in memory as [y][z][x] (WRF's a(i,k,j)) */
  int64_t mstride[TSR_MAX_DIMS]; /* memory stride of each file dimension, elements */
  /* --decomp cells: the rank's horizontal points (flat y * nx + x over the
   * shape's horizontal grid) in buffer order; the buffer is [cell][other dims],
   * as MPAS holds a(nVertLevels, nCells). ncells < 0: not a cells shape. */
  int64_t ncells, nother;
  int64_t *cells;
  int64_t mem_elems, tile_elems, global_elems;
  tsr_decomp *d;
  MPI_Datatype halo[2][8]; /* [element size 4|8][send w,e,s,n; recv w,e,s,n] */
  int halo_ready[2];
} bench_shape;

typedef struct {
  int var;      /* schema index */
  int shape;    /* index into run->shapes; -1 for replicated variables */
  int check_id; /* index among decomposed fields, -1 otherwise */
  int record;
  int stepped; /* float/double on a std shape */
  size_t esize;
  int64_t nelems; /* memory elements (decomposed) or whole variable (replicated) */
  void *buf;
} bench_field;

typedef struct {
  char path[BENCH_PATH];
  int t0;      /* history output index of its first frame */
  int nframes; /* frames written */
} bench_file_rec;

typedef struct {
  double t_start;       /* after MPI_Init + barrier */
  double compute_s;     /* kernel + halo */
  double blocked_s;     /* inside Tessera calls */
  double first_put;     /* start of the first tsr_put / put_global, -1 before */
  double last_step_end; /* end of the last model step, output hand-off included */
  double finalize_end;  /* tsr_finalize returned */
  double input_s;       /* reading the initial state (--input or --restart) */
  double restart_s;     /* writing restart (and input) files */
  double define_s;      /* create .. enddef of every file (part of blocked_s) */
} bench_timers;

typedef struct {
  bench_config cfg;
  bench_schema schema;
  bench_grid grid;
  MPI_Comm world;
  int world_size;
  tsr_ctx *ctx;
  int nshapes;
  bench_shape *shapes;
  int nfields;
  bench_field *fields; /* one per schema variable, in schema order */
  int ndecomposed;
  void *scratch;
  size_t scratch_bytes;
  /* output */
  tsr_file *file;
  struct bench_plain *plain; /* --plain: the file and its buffers (plain.c) */
  int *varids; /* per schema variable in the current file */
  int frames_in_file;
  int nfiles, fcap;
  bench_file_rec *files;
  char strategy[32];
  /* The file is written with put_mode=deferred: the bench promised to leave
   * its arrays unchanged until a flush, and it changes them every output. */
  int flush_each_output;
  int64_t bytes; /* data bytes the files hold (whole variables, not per rank) */
  int outputs;   /* history outputs done */
  int start_step; /* 0, or the step a restart file resumed from */
  int restarts;   /* restart files written */
  int64_t restart_bytes; /* data bytes of the restart and input files written */
  int64_t input_bytes;   /* data bytes read from the restart or input file */
  bench_timers tm;
  tsr_stats lib_stats; /* this rank's library totals, taken before tsr_finalize */
  int check_failed;
  char effective_hints[4096]; /* --hints / namelist, then TESSERA_HINTS */
  char err[BENCH_ERR];
} bench_run;

int bench_grid_setup(bench_grid *g, MPI_Comm comm, const bench_config *c, char *err,
                     size_t errlen);
/* Tile of n points over p ranks at coordinate c; stag adds the last point to the last rank. */
void bench_tile(int64_t n, int p, int c, int stag, int64_t *start, int64_t *count);
/* Shapes and array sizes, checked against 32-bit counts and the node's
 * memory before anything is allocated. Collective; 0, or -1 with run->err
 * (the same on every rank). */
int bench_fields_plan(bench_run *run);
/* Model arrays and Tessera decompositions (collective). Returns a TSR code. */
int bench_fields_setup(bench_run *run);
void bench_fields_free(bench_run *run);
/* Initial model state (smooth values) and the replicated variables' values. */
void bench_fields_init(bench_run *run);
/* Visit the rows (runs along the last dimension) of a shape's tile
 * (tile_only) or of its whole memory box: moff is the memory offset of the
 * row's first element, gidx its global index, n the row length. */
typedef void (*bench_row_fn)(void *arg, const bench_shape *sh, int64_t moff, const int64_t gidx[],
                             int64_t n);
void bench_shape_rows(const bench_shape *sh, int tile_only, bench_row_fn fn, void *arg);
/* (k, j, i) of the check function for a global index: i along x, j along y,
 * k the row-major index over the other non-record dimensions. */
/* Memory offset (elements) of the global index gidx on this rank; -1 when
 * the rank does not hold it. */
int64_t bench_shape_offset(const bench_shape *sh, const int64_t gidx[]);
void bench_shape_kji(const bench_shape *sh, const int64_t gidx[], int64_t *k, int64_t *j,
                     int64_t *i);

/* ------------------------------------------------------------------ cells */

/* --decomp cells (cells.c): make sh a cells shape (sizes only, for the
 * memory check); its cells and index map come with bench_cells_decomp. */
void bench_cells_shape(const bench_run *run, bench_shape *sh);
/* Deal the shape's horizontal points and create its tsr_decomp_map.
 * Collective; TSR code, message in run->err. */
int bench_cells_decomp(bench_run *run, bench_shape *sh);
/* bench_shape_rows and bench_shape_offset of a cells shape. */
void bench_cells_rows(const bench_shape *sh, bench_row_fn fn, void *arg);
int64_t bench_cells_offset(const bench_shape *sh, const int64_t gidx[]);

/* ------------------------------------------------------------------ atmosphere */

/* The physical state (standard atmosphere, WRF units) of every decomposed
 * field over its whole memory box. */
void bench_atmos_fill_fields(bench_run *run);
/* Physical value of element idx of the replicated variable v (ZNU, ZNW, P_TOP, ...). */
double bench_atmos_global(const bench_run *run, int v, int64_t idx);

/* ------------------------------------------------------------------ kernel */

int bench_halo_exchange(bench_run *run);
/* One model step: --sweeps times (halo exchange + stencil). 0 or -1. */
int bench_step(bench_run *run);

/* ------------------------------------------------------------------ output */

/* History output number t (0-based): opens a file when needed. TSR code. */
int bench_output(bench_run *run, int t);
/* Close the current file (if any). TSR code. */
int bench_output_close(bench_run *run);
/* Flush and close the last file. TSR code. */
int bench_output_finish(bench_run *run);
/* "<out>/<prefix>_d<NN>_<date>" (NN the run's domain), with '_' for ':' in the date under nocolons. */
void bench_file_path(const bench_run *run, const char *prefix, const char *date, char *path,
                     size_t n);
/* WRF date of model step `step`. */
void bench_step_date(const bench_run *run, int64_t step, char date[BENCH_DATE_LEN + 1]);
/* Create a file with the run's schema (hints as for tsr_create); with
 * step_varid also the scalar BENCH_STEP_VAR. Leaves it in data mode. TSR code. */
int bench_define_file(bench_run *run, const char *path, const char *hints, tsr_file **fp,
                      int *varids, int *step_varid);
/* The model step of history output t, and the output the end of @p step has
 * reached (every output_every steps, or as the alarm of output_every_s rings). */
int64_t bench_output_step(const bench_config *c, int t);
int bench_output_index(const bench_config *c, int64_t step);
/* 1 when @p step writes history output (its index: bench_output_index). */
int bench_output_due(const bench_config *c, int64_t step);
/* "<out>/wrfout_d<NN>_<date of output t>", NN the run's domain */
void bench_output_path(const bench_run *run, int t, char *path, size_t n);
/* WRF date of history output t. */
void bench_output_date(const bench_run *run, int t, char date[BENCH_DATE_LEN + 1]);

/* ------------------------------------------------------------------ plain */

/* The --plain method's number, 0 for an unknown name. */
int bench_plain_method(const char *name);
/* Create and define a history file with the libraries' own calls
 * (collective). TSR code, message in run->err; the same on every rank. */
int bench_plain_create(bench_run *run, const char *path);
/* Hand over variable v at frame; errors wait for bench_plain_frame_done. */
int bench_plain_put(bench_run *run, int v, int frame);
/* End of a frame: pending writes complete, errors agreed on. TSR code. */
int bench_plain_frame_done(bench_run *run);
int bench_plain_close(bench_run *run);
void bench_plain_free(bench_run *run);

/* ------------------------------------------------------------------ restart */

/* "<out>/wrfrst_d<NN>_<date of step>" and "<out>/wrfinput_d<NN>". */
void bench_restart_path(const bench_run *run, int64_t step, char *path, size_t n);
void bench_input_path(const bench_run *run, char *path, size_t n);
/* Write the model's state at `step` (restart) or the initial state (input).
 * Collective; TSR code, message in run->err. Timed as restart_s. */
int bench_restart_write(bench_run *run, int64_t step);
int bench_input_write(bench_run *run);
/* Read a restart (restart = 1) or input file into the model's arrays and
 * set run->start_step. Collective; TSR code, message in run->err. Timed as
 * input_s. */
int bench_state_read(bench_run *run, const char *path, int restart);

/* ------------------------------------------------------------------ check */

/* f(v, t, k, j, i) of the design guide. */
int64_t bench_check_value(int64_t v, int64_t t, int64_t k, int64_t j, int64_t i);
/* Value of element idx of a replicated variable at output t. */
int64_t bench_global_value(int64_t idx, int64_t t);
/* Fill the tiles of the decomposed fields with f(v, t, ...). */
void bench_check_fill(bench_run *run, int t);
/* Fill the replicated variables for output t (Times and the others). */
void bench_globals_fill(bench_run *run, int t);
/* The same at a model step (restart files): Times, XTIME, ITIMESTEP of that step. */
void bench_globals_fill_step(bench_run *run, int64_t step);
/* Read every file back and verify every value. Collective over the model comm.
 * Returns 0 when everything matches; prints the verdict. */
int bench_check_verify(bench_run *run);

/* ------------------------------------------------------------------ metrics */

/* Reduce the timers and write the JSON file and the summary line (rank 0). */
int bench_metrics_report(bench_run *run);

#endif
