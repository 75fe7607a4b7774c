/* Names Tessera makes are never followed through a link (issue 25): in a
 * shared output directory anyone may plant `<path>.tessera-tmp -> victim`
 * before a run. Every scenario plants links to a victim file (a directory
 * for a log's temporary) at the names the run is about to make, writes, and
 * requires the victim untouched, the final file a regular file of the right
 * bytes, and no link left where a name was made.
 *
 *   tmp_<strategy>       links at the temporary (every split piece's) and at
 *                        the lock `<path>.tessera-lock`; <strategy> serial,
 *                        direct, aggregate, split; tmp_<strategy>_nc4 the same
 *                        with format=netcdf4 (serial, direct);
 *   staged               stage_dir (drain at finalize): links at the drain's
 *                        copy `<path>.tessera-tmp` and, predicted from the
 *                        first staged file's name, at the next staged file's
 *                        marker and temporary in the stage;
 *   staged_log           the same with stage_format=log (the converter's
 *                        temporary, the log directory's temporary);
 *   late_drain           a file staged with stage_drain=finalize, then the
 *                        same path written in place (a rerun): tsr_finalize
 *                        returns TSR_EBUSY on every rank with a sentence, the
 *                        newer file stays, the staged copy and its marker too.
 * Bytes are compared with a reference written the same way without links.
 * Checks from tsr_test.h; a strategy or backend not built: skipped (77). */
#define _DEFAULT_SOURCE /* lstat, readlink */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsr_fixtures.h"

enum { NY = 48, NX = 40, NF = 3 };
static const char PRECIOUS[] = "precious: must never be overwritten\n";

static int is_link(const char *p) {
  struct stat sb;
  return lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode);
}

static int is_regular(const char *p) {
  struct stat sb;
  return lstat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The victim: a file holding PRECIOUS, or (dir) an empty directory. */
static void make_victim(const char *p, int dir) {
  if (dir) {
    mkdir(p, 0755);
    return;
  }
  FILE *f = fopen(p, "w");
  if (f) fputs(PRECIOUS, f), fclose(f);
}

static int victim_intact(const char *p, int dir) {
  if (dir) {
    DIR *d = opendir(p);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return d && n == 0;
  }
  char buf[sizeof PRECIOUS + 8] = "";
  FILE *f = fopen(p, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  return n == strlen(PRECIOUS) && strcmp(buf, PRECIOUS) == 0;
}

static void plant(const char *at, const char *victim) {
  unlink(at);
  TSR_CHECKF(symlink(victim, at) == 0, "cannot plant a link at %s", at);
}

/* Write NF frames of a (y, x) float field to @p path; @p bias tells two
 * versions apart. Returns tsr_create's or tsr_close's code. */
static int write_field(tsr_ctx *ctx, const char *path, const char *hints, int bias) {
  int64_t g[2] = {NY, NX}, st[2], ct[2];
  tsr_test_rows(NY, NX, st, ct);
  tsr_decomp *d = NULL;
  TSR_CHECK_OK(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d));
  tsr_file *f = NULL;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    tsr_decomp_free(&d);
    return rc;
  }
  int dt, dy, dx, v;
  TSR_CHECK_OK(tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt));
  TSR_CHECK_OK(tsr_def_dim(f, "y", NY, &dy));
  TSR_CHECK_OK(tsr_def_dim(f, "x", NX, &dx));
  TSR_CHECK_OK(tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v));
  TSR_CHECK_OK(tsr_def_var_decomp(f, v, d));
  TSR_CHECK_OK(tsr_enddef(f));
  float *buf = malloc(sizeof(float) * (size_t)(ct[0] * ct[1]));
  for (int t = 0; t < NF; t++) {
    for (int64_t i = 0; i < ct[0] * ct[1]; i++)
      buf[i] = (float)tsr_test_value(bias, t, 0, st[0] + i / NX, i % NX);
    TSR_CHECK_OK(tsr_put(f, v, t, NULL, buf));
  }
  free(buf);
  rc = tsr_close(&f);
  tsr_decomp_free(&d);
  return rc;
}

static void path_of(char *out, size_t n, const char *stem) { tsr_test_path(out, n, stem); }

/* This rank's final name of @p path (split: its piece). */
static void piece(char *out, size_t n, const char *path, int split) {
  if (split) snprintf(out, n, "%s.%04d", path, tsr_test_rank());
  else snprintf(out, n, "%s", path);
}

static void links_at_temporaries(const char *strategy, const char *format) {
  char path[512], ref[512], hints[256], victim[600], fin[600], at[700], lock[600];
  int split = strcmp(strategy, "split") == 0;
  snprintf(hints, sizeof hints, "strategy=%s%s%s", strategy, format ? ":format=" : "",
           format ? format : "");
  path_of(path, sizeof path, "links");
  path_of(ref, sizeof ref, "links_ref");
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  int rc = write_field(ctx, ref, hints, 1);
  if (rc == TSR_ENOTBUILT) {
    tsr_test_skip("%s is not built into this library", hints);
    tsr_finalize(&ctx);
    MPI_Comm_free(&model);
    return;
  }
  TSR_CHECK_OK(rc);
  /* Every rank its own victim; split pieces' temporaries on their ranks, the
   * one file's on rank 0; rank 0 the lock. */
  snprintf(victim, sizeof victim, "%s.victim%d", path, tsr_test_rank());
  make_victim(victim, 0);
  piece(fin, sizeof fin, path, split);
  snprintf(at, sizeof at, "%s.tessera-tmp", fin);
  if (split || tsr_test_rank() == 0) unlink(fin), plant(at, victim); /* one file: one name */
  snprintf(lock, sizeof lock, "%s.tessera-lock", path);
  if (tsr_test_rank() == 0) plant(lock, victim);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_OK(write_field(ctx, path, hints, 1));
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECKF(victim_intact(victim, 0), "%s: the link's target %s was written", hints, victim);
  TSR_CHECKF(is_regular(fin), "%s: %s is not a regular file", hints, fin);
  TSR_CHECKF(!is_link(at), "%s: a link is left at %s", hints, at);
  char rfin[600];
  piece(rfin, sizeof rfin, ref, split);
  /* netCDF-4 from several MPI-IO writers is compared by size: HDF5's
   * metadata layout is not part of what this test is about. */
  if (format && strcmp(format, "netcdf4") == 0) {
    struct stat a, b;
    TSR_CHECK(stat(fin, &a) == 0 && stat(rfin, &b) == 0 && a.st_size > 0);
  } else {
    TSR_CHECKF(tsr_test_same_bytes(fin, rfin), "%s: %s differs from %s", hints, fin, rfin);
  }
  TSR_CHECK_OK(tsr_finalize(&ctx));
  MPI_Comm_free(&model);
}

static void tmp_serial(void) { links_at_temporaries("serial", NULL); }
static void tmp_direct(void) { links_at_temporaries("direct", NULL); }
static void tmp_aggregate(void) { links_at_temporaries("aggregate", NULL); }
static void tmp_split(void) { links_at_temporaries("split", NULL); }
static void tmp_serial_nc4(void) { links_at_temporaries("serial", "netcdf4"); }
static void tmp_direct_nc4(void) { links_at_temporaries("direct", "netcdf4"); }

/* The one entry of @p stage whose name ends in @p suffix; 0 when found. */
static int find_entry(const char *stage, const char *suffix, char *out, size_t n) {
  DIR *d = opendir(stage);
  struct dirent *e;
  int found = -1;
  size_t ns = strlen(suffix);
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > ns && strcmp(e->d_name + len - ns, suffix) == 0) {
      snprintf(out, n, "%s/%.*s", stage, (int)(len - ns), e->d_name);
      found = 0;
    }
  }
  if (d) closedir(d);
  return found;
}

static void empty_stage(const char *stage) {
  DIR *d = opendir(stage);
  struct dirent *e;
  char p[1600];
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", stage, e->d_name);
      char sub[2000];
      DIR *in = opendir(p);
      struct dirent *f;
      while (in && (f = readdir(in)))
        if (strcmp(f->d_name, ".") && strcmp(f->d_name, ".."))
          snprintf(sub, sizeof sub, "%s/%s", p, f->d_name), unlink(sub);
      if (in) closedir(in), rmdir(p);
      else unlink(p);
    }
  if (d) closedir(d);
  mkdir(stage, 0755);
}

/* Staged: the first file (drain at finalize) shows the staged name; the
 * next one of this process has the same name with the sequence number one
 * higher (tsr__stage_name: base.hash-pid-seq), where links are planted. */
static void staged_links(int log) {
  char path[512], ref[512], stage[600], hints[900], first[1100], next[1100];
  char victim[600], victim_dir[600], at[1200];
  path_of(path, sizeof path, "staged");
  path_of(ref, sizeof ref, "staged_ref");
  snprintf(stage, sizeof stage, "%s.stage", path);
  if (tsr_test_rank() == 0) empty_stage(stage);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(hints, sizeof hints,
           "strategy=serial:stage_dir=%s:stage_min_bytes=0:stage_drain=finalize%s", stage,
           log ? ":stage_format=log" : "");
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  TSR_CHECK_OK(write_field(ctx, ref, "strategy=serial", 1));
  TSR_CHECK_OK(write_field(ctx, path, hints, 1));
  if (tsr_test_rank() == 0) {
    TSR_REQUIRE(find_entry(stage, ".tessera-dest", first, sizeof first) == 0);
    char *dash = strrchr(first, '-');
    TSR_REQUIRE(dash != NULL);
    snprintf(next, sizeof next, "%.*s-%ld", (int)(dash - first), first, strtol(dash + 1, NULL, 10) + 1);
    snprintf(victim, sizeof victim, "%s.victim", path);
    snprintf(victim_dir, sizeof victim_dir, "%s.victim_dir", path);
    make_victim(victim, 0);
    make_victim(victim_dir, 1);
    snprintf(at, sizeof at, "%s.tessera-dest", next);
    plant(at, victim);
    snprintf(at, sizeof at, "%s.tessera-tmp", next);
    plant(at, log ? victim_dir : victim);
    snprintf(at, sizeof at, "%s.tessera-tmp", path); /* the drain's (or converter's) copy */
    plant(at, victim);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_OK(write_field(ctx, path, hints, 1));
  TSR_CHECK_OK(tsr_finalize(&ctx)); /* both staged files drain, in order */
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0) {
    TSR_CHECKF(victim_intact(victim, 0), "%s was written through a link", victim);
    TSR_CHECKF(victim_intact(victim_dir, 1), "a log was written into %s", victim_dir);
    TSR_CHECK(is_regular(path));
    TSR_CHECKF(tsr_test_same_bytes(path, ref), "%s differs from %s", path, ref);
    char left[1100];
    TSR_CHECKF(find_entry(stage, ".tessera-dest", left, sizeof left) != 0, "marker %s left",
               left);
  }
}

static void staged(void) { staged_links(0); }
static void staged_log(void) { staged_links(1); }

/* A drain that runs after a newer file took the path never replaces it. */
static void late_drain(void) {
  char path[512], newer[512], stage[600], hints[900], left[1100];
  path_of(path, sizeof path, "late");
  path_of(newer, sizeof newer, "late_ref");
  snprintf(stage, sizeof stage, "%s.stage", path);
  if (tsr_test_rank() == 0) empty_stage(stage), unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(hints, sizeof hints,
           "strategy=serial:stage_dir=%s:stage_min_bytes=0:stage_drain=finalize", stage);
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  TSR_CHECK_OK(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model));
  TSR_CHECK_OK(write_field(ctx, path, hints, 1));     /* staged, drain pending */
  TSR_CHECK_OK(write_field(ctx, newer, "strategy=serial", 2));
  TSR_CHECK_OK(write_field(ctx, path, "strategy=serial", 2)); /* the rerun, in place */
  TSR_CHECK_RC(tsr_finalize(&ctx), TSR_EBUSY);
  TSR_CHECKF(strstr(tsr_last_error(), "newer") != NULL, "message: %s", tsr_last_error());
  MPI_Comm_free(&model);
  if (tsr_test_rank() == 0) {
    TSR_CHECKF(tsr_test_same_bytes(path, newer), "the newer %s was replaced", path);
    TSR_CHECKF(find_entry(stage, ".tessera-dest", left, sizeof left) == 0,
               "the staged copy's marker is gone");
    TSR_CHECKF(is_regular(left), "the staged copy %s is gone", left);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tessera-tmp", path);
    TSR_CHECK(access(tmp, F_OK) != 0);
  }
}

static const tsr_test_scenario SCENARIOS[] = {
    {"tmp_serial", tmp_serial, 0},         {"tmp_direct", tmp_direct, 0},
    {"tmp_aggregate", tmp_aggregate, 0},   {"tmp_split", tmp_split, 0},
    {"tmp_serial_nc4", tmp_serial_nc4, 0}, {"tmp_direct_nc4", tmp_direct_nc4, 0},
    {"staged", staged, 0},                 {"staged_log", staged_log, 0},
    {"late_drain", late_drain, 0},
};

int main(int argc, char **argv) {
  return tsr_test_main(argc, argv, "symlinks", SCENARIOS,
                       (int)(sizeof SCENARIOS / sizeof SCENARIOS[0]));
}
