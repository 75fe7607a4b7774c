/* Staged output (docs/staging.md), one scenario per CTest:
 *   identical:<strategy>  the same data written in place and through a stage:
 *                         after tsr_finalize the final files are byte-identical
 *                         and the stage is empty (no file, no marker);
 *   hybrid                stage_min_bytes: a file whose schema is smaller goes
 *                         straight to its final path at close, a larger one is
 *                         in the stage with its marker (drained by
 *                         tsr_finalize, stage_drain=finalize) and identical to
 *                         its unstaged twin afterwards;
 *   rewrite               one path written twice in a row through the stage,
 *                         the second time while the first may still drain:
 *                         the final file is the second version;
 *   stage_in              tsr_open with stage_dir reads a copy made once per
 *                         node: the values are the source's, the stage holds
 *                         one byte-identical copy, a second open reuses it (same
 *                         inode), a rewritten source is copied again;
 *   dest_missing          the destination directory does not exist: tsr_enddef
 *                         is TSR_EACCES on every rank and the stage stays empty;
 *   kill                  files closed through a stage, then rank 0 raises
 *                         SIGKILL while the drain copies one (stage_kill.sh
 *                         runs it, recovers and compares);
 *   stage_full            the stage is a 1 MiB tmpfs (stage_mount.sh): the
 *                         4 MiB file fails with TSR_ENOSPC on every rank and
 *                         leaves nothing in the stage nor at the final path;
 *   dest_full             the destination is a 1 MiB tmpfs: tsr_close succeeds
 *                         (the file is staged), tsr_finalize is TSR_ENOSPC on
 *                         every rank, the staged file and its marker remain,
 *                         byte-identical to an unstaged twin, no final name;
 *   prestage_write        writes DIR/prestaged.nc (stage_in_cli.sh then runs
 *   prestage_read         `tessera stage in`), reads it with stage_dir=DIR/
 *                         prestage: the values are the source's and the stage
 *                         holds one entry (the script checks it is the CLI's
 *                         copy, same inode);
 *   servers_stats         strategy=servers (last rank a server) writes two
 *                         files through a stage: the `stage` record of
 *                         TESSERA_STATS_FILE counts the server's drains
 *                         (2 files, their exact bytes, none failed);
 *   identical_log:<strategy>  identical: with stage_format=log (the drain
 *                         converts each writer's log into the file);
 *   log_read              tsr_open reads a staged log directly (values),
 *                         before tsr_finalize converts it (bytes);
 *   kill_log              SIGKILL between log close and conversion
 *                         (stage_kill.sh ... log recovers and compares).
 * Usage: test_stage SCENARIO DIR. Exit 77 (skip) when the strategy is not
 * built. */
#define _DEFAULT_SOURCE /* usleep */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/tsr_fixtures.h" /* tsr_test_same_bytes, tsr_test.h checks */
#include "tessera.h"

/* g_rank and g_size are the ranks the scenario writes over (servers_stats
 * switches them to the model communicator); checks are tsr_test.h's. */
static int g_rank, g_size;

static int exists(const char *p) { return access(p, F_OK) == 0; }

static long long file_size(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Entries of a directory other than . and .. */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(p);
  return 0;
}

/* The stage of an earlier run, logs (directories) included, is gone. */
static void empty_dir(const char *dir) {
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  mkdir(dir, 0755);
}

/* One record variable v(Time, y, 1024) of floats, rows split over the ranks,
 * @p frames records; value (i + 7*j + 8191*t) as the design guide's check. */
static int write_file(tsr_ctx *ctx, const char *path, const char *hints, int64_t ny,
                      int frames) {
  const int64_t nx = 1024;
  int64_t g[2] = {ny, nx}, st[2] = {ny * g_rank / g_size, 0};
  int64_t ct[2] = {ny * (g_rank + 1) / g_size - st[0], nx};
  tsr_decomp *d = NULL;
  tsr_file *f = NULL;
  int rc = tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d);
  if (rc) return rc;
  rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    tsr_decomp_free(&d);
    return rc;
  }
  int dt, dy, dx, v;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "y", ny, &dy);
  tsr_def_dim(f, "x", nx, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 3, (int[]){dt, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  rc = tsr_enddef(f);
  float *buf = malloc((size_t)(ct[0] * nx) * sizeof(float) + 1);
  for (int t = 0; !rc && t < frames; t++) {
    for (int64_t j = 0; j < ct[0]; j++)
      for (int64_t i = 0; i < nx; i++)
        buf[j * nx + i] = (float)((i + 7 * (st[0] + j) + 8191 * t) % 16777216);
    rc = tsr_put(f, v, t, NULL, buf);
  }
  free(buf);
  int crc = tsr_close(&f);
  tsr_decomp_free(&d);
  return rc ? rc : crc;
}

static void final_name(char *out, size_t n, const char *path, const char *strategy) {
  if (strcmp(strategy, "split") == 0) snprintf(out, n, "%s.0000", path);
  else snprintf(out, n, "%s", path);
}

/* @p extra: more hints for the staged file ("" or ":stage_format=log"). */
static int identical(tsr_ctx **ctx, const char *strategy, const char *dir, const char *extra) {
  char ref[600], stg[600], sdir[600], hints[900];
  const char *tag = extra[0] ? "log" : "native";
  snprintf(ref, sizeof ref, "%s/ident_%s_%s_np%d_ref.nc", dir, strategy, tag, g_size);
  snprintf(stg, sizeof stg, "%s/ident_%s_%s_np%d_staged.nc", dir, strategy, tag, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_ident_%s_%s_np%d", dir, strategy, tag, g_size);
  if (g_rank == 0) empty_dir(sdir);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(hints, sizeof hints, "strategy=%s", strategy);
  int rc = write_file(*ctx, ref, hints, 96, 3);
  if (rc == TSR_ENOTBUILT) return 77;
  TSR_CHECK_RC(rc, 0);
  snprintf(hints, sizeof hints, "strategy=%s:stage_dir=%s%s", strategy, sdir, extra);
  TSR_CHECK_RC(write_file(*ctx, stg, hints, 96, 3), 0);
  TSR_CHECK_RC(tsr_finalize(ctx), 0); /* waits for the drain */
  MPI_Barrier(MPI_COMM_WORLD);
  /* Every piece of split, the one file otherwise, compared on its owner. */
  int pieces = strcmp(strategy, "split") == 0 ? g_size : 1;
  for (int p = g_rank; p < pieces; p += g_size) {
    char a[640], b[640];
    if (pieces > 1) {
      snprintf(a, sizeof a, "%s.%04d", ref, p);
      snprintf(b, sizeof b, "%s.%04d", stg, p);
    } else {
      final_name(a, sizeof a, ref, strategy);
      final_name(b, sizeof b, stg, strategy);
    }
    TSR_CHECK(file_size(b) > 0);
    TSR_CHECK(tsr_test_same_bytes(a, b));
  }
  if (g_rank == 0) TSR_CHECK(count_entries(sdir) == 0);
  return 0;
}

/* The marker of the one staged file in @p sdir: its destination and size. */
static int read_marker(const char *sdir, char *dest, size_t n, long long *size,
                       char *staged, size_t sn) {
  DIR *d = opendir(sdir);
  if (!d) return -1;
  struct dirent *e;
  int found = -1;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > 13 && strcmp(e->d_name + l - 13, ".tessera-dest") == 0) {
      char p[1200];
      snprintf(p, sizeof p, "%s/%s", sdir, e->d_name);
      snprintf(staged, sn, "%.*s", (int)(strlen(p) - 13), p);
      FILE *f = fopen(p, "r");
      if (f && fscanf(f, "%1023[^\n]\n%lld", dest, size) == 2) found = 0;
      (void)n;
      if (f) fclose(f);
    }
  }
  closedir(d);
  return found;
}

/* tsr_finalize drains the stage: then @p final is @p ref byte for byte and
 * the stage is empty. */
static void finalize_compare(tsr_ctx **ctx, const char *final, const char *ref, const char *sdir) {
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(tsr_finalize(ctx), 0);
  if (g_rank == 0) {
    TSR_CHECK(tsr_test_same_bytes(final, ref));
    TSR_CHECK(count_entries(sdir) == 0);
  }
}

static int hybrid(tsr_ctx **ctx, const char *dir) {
  char small[600], large[600], ref[600], sdir[600], hints[900];
  snprintf(small, sizeof small, "%s/hybrid_small_np%d.nc", dir, g_size);
  snprintf(large, sizeof large, "%s/hybrid_large_np%d.nc", dir, g_size);
  snprintf(ref, sizeof ref, "%s/hybrid_ref_np%d.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_hybrid_np%d", dir, g_size);
  if (g_rank == 0) {
    empty_dir(sdir);
    unlink(small);
    unlink(large);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(write_file(*ctx, ref, "strategy=serial", 256, 1), 0);
  /* Threshold 512 KiB: 64 rows (256 KiB) go direct, 256 rows (1 MiB) are staged. */
  snprintf(hints, sizeof hints,
           "strategy=serial:stage_dir=%s:stage_min_bytes=512k:stage_drain=finalize", sdir);
  TSR_CHECK_RC(write_file(*ctx, small, hints, 64, 1), 0);
  TSR_CHECK_RC(write_file(*ctx, large, hints, 256, 1), 0);
  if (g_rank == 0) {
    TSR_CHECK(exists(small));
    TSR_CHECK(!exists(large));
    TSR_CHECK(count_entries(sdir) == 2); /* the staged file and its marker */
    char dest[1024] = "", staged[1200] = "";
    long long size = -1;
    TSR_CHECK(read_marker(sdir, dest, sizeof dest, &size, staged, sizeof staged) == 0);
    TSR_CHECK(strcmp(dest, large) == 0);
    TSR_CHECK(size == file_size(ref));
    TSR_CHECK(tsr_test_same_bytes(staged, ref));
  }
  finalize_compare(ctx, large, ref, sdir);
  return 0;
}

static int rewrite(tsr_ctx **ctx, const char *dir) {
  char path[600], ref[600], sdir[600], hints[900];
  snprintf(path, sizeof path, "%s/rewrite_np%d.nc", dir, g_size);
  snprintf(ref, sizeof ref, "%s/rewrite_ref_np%d.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_rewrite_np%d", dir, g_size);
  if (g_rank == 0) empty_dir(sdir);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(write_file(*ctx, ref, "strategy=serial", 512, 2), 0);
  snprintf(hints, sizeof hints, "strategy=serial:stage_dir=%s", sdir);
  TSR_CHECK_RC(write_file(*ctx, path, hints, 512, 1), 0);
  TSR_CHECK_RC(write_file(*ctx, path, hints, 512, 2), 0);
  TSR_CHECK_RC(tsr_finalize(ctx), 0);
  if (g_rank == 0) {
    TSR_CHECK(tsr_test_same_bytes(path, ref));
    TSR_CHECK(count_entries(sdir) == 0);
  }
  return 0;
}

static long long inode_of(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (long long)sb.st_ino : -1;
}

/* Open @p path with @p hints and check every value of frame @p t. */
static void read_check(tsr_ctx *ctx, const char *path, const char *hints, int64_t ny, int t) {
  const int64_t nx = 1024;
  int64_t g[2] = {ny, nx}, st[2] = {ny * g_rank / g_size, 0};
  int64_t ct[2] = {ny * (g_rank + 1) / g_size - st[0], nx};
  tsr_decomp *d = NULL;
  tsr_file *f = NULL;
  TSR_CHECK_RC(tsr_decomp_box(ctx, 2, g, st, ct, NULL, NULL, &d), 0);
  TSR_CHECK_RC(tsr_open(ctx, path, hints, &f), 0);
  int v = -1, bad = 0;
  TSR_CHECK_RC(tsr_inq_varid(f, "v", &v), 0);
  float *buf = malloc((size_t)(ct[0] * nx) * sizeof(float) + 1);
  TSR_CHECK_RC(tsr_get(f, v, t, d, buf), 0);
  for (int64_t j = 0; j < ct[0]; j++)
    for (int64_t i = 0; i < nx; i++)
      bad += buf[j * nx + i] != (float)((i + 7 * (st[0] + j) + 8191 * t) % 16777216);
  TSR_CHECK(bad == 0);
  free(buf);
  TSR_CHECK_RC(tsr_close(&f), 0);
  tsr_decomp_free(&d);
}

/* The one file in @p sdir, or "" */
static void only_entry(const char *sdir, char *out, size_t n) {
  out[0] = '\0';
  DIR *d = opendir(sdir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      snprintf(out, n, "%.500s/%.200s", sdir, e->d_name);
  if (d) closedir(d);
}

static int stage_in(tsr_ctx **ctx, const char *dir) {
  char src[600], sdir[600], hints[900], copy[800];
  snprintf(src, sizeof src, "%s/input_np%d.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_in_np%d", dir, g_size);
  if (g_rank == 0) empty_dir(sdir);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(write_file(*ctx, src, "strategy=serial", 64, 1), 0);
  snprintf(hints, sizeof hints, "stage_dir=%s", sdir);
  read_check(*ctx, src, hints, 64, 0);
  long long ino = -1;
  if (g_rank == 0) {
    TSR_CHECK(count_entries(sdir) == 1);
    only_entry(sdir, copy, sizeof copy);
    TSR_CHECK(tsr_test_same_bytes(copy, src));
    ino = inode_of(copy);
  }
  read_check(*ctx, src, hints, 64, 0);
  if (g_rank == 0) {
    TSR_CHECK(count_entries(sdir) == 1);
    TSR_CHECK(inode_of(copy) == ino); /* reused, not copied again */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(write_file(*ctx, src, "strategy=serial", 64, 2), 0); /* a new version */
  read_check(*ctx, src, hints, 64, 1);
  if (g_rank == 0) {
    TSR_CHECK(count_entries(sdir) == 1);
    TSR_CHECK(tsr_test_same_bytes(copy, src));
  }
  return 0;
}

static int dest_missing(tsr_ctx **ctx, const char *dir) {
  char path[600], sdir[600], hints[900];
  snprintf(path, sizeof path, "%s/no_such_dir_np%d/x.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_missing_np%d", dir, g_size);
  if (g_rank == 0) empty_dir(sdir);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(hints, sizeof hints, "strategy=aggregate:stage_dir=%s", sdir);
  int rc = write_file(*ctx, path, hints, 64, 1);
  if (rc == TSR_ENOTBUILT) return 77;
  TSR_CHECK_RC(rc, TSR_EACCES);
  if (g_rank == 0) TSR_CHECK(count_entries(sdir) == 0);
  TSR_CHECK_RC(tsr_finalize(ctx), 0);
  return 0;
}

/* Three 8 MiB files closed through the stage; rank 0 waits until the drain
 * is inside a copy (`<final>.tessera-tmp` there, the final name not yet) and
 * kills itself. DIR/kill_closed lists the files tsr_close returned for.
 * With @p log (stage_format=log, drained at tsr_finalize) it kills itself
 * as soon as the three logs are closed, before any conversion ran
 * (stage_kill.sh then converts one by hand and recovers the others). */
static int kill_run(tsr_ctx **ctx, const char *dir, int log) {
  char sdir[600], hints[900], path[3][600], ref[600], tmp[1300], list[600];
  snprintf(sdir, sizeof sdir, "%s/stage_kill", dir);
  snprintf(list, sizeof list, "%s/kill_closed", dir);
  snprintf(ref, sizeof ref, "%s/kill_ref.nc", dir);
  TSR_CHECK_RC(write_file(*ctx, ref, "strategy=serial", 2048, 1), 0);
  snprintf(hints, sizeof hints, "strategy=serial:stage_dir=%s%s", sdir,
           log ? ":stage_format=log:stage_drain=finalize" : "");
  FILE *lf = g_rank == 0 ? fopen(list, "w") : NULL;
  for (int k = 0; k < 3; k++) {
    snprintf(path[k], sizeof path[k], "%.500s/kill_%d.nc", dir, k);
    TSR_CHECK_RC(write_file(*ctx, path[k], hints, 2048, 1), 0);
    if (lf) {
      fprintf(lf, "%s\n", path[k]);
      fflush(lf);
    }
  }
  if (lf) fclose(lf);
  if (g_rank == 0) {
    const char *when = log ? "with 3 logs closed, none converted" : "after every drain finished";
    for (int i = 0; !log && i < 200000; i++) { /* at most about 20 s */
      int k, all = 1;
      for (k = 0; k < 3; k++) {
        snprintf(tmp, sizeof tmp, "%.600s.tessera-tmp", path[k]);
        if (exists(tmp) && !exists(path[k])) break;
        all &= exists(path[k]);
      }
      if (k < 3) {
        when = "while the drain copied a file";
        printf("killing %s (%s)\n", when, path[k]);
        break;
      }
      if (all) break;
      usleep(100);
    }
    printf("rank 0 raises SIGKILL %s\n", when);
    fflush(stdout);
    raise(SIGKILL);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* never passes: rank 0 is gone */
  return 0;
}

/* stage_format=log, drained at tsr_finalize: before it, the stage holds the
 * log (a directory) and its marker, and tsr_open reads the log directly: every
 * rank gets its rows of every frame back, values as written. Afterwards the
 * final file is the in-place file byte for byte. */
static int log_read(tsr_ctx **ctx, const char *dir) {
  char path[600], sdir[600], hints[900], ref[600];
  snprintf(path, sizeof path, "%s/logread_np%d.nc", dir, g_size);
  snprintf(ref, sizeof ref, "%s/logread_np%d_ref.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/stage_logread_np%d", dir, g_size);
  if (g_rank == 0) empty_dir(sdir), unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t ny = 96;
  TSR_CHECK_RC(write_file(*ctx, ref, "strategy=serial", ny, 3), 0);
  snprintf(hints, sizeof hints,
           "strategy=serial:stage_dir=%s:stage_format=log:stage_drain=finalize", sdir);
  TSR_CHECK_RC(write_file(*ctx, path, hints, ny, 3), 0);
  char dest[1024] = "", staged[1200] = "";
  long long size = -1;
  if (g_rank == 0) {
    TSR_CHECK(!exists(path));
    TSR_CHECK(count_entries(sdir) == 2); /* the log and its marker */
    TSR_CHECK(read_marker(sdir, dest, sizeof dest, &size, staged, sizeof staged) == 0);
    struct stat sb;
    TSR_CHECK(stat(staged, &sb) == 0 && S_ISDIR(sb.st_mode));
    TSR_CHECK(strcmp(dest, path) == 0);
  }
  MPI_Bcast(staged, sizeof staged, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int t = 0; t < 3; t++) read_check(*ctx, staged, NULL, ny, t);
  finalize_compare(ctx, path, ref, sdir);
  return 0;
}

static int stage_full(tsr_ctx **ctx, const char *dir) {
  char path[600], sdir[600], hints[900];
  snprintf(path, sizeof path, "%s/stagefull_np%d.nc", dir, g_size);
  snprintf(sdir, sizeof sdir, "%s/small_stage", dir);
  if (g_rank == 0) unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(hints, sizeof hints, "strategy=serial:stage_dir=%s", sdir);
  TSR_CHECK_RC(write_file(*ctx, path, hints, 1024, 1), TSR_ENOSPC);
  if (g_rank == 0) {
    TSR_CHECK(!exists(path));
    TSR_CHECK(count_entries(sdir) == 0);
  }
  TSR_CHECK_RC(tsr_finalize(ctx), 0);
  return 0;
}

static int dest_full(tsr_ctx **ctx, const char *dir) {
  char path[600], sdir[600], hints[900], ref[600], tmp[700];
  snprintf(path, sizeof path, "%s/small_dest/destfull.nc", dir);
  snprintf(ref, sizeof ref, "%s/destfull_ref.nc", dir);
  snprintf(tmp, sizeof tmp, "%s.tessera-tmp", path);
  snprintf(sdir, sizeof sdir, "%s/stage_destfull", dir);
  if (g_rank == 0) empty_dir(sdir);
  MPI_Barrier(MPI_COMM_WORLD);
  TSR_CHECK_RC(write_file(*ctx, ref, "strategy=serial", 1024, 1), 0);
  snprintf(hints, sizeof hints, "strategy=serial:stage_dir=%s", sdir);
  TSR_CHECK_RC(write_file(*ctx, path, hints, 1024, 1), 0); /* staged: the stage has room */
  TSR_CHECK_RC(tsr_finalize(ctx), TSR_ENOSPC);               /* the drain had none */
  if (g_rank == 0) {
    TSR_CHECK(!exists(path));
    TSR_CHECK(!exists(tmp));
    char dest[1024] = "", staged[1200] = "";
    long long size = -1;
    TSR_CHECK(read_marker(sdir, dest, sizeof dest, &size, staged, sizeof staged) == 0);
    TSR_CHECK(strcmp(dest, path) == 0);
    TSR_CHECK(size == file_size(ref));
    TSR_CHECK(tsr_test_same_bytes(staged, ref));
  }
  return 0;
}

/* DIR/prestaged.nc, read through the stage `tessera stage in` filled. */
static int prestage(tsr_ctx **ctx, const char *dir, int write) {
  char src[600], sdir[600], hints[900];
  snprintf(src, sizeof src, "%s/prestaged.nc", dir);
  snprintf(sdir, sizeof sdir, "%s/prestage", dir);
  if (write) return write_file(*ctx, src, "strategy=serial", 64, 1);
  snprintf(hints, sizeof hints, "stage_dir=%s", sdir);
  read_check(*ctx, src, hints, 64, 0);
  if (g_rank == 0) TSR_CHECK(count_entries(sdir) == 1);
  return 0;
}

/* The value of "key": N in the line of @p path holding "record": "stage";
 * -1 when there is none. */
static double stage_record(const char *path, const char *key) {
  FILE *fh = fopen(path, "r");
  char line[4096], pat[80];
  double v = -1;
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  while (fh && fgets(line, sizeof line, fh))
    if (strstr(line, "\"record\": \"stage\"") && strstr(line, pat))
      v = atof(strstr(line, pat) + strlen(pat));
  if (fh) fclose(fh);
  return v;
}

/* Runs its own tsr_init: the last rank serves. TESSERA_STATS_FILE is set by
 * the CTest. */
static int servers_stats(const char *dir) {
  const char *stats = getenv("TESSERA_STATS_FILE");
  char sdir[600], hints[900], path[2][600];
  snprintf(sdir, sizeof sdir, "%s/stage_servers_np%d", dir, g_size);
  if (g_rank == 0) {
    empty_dir(sdir);
    if (stats) unlink(stats);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  tsr_ctx *ctx = NULL;
  MPI_Comm model = MPI_COMM_NULL;
  TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, "strategy=servers:io_groups=1:io_tasks=1", &ctx, &model), 0);
  int world = g_rank;
  if (model != MPI_COMM_NULL) { /* write_file splits rows over the model ranks */
    MPI_Comm_rank(model, &g_rank);
    MPI_Comm_size(model, &g_size);
    snprintf(hints, sizeof hints, "stage_dir=%s", sdir);
    for (int k = 0; k < 2; k++) {
      snprintf(path[k], sizeof path[k], "%.500s/servers_stats_%d.nc", dir, k);
      TSR_CHECK_RC(write_file(ctx, path[k], hints, 256 * (k + 1), 1), 0);
    }
    TSR_CHECK_RC(tsr_finalize(&ctx), 0);
    if (g_rank == 0) {
      TSR_CHECK(stats != NULL);
      TSR_CHECK(stage_record(stats, "staged_files") == 2);
      TSR_CHECK(stage_record(stats, "staged_bytes") ==
            (double)(file_size(path[0]) + file_size(path[1])));
      TSR_CHECK(stage_record(stats, "failed_files") == 0);
      TSR_CHECK(stage_record(stats, "drain_busy_s") > 0);
      TSR_CHECK(count_entries(sdir) == 0);
    }
    MPI_Comm_free(&model);
  }
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_rank = world;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  tsr_test_.rank = g_rank; /* failures print the world rank */
  tsr_test_.nranks = g_size;
  if (argc != 3) {
    if (g_rank == 0) fprintf(stderr, "usage: test_stage SCENARIO DIR\n");
    MPI_Finalize();
    return 2;
  }
  const char *sc = argv[1], *dir = argv[2];
  tsr_ctx *ctx = NULL;
  MPI_Comm model;
  int rc = 0, own_init = strcmp(sc, "servers_stats") == 0;
  if (!own_init) TSR_CHECK_RC(tsr_init(MPI_COMM_WORLD, NULL, &ctx, &model), 0);
  if (own_init) rc = servers_stats(dir);
  else if (strncmp(sc, "identical:", 10) == 0) rc = identical(&ctx, sc + 10, dir, "");
  else if (strncmp(sc, "identical_log:", 14) == 0)
    rc = identical(&ctx, sc + 14, dir, ":stage_format=log");
  else if (strcmp(sc, "log_read") == 0) rc = log_read(&ctx, dir);
  else if (strcmp(sc, "kill_log") == 0) rc = kill_run(&ctx, dir, 1);
  else if (strcmp(sc, "hybrid") == 0) rc = hybrid(&ctx, dir);
  else if (strcmp(sc, "rewrite") == 0) rc = rewrite(&ctx, dir);
  else if (strcmp(sc, "stage_in") == 0) rc = stage_in(&ctx, dir);
  else if (strcmp(sc, "dest_missing") == 0) rc = dest_missing(&ctx, dir);
  else if (strcmp(sc, "kill") == 0) rc = kill_run(&ctx, dir, 0);
  else if (strcmp(sc, "stage_full") == 0) rc = stage_full(&ctx, dir);
  else if (strcmp(sc, "dest_full") == 0) rc = dest_full(&ctx, dir);
  else if (strcmp(sc, "prestage_write") == 0) rc = prestage(&ctx, dir, 1);
  else if (strcmp(sc, "prestage_read") == 0) rc = prestage(&ctx, dir, 0);
  else {
    tsr_test_fail_(__FILE__, __LINE__, "unknown scenario %s", sc);
  }
  tsr_finalize(&ctx); /* NULL after a scenario's own finalize: accepted */
  int f = tsr_test_.fail > 0, any = 0, skip = rc == 77, allskip = 0;
  MPI_Allreduce(&f, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&skip, &allskip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s: %s\n", sc, any ? "FAILED" : allskip ? "skipped" : "passed");
  MPI_Finalize();
  return any ? 1 : allskip ? 77 : 0;
}
