/* Per-frame checksums of what a sink writes (contract in backend/sink_checksum.h).
 * CRC-32 because it is the one fast hash whose pieces combine: any split of
 * a frame's bytes into runs, summed where each run is, chains into the sum
 * of the whole (zlib's crc32_combine), so no writer needs another's data. */
#include "backend/sink_checksum.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/agree.h"
#include "core/crc32.h"
#include "tessera.h"

/* A stretch of one frame of one variable: `len` bytes at byte `off` of the
 * frame in C order, and their CRC-32. Sent between ranks as bytes (MPI_BYTE):
 * the writers of one file run the same binary. */
typedef struct {
  int64_t frame, off, len;
  int32_t varid;
  uint32_t crc;
} run;

/* crc32_combine costs a polynomial power per call (log of the length);
 * zlib 1.2.12 splits it into the power, made once per length, and a cheap
 * product. The runs of a frame are mostly rows of one length (a tile's
 * width), so keeping the last length's power makes chaining hundreds of
 * thousands of runs (direct, tiles cut across rows) cost little. */
typedef struct {
  int64_t len;
  uLong op;
} combiner;

static uint32_t combine(combiner *c, uint32_t crc1, uint32_t crc2, int64_t len2) {
#if ZLIB_VERNUM >= 0x12c0
  if (c->len != len2) c->len = len2, c->op = crc32_combine_gen((z_off_t)len2);
  return (uint32_t)crc32_combine_op(crc1, crc2, c->op);
#else
  (void)c;
  return (uint32_t)crc32_combine(crc1, crc2, (z_off_t)len2);
#endif
}

struct tsr__sums {
  run *runs;
  size_t n, cap;
  combiner join; /* push's, for runs that continue the last one */
  unsigned char *swap; /* big-endian hosts: a row turned little-endian */
  size_t swap_cap;
};

tsr__sums *tsr__sums_new(void) {
  tsr__sums *s = calloc(1, sizeof(tsr__sums));
  if (s) s->join.len = -1;
  return s;
}

void tsr__sums_free(tsr__sums *s) {
  if (!s) return;
  free(s->runs);
  free(s->swap);
  free(s);
}

static int little_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* The CRC-32 of @p n elements of @p es bytes, as little-endian values. */
static int row_crc(tsr__sums *s, const unsigned char *p, int64_t n, size_t es, uint32_t *crc) {
  size_t bytes = (size_t)n * es;
  if (es > 1 && !little_endian()) {
    if (bytes > s->swap_cap) {
      unsigned char *b = realloc(s->swap, bytes);
      if (!b) return TSR_ENOMEM;
      s->swap = b, s->swap_cap = bytes;
    }
    for (int64_t i = 0; i < n; i++)
      for (size_t k = 0; k < es; k++) s->swap[i * (int64_t)es + (int64_t)k] = p[i * (int64_t)es + (int64_t)(es - 1 - k)];
    p = s->swap;
  }
  *crc = tsr__crc32(p, bytes);
  return 0;
}

/* Append a run, or extend the last one when this run continues it (a block
 * of whole rows is then one run, not one per row). */
static int push(tsr__sums *s, int varid, int64_t frame, int64_t off, int64_t len, uint32_t crc) {
  if (s->n) {
    run *last = &s->runs[s->n - 1];
    if (last->varid == varid && last->frame == frame && last->off + last->len == off) {
      last->crc = combine(&s->join, last->crc, crc, len);
      last->len += len;
      return 0;
    }
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 256;
    run *r = realloc(s->runs, cap * sizeof *r);
    if (!r) return TSR_ENOMEM;
    s->runs = r, s->cap = cap;
  }
  s->runs[s->n++] = (run){.frame = frame, .off = off, .len = len, .varid = varid, .crc = crc};
  return 0;
}

int tsr__sums_add(tsr__sums *s, const tsr__schema *schema, int varid, int64_t frame,
                  const int64_t start[], const int64_t count[], const void *buf, tsr__memview mem) {
  const tsr__var *v = &schema->vars[varid];
  if (!v->is_record) frame = 0;
  size_t es = tsr__type_size(v->type);
  int64_t shape[TSR_MAX_DIMS];
  int nd = tsr__var_shape(schema, varid, shape);
  int64_t rows = 1;
  for (int i = 0; i + 1 < nd; i++) rows *= count[i];
  int64_t width = nd ? count[nd - 1] : 1;
  if (rows == 0 || width == 0) return 0;
  /* Walk the rows (the last dimension) of the block in C order: each is
   * contiguous in the frame and in memory. */
  int64_t idx[TSR_MAX_DIMS] = {0};
  for (int64_t r = 0; r < rows; r++) {
    int64_t foff = 0, moff = 0;
    for (int i = 0; i < nd; i++) {
      int64_t at = i + 1 < nd ? idx[i] : 0;
      foff = foff * shape[i] + start[i] + at;
      moff = mem.mshape ? moff * mem.mshape[i] + mem.moffset[i] + at : moff * count[i] + at;
    }
    uint32_t crc;
    int rc = row_crc(s, (const unsigned char *)buf + moff * (int64_t)es, width, es, &crc);
    if (!rc) rc = push(s, varid, frame, foff * (int64_t)es, width * (int64_t)es, crc);
    if (rc) return rc;
    for (int i = nd - 2; i >= 0; i--) { /* next row: odometer over the leading dims */
      if (++idx[i] < count[i]) break;
      idx[i] = 0;
    }
  }
  return 0;
}

static int by_place(const void *a, const void *b) {
  const run *x = a, *y = b;
  if (x->varid != y->varid) return x->varid < y->varid ? -1 : 1;
  if (x->frame != y->frame) return x->frame < y->frame ? -1 : 1;
  return (x->off > y->off) - (x->off < y->off);
}

/* Every writer's runs on rank 0 (*all, *nall); other ranks get none. */
static int gather(const tsr__sums *s, MPI_Comm comm, run **all, size_t *nall) {
  int me, np;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &np);
  /* Counts in runs, so that int counts reach 2^31 runs, not bytes. */
  int mine = s->n > INT32_MAX ? -1 : (int)s->n, *counts = NULL, *displs = NULL;
  MPI_Datatype t;
  MPI_Type_contiguous((int)sizeof(run), MPI_BYTE, &t);
  MPI_Type_commit(&t);
  int rc = 0;
  if (me == 0) {
    counts = malloc((size_t)np * sizeof *counts);
    displs = malloc((size_t)np * sizeof *displs);
    if (!counts || !displs) rc = TSR_ENOMEM;
  }
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
  size_t total = 0;
  if (me == 0 && !rc) {
    for (int i = 0; i < np; i++) {
      if (counts[i] < 0 || total + (size_t)counts[i] > INT32_MAX) rc = TSR_ENOMEM;
      displs[i] = (int)total;
      total += counts[i] > 0 ? (size_t)counts[i] : 0;
    }
    *all = malloc((total ? total : 1) * sizeof(run));
    if (!*all) rc = TSR_ENOMEM;
  }
  /* Agree before the Gatherv, which rank 0 can no longer receive after a
   * failure; the sums are then given up on every rank. */
  rc = tsr__agree(comm, rc);
  if (!rc)
    MPI_Gatherv(s->runs, mine, t, me == 0 ? *all : NULL, counts, displs, t, 0, comm);
  else if (me == 0) {
    free(*all);
    *all = NULL;
  }
  MPI_Type_free(&t);
  free(counts);
  free(displs);
  *nall = me == 0 && !rc ? total : 0;
  return rc;
}

/* One (variable, frame): its chained sum, or -1 when its runs do not cover
 * its @p bytes exactly once. */
static int64_t chain(combiner *c, const run *r, size_t n, int64_t bytes) {
  int64_t at = 0;
  uint32_t crc = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].off != at) return -1; /* a gap or an overlap */
    crc = combine(c, crc, r[i].crc, r[i].len);
    at += r[i].len;
  }
  return at == bytes ? (int64_t)crc : -1;
}

/* A growing text (the manifest, an attribute); NULL text after a failure. */
typedef struct {
  char *p;
  size_t n, cap;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  if (!t->p && t->cap) return; /* failed before */
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (t->p && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return;
    }
    size_t cap = (t->cap ? 2 * t->cap : 256) + (size_t)k;
    char *p = realloc(t->p, cap);
    if (!p) {
      free(t->p);
      t->p = NULL, t->cap = 1;
      return;
    }
    t->p = p, t->cap = cap;
    if (t->n == 0) p[0] = '\0';
  }
}

/* The JSON string of a name: variable and file names are printable, but a
 * quote or backslash in one must not break the line. */
static void add_name(text *t, const char *s) {
  add(t, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') add(t, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) add(t, "\\u%04x", (unsigned)(unsigned char)*s);
    else add(t, "%c", *s);
  }
  add(t, "\"");
}

/* On rank 0: per (variable, frame) sums, into the attribute texts and the
 * manifest lines. sums[v][f] is -1 where there is none. */
static int build(const tsr__schema *schema, int64_t **sums, const int64_t *frames,
                 int64_t nframes, const char *name, tsr__sums_result *out) {
  for (int v = 0; v < schema->nvars; v++) {
    if (!frames[v]) continue;
    text a = {0};
    for (int64_t f = 0; f < frames[v]; f++)
      sums[v][f] < 0 ? add(&a, f ? " -" : "-") : add(&a, f ? " %08x" : "%08x", (unsigned)sums[v][f]);
    if (!a.p) return TSR_ENOMEM;
    out->att[v] = a.p;
  }
  text m = {0};
  for (int64_t f = 0; f < nframes; f++) {
    add(&m, "{\"file\": ");
    add_name(&m, name);
    add(&m, ", \"frame\": %lld, \"frames\": %lld, \"hash\": \"crc32\", \"vars\": {",
        (long long)f, (long long)nframes);
    int first = 1;
    for (int v = 0; v < schema->nvars; v++) {
      /* A fixed variable belongs to the file's first frame. */
      int64_t k = schema->vars[v].is_record ? f : (f == 0 ? 0 : -1);
      if (k < 0 || k >= frames[v] || sums[v][k] < 0) continue;
      add(&m, first ? "" : ", ");
      add_name(&m, schema->vars[v].name);
      add(&m, ": \"%08x\"", (unsigned)sums[v][k]);
      first = 0;
    }
    add(&m, "}}\n");
  }
  if (!m.p && nframes) return TSR_ENOMEM;
  out->manifest = m.p;
  return 0;
}

/* On rank 0: chain the sorted runs per (variable, frame). */
static int chain_all(const tsr__schema *schema, run *all, size_t n, const char *name,
                     tsr__sums_result *out) {
  int nv = schema->nvars, rc = 0;
  combiner c = {-1, 0};
  int64_t *frames = calloc((size_t)nv + 1, sizeof *frames), nframes = 0;
  int64_t **sums = calloc((size_t)nv + 1, sizeof *sums);
  if (!frames || !sums) rc = TSR_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++) /* frames per variable: one past the last written */
    if (all[i].frame + 1 > frames[all[i].varid]) frames[all[i].varid] = all[i].frame + 1;
  for (int v = 0; v < nv && !rc; v++) {
    if (schema->vars[v].is_record && frames[v] > nframes) nframes = frames[v];
    if (frames[v] && !(sums[v] = malloc((size_t)frames[v] * sizeof **sums))) rc = TSR_ENOMEM;
    for (int64_t f = 0; f < frames[v] && !rc; f++) sums[v][f] = -1;
  }
  if (!nframes) /* no record variable: the file is one frame */
    for (int v = 0; v < nv; v++) nframes = frames[v] ? 1 : nframes;
  for (size_t i = 0, j; i < n && !rc; i = j) {
    for (j = i; j < n && all[j].varid == all[i].varid && all[j].frame == all[i].frame; j++) {
    }
    int v = all[i].varid;
    int64_t bytes = tsr__var_frame_elems(schema, v) * (int64_t)tsr__type_size(schema->vars[v].type);
    sums[v][all[i].frame] = chain(&c, &all[i], j - i, bytes);
  }
  if (!rc) rc = build(schema, sums, frames, nframes, name, out);
  for (int v = 0; sums && v < nv; v++) free(sums[v]);
  free(sums);
  free(frames);
  return rc;
}

/* The attribute texts from rank 0 to every rank, as one buffer of
 * NUL-terminated texts ("" for none). */
static int share(MPI_Comm comm, int nv, tsr__sums_result *out, int rc) {
  int me;
  MPI_Comm_rank(comm, &me);
  long long len = 0;
  if (me == 0 && !rc)
    for (int v = 0; v < nv; v++) len += (long long)(out->att[v] ? strlen(out->att[v]) : 0) + 1;
  int np;
  MPI_Comm_size(comm, &np);
  if (np == 1) return rc;
  rc = tsr__agree(comm, rc);
  if (rc) return rc;
  MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
  char *all = malloc((size_t)len + 1);
  int bad = !all || len > INT32_MAX;
  if (!bad && me == 0)
    for (int v = 0, at = 0; v < nv; v++) {
      const char *a = out->att[v] ? out->att[v] : "";
      memcpy(all + at, a, strlen(a) + 1);
      at += (int)strlen(a) + 1;
    }
  rc = tsr__agree(comm, bad ? TSR_ENOMEM : 0);
  if (!rc) MPI_Bcast(all, (int)len, MPI_CHAR, 0, comm);
  if (!rc && me != 0)
    for (int v = 0, at = 0; v < nv && !rc; v++) {
      const char *a = all + at;
      at += (int)strlen(a) + 1;
      if (a[0] && !(out->att[v] = strdup(a))) rc = TSR_ENOMEM;
    }
  free(all);
  return tsr__agree(comm, rc);
}

int tsr__sums_finish(tsr__sums *s, MPI_Comm comm, const tsr__schema *schema, const char *name,
                     tsr__sums_result *out) {
  memset(out, 0, sizeof *out);
  out->att = calloc((size_t)schema->nvars + 1, sizeof *out->att);
  int rc = tsr__agree(comm, out->att ? 0 : TSR_ENOMEM);
  run *all = NULL;
  size_t n = 0;
  if (!rc) rc = gather(s, comm, &all, &n); /* agreed: on failure every rank stops here */
  int me;
  MPI_Comm_rank(comm, &me);
  if (!rc) {
    if (me == 0) {
      qsort(all, n, sizeof *all, by_place);
      rc = chain_all(schema, all, n, name, out);
    }
    rc = share(comm, schema->nvars, out, rc); /* every rank: it agrees rank 0's status */
  }
  free(all);
  if (rc) tsr__sums_result_free(out, schema->nvars);
  return rc;
}

void tsr__sums_result_free(tsr__sums_result *r, int nvars) {
  for (int v = 0; r->att && v < nvars; v++) free(r->att[v]);
  free(r->att);
  free(r->manifest);
  r->att = NULL, r->manifest = NULL;
}

char *tsr__sums_placeholder(const tsr__schema *schema, int varid, int frames) {
  int n = schema->vars[varid].is_record && frames > 1 ? frames : 1;
  char *p = malloc((size_t)n * 9);
  if (!p) return NULL;
  for (int f = 0; f < n; f++) memcpy(p + 9 * f, "-------- ", 9);
  p[9 * n - 1] = '\0'; /* 8 dashes per sum, a space between */
  return p;
}

int tsr__sums_fit(const char *text, size_t len, char *out) {
  size_t n = strlen(text);
  if (n > len) return 0;
  memcpy(out, text, n);
  memset(out + n, ' ', len - n);
  out[len] = '\0';
  return 1;
}
