/* What the strategy=auto tests share (test_auto.c, test_auto_servers.c):
 * one file of one frame of a 3-D variable split along y over the model
 * ranks, its values read back, agreement checks over the model ranks, the
 * newest statistics record of a file. Static functions: one header, no
 * library. */
#ifndef TSR_TEST_AUTO_FILES_H
#define TSR_TEST_AUTO_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_test.h"

/* The model ranks' communicator: the world, or what tsr_init leaves to the
 * model when ranks are reserved for servers (auto_use_model). */
static MPI_Comm auto_model = MPI_COMM_WORLD;
static inline void auto_use_model(MPI_Comm model) { auto_model = model; }
static inline int auto_model_rank(void) {
  int r = 0;
  MPI_Comm_rank(auto_model, &r);
  return r;
}
static inline int auto_model_size(void) {
  int n = 1;
  MPI_Comm_size(auto_model, &n);
  return n;
}

enum { NZ = 4, NY = 24, NX = 16, HLEN = 1024 };

static inline float value(int t, int64_t k, int64_t j, int64_t i) {
  return (float)(t * 100000 + (k * NY + j) * NX + i);
}

/* One file of one frame; the hints it was written with in @p used. */
static inline int write_file(tsr_ctx *ctx, const char *path, const char *hints, int t, char *used) {
  int64_t g[3] = {NZ, NY, NX}, st[3] = {0, 0, 0}, ct[3] = {NZ, 0, NX};
  tsr_test_split1(NY, auto_model_size(), auto_model_rank(), &st[1], &ct[1]);
  tsr_decomp *d = NULL;
  tsr_file *f = NULL;
  if (tsr_decomp_box(ctx, 3, g, st, ct, NULL, NULL, &d)) return -1;
  int rc = tsr_create(ctx, path, hints, &f);
  if (rc) {
    tsr_decomp_free(&d);
    return rc;
  }
  int dt, dz, dy, dx, v;
  tsr_def_dim(f, "Time", TSR_UNLIMITED, &dt);
  tsr_def_dim(f, "z", NZ, &dz);
  tsr_def_dim(f, "y", NY, &dy);
  tsr_def_dim(f, "x", NX, &dx);
  tsr_def_var(f, "v", TSR_FLOAT, 4, (int[]){dt, dz, dy, dx}, &v);
  tsr_def_var_decomp(f, v, d);
  rc = tsr_enddef(f);
  if (used) tsr_file_hints(f, used, HLEN);
  float *buf = malloc((size_t)(NZ * ct[1] * NX + 1) * sizeof *buf);
  for (int64_t k = 0; k < NZ; k++)
    for (int64_t j = 0; j < ct[1]; j++)
      for (int64_t i = 0; i < NX; i++) buf[(k * ct[1] + j) * NX + i] = value(t, k, st[1] + j, i);
  if (!rc) rc = tsr_put(f, v, 0, NULL, buf);
  int rc2 = tsr_close(&f);
  free(buf);
  tsr_decomp_free(&d);
  return rc ? rc : rc2;
}

static inline void check_values(tsr_ctx *ctx, const char *path, int t) {
  tsr_file *f = NULL;
  TSR_CHECKF(tsr_open(ctx, path, NULL, &f) == 0, "cannot open %s: %s", path, tsr_last_error());
  if (!f) return;
  int v = -1;
  TSR_CHECK_OK(tsr_inq_varid(f, "v", &v));
  static float all[NZ * NY * NX];
  TSR_CHECK_OK(tsr_get(f, v, 0, NULL, all));
  int bad = 0;
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) bad += all[(k * NY + j) * NX + i] != value(t, k, j, i);
  TSR_CHECKF(bad == 0, "%s: %d values differ", path, bad);
  TSR_CHECK_OK(tsr_close(&f));
}

/* 1 when every model rank holds the same @p text. */
static inline int same_everywhere(const char *text) {
  char mine[HLEN] = "", first[HLEN] = "";
  snprintf(mine, sizeof mine, "%.1000s", text);
  memcpy(first, mine, sizeof first);
  MPI_Bcast(first, HLEN, MPI_CHAR, 0, auto_model);
  int same = strcmp(first, mine) == 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, auto_model);
  return all;
}

static inline void file_path(char *buf, size_t n, const char *stem, int i) {
  char s[64];
  snprintf(s, sizeof s, "%s%02d", stem, i);
  tsr_test_path(buf, n, s);
}

/* The newest statistics record of @p path (rank 0), or "". */
static inline void last_record(const char *path, char *out, size_t n) {
  out[0] = '\0';
  const char *sf = getenv("TESSERA_STATS_FILE");
  FILE *fp = sf ? fopen(sf, "r") : NULL;
  char key[600], line[16384];
  snprintf(key, sizeof key, "\"file\": \"%s\"", path);
  while (fp && fgets(line, sizeof line, fp))
    if (strstr(line, key)) snprintf(out, n, "%s", line);
  if (fp) fclose(fp);
}

/* Rank 0 of the model: @p path's statistics record has an auto object; 1
 * when its fallback names a candidate starting with @p from (then the
 * reason must hold @p reason and TSR_EHINT), else 0. */
static inline int fallback_recorded(const char *path, const char *from, const char *reason) {
  static char rec[16384];
  char key[160];
  last_record(path, rec, sizeof rec);
  TSR_CHECKF(strstr(rec, "\"auto\": {") != NULL, "no auto record for %s", path);
  snprintf(key, sizeof key, "\"fallback\": \"fallback: %s", from);
  const char *fb = strstr(rec, key);
  if (!fb) return 0;
  TSR_CHECKF(strstr(fb, "TSR_EHINT") && strstr(fb, reason), "the reason is missing: %.300s", fb);
  return 1;
}

#endif
