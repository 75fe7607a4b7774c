/* An incomplete reduce= period across jobs (docs/reductions.md "Restart"):
 * tsr_finalize saves it in "<derived path>.tessera-partial", the next job's
 * first file of the stream loads it. One file written with MPI-IO:
 *
 *   [0, 4096)          text header, NUL padded: "tessera-partial 1" and one
 *                      "key value" line each (ranks, glob, spec, prefix,
 *                      first, first_frame, last, last_frame, times as hex)
 *   [4096, +8*ranks)   each rank's block size (int64, native order)
 *   then the blocks    in rank order: per item frames, n, flat, tile start
 *                      and count (int64), then its arrays (sum, m2, ext)
 *
 * Native byte order and one block per rank: a partial continues the same
 * model on the same machine with the same decomposition, which is checked
 * (ranks here, each item's tile on its first put). */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/reduce_state.h"
#include "core/reduce_msg.h"
#include "strategy/strategy.h"

#define HEADER 4096
#define SUFFIX ".tessera-partial"

static int64_t item_arrays(const tsr__racc *a, tsr_type type) {
  return a->n > 0 ? tsr__racc_elem_bytes(a->op, type) * a->n : 0;
}

/* Serialise or deserialise one array: @p save copies into @p p. */
static void move(char **p, void *arr, int64_t bytes, int save) {
  if (!arr || bytes <= 0) return;
  if (save) memcpy(*p, arr, (size_t)bytes);
  else memcpy(arr, *p, (size_t)bytes);
  *p += bytes;
}

enum { ITEM_WORDS = 3 + 2 * TSR_MAX_DIMS };

static int64_t block_size(const tsr__rstream *s) {
  int64_t n = 0;
  for (int i = 0; i < s->nitems; i++)
    n += ITEM_WORDS * 8 + item_arrays(&s->items[i], s->vars[s->items[i].var].type);
  return n;
}

static void save_block(const tsr__rstream *s, char *p) {
  for (int i = 0; i < s->nitems; i++) {
    const tsr__racc *a = &s->items[i];
    int64_t w[ITEM_WORDS] = {a->frames, a->n, a->flat};
    memcpy(w + 3, a->tile.start, sizeof a->tile.start);
    memcpy(w + 3 + TSR_MAX_DIMS, a->tile.count, sizeof a->tile.count);
    memcpy(p, w, sizeof w);
    p += sizeof w;
    int64_t n = a->n > 0 ? a->n : 0;
    size_t es = tsr__type_size(s->vars[a->var].type);
    move(&p, a->sum, a->sum ? n * 8 : 0, 1);
    move(&p, a->m2, a->m2 ? n * 8 : 0, 1);
    move(&p, a->ext, a->ext ? n * (int64_t)es : 0, 1);
  }
}

static void header_text(const tsr_ctx *ctx, const tsr__rstream *s, char *h) {
  char spec[320], hex[1024] = "";
  tsr__hint_reduce.format(&s->spec, spec, sizeof spec);
  for (int64_t i = 0; s->times_buf && i < s->times_len && i < 500; i++)
    snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s->times_buf[i]);
  memset(h, 0, HEADER);
  snprintf(h, HEADER,
           "tessera-partial 1\nranks %d\nglob %s\nspec %s\nprefix %s\nfirst %s\nfirst_frame %lld\n"
           "last %s\nlast_frame %lld\ntimes %s\n",
           ctx->size, s->spec.glob, spec, s->prefix, s->first_path, (long long)s->first_frame,
           s->last_path, (long long)s->last_frame, hex);
  /* Accumulators the writers held (the I/O servers): one block of theirs
   * follows the header, and the items' frames are here. */
  if (!s->held) return;
  size_t at = strlen(h);
  at += (size_t)snprintf(h + at, HEADER - at, "folded writers\nframes");
  for (int i = 0; i < s->nitems && at < HEADER - 32; i++)
    at += (size_t)snprintf(h + at, HEADER - at, " %lld", (long long)s->items[i].frames);
  snprintf(h + at, HEADER - at, "\n");
}

int tsr__reduce_partial_save_held(tsr_ctx *ctx, const struct tsr__strategy_ops *st,
                                  tsr__rstream *s) {
  tsr__rsave *sv = calloc(1, sizeof *sv);
  char *derived = tsr__reduce_derived_path(s->first_path, s->prefix);
  int rc = tsr__agree(ctx->comm, sv && derived ? 0 : TSR_ENOMEM);
  if (!rc) {
    sv->sid = s->sid;
    memcpy(sv->endseq, s->vseq, sizeof sv->endseq);
    snprintf(sv->path, sizeof sv->path, "%s%s", derived, SUFFIX);
    if (ctx->rank == 0) header_text(ctx, s, sv->header);
    /* Saved by the writers; a failure comes back with tsr_finalize. */
    rc = tsr__agree(ctx->comm, st->reduce_ctl(ctx, TSR__RCTL_SAVE, sv, (int64_t)sizeof *sv));
  }
  free(sv), free(derived);
  return rc;
}

int tsr__reduce_partial_save(tsr_ctx *ctx, tsr__rstream *s, char *msg, size_t msglen) {
  char *derived = tsr__reduce_derived_path(s->first_path, s->prefix);
  char *path = derived ? malloc(strlen(derived) + sizeof SUFFIX) : NULL;
  if (path) sprintf(path, "%s%s", derived, SUFFIX);
  int64_t mine = block_size(s);
  char *block = path ? malloc((size_t)(mine > 0 ? mine : 1)) : NULL;
  int64_t *sizes = calloc((size_t)ctx->size, sizeof *sizes);
  char *head = malloc(HEADER);
  int rc = tsr__agree(ctx->comm, block && sizes && head ? 0 : TSR_ENOMEM);
  if (!rc && MPI_Allgather(&mine, 1, MPI_INT64_T, sizes, 1, MPI_INT64_T, ctx->comm) != MPI_SUCCESS)
    rc = TSR_EMPI;
  /* A side file of an earlier job for the same period is replaced whole:
   * removed before the collective open (agreed, so after the removal). */
  int gone = !rc && ctx->rank == 0 ? remove(path) != 0 && access(path, F_OK) == 0 : 0;
  if (!rc) rc = tsr__agree(ctx->comm, gone ? TSR_EIO : 0);
  MPI_File fh = MPI_FILE_NULL;
  if (!rc) rc = tsr__agree(ctx->comm, MPI_File_open(ctx->comm, path, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                                                   MPI_INFO_NULL, &fh) ? TSR_EIO : 0);
  if (!rc) {
    MPI_Offset off = HEADER + 8 * (MPI_Offset)ctx->size;
    for (int r = 0; r < ctx->rank; r++) off += sizes[r];
    save_block(s, block);
    int err = 0;
    if (ctx->rank == 0) {
      header_text(ctx, s, head);
      err |= MPI_File_write_at(fh, 0, head, HEADER, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS;
      err |= MPI_File_write_at(fh, HEADER, sizes, ctx->size, MPI_INT64_T, MPI_STATUS_IGNORE) !=
             MPI_SUCCESS;
    }
    err |= MPI_File_write_at_all(fh, off, block, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE) !=
           MPI_SUCCESS;
    err |= MPI_File_close(&fh) != MPI_SUCCESS;
    rc = tsr__agree(ctx->comm, err ? TSR_EIO : 0);
  }
  if (rc) snprintf(msg, msglen, "reduce: cannot save the incomplete period in '%s'",
                   path ? path : "(out of memory)");
  free(derived), free(path), free(block), free(sizes), free(head);
  return rc;
}

/* The value of "key value" line @p key of header @p h into @p out. */
static int field(const char *h, const char *key, char *out, size_t cap) {
  size_t k = strlen(key);
  for (const char *p = h; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, key, k) != 0 || p[k] != ' ') continue;
    const char *v = p + k + 1, *e = strchr(v, '\n');
    size_t n = e ? (size_t)(e - v) : strlen(v);
    if (n >= cap) return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
  }
  return -1;
}

static int read_header(const char *path, char *h) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  size_t n = fread(h, 1, HEADER, fp);
  fclose(fp);
  h[HEADER - 1] = '\0';
  return n == HEADER && strncmp(h, "tessera-partial 1\n", 18) == 0 ? 0 : -1;
}

/* Rank 0: the partial of stream @p s beside @p src, if any (the one whose
 * last source file is latest), into @p found. */
static void find_partial(const tsr__rstream *s, const char *src, char *found, size_t cap,
                         char *last) {
  char *copy = strdup(src), spec[320], v[1024], *h = malloc(HEADER);
  found[0] = last[0] = '\0';
  DIR *dir = copy && h ? opendir(dirname(copy)) : NULL;
  tsr__hint_reduce.format(&s->spec, spec, sizeof spec);
  size_t pn = strlen(s->prefix), sn = strlen(SUFFIX);
  for (struct dirent *e; dir && (e = readdir(dir));) {
    size_t n = strlen(e->d_name);
    if (n <= sn + pn || strcmp(e->d_name + n - sn, SUFFIX) != 0 ||
        strncmp(e->d_name, s->prefix, pn) != 0)
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", copy, e->d_name);
    if (read_header(path, h)) continue;
    int same = field(h, "glob", v, sizeof v) == 0 && strcmp(v, s->spec.glob) == 0 &&
               field(h, "spec", v, sizeof v) == 0 && strcmp(v, spec) == 0 &&
               field(h, "prefix", v, sizeof v) == 0 && strcmp(v, s->prefix) == 0 &&
               field(h, "last", v, sizeof v) == 0;
    if (same && strcmp(v, last) > 0) {
      snprintf(found, cap, "%s", path);
      snprintf(last, 1024, "%s", v);
    }
  }
  if (dir) closedir(dir);
  free(copy), free(h);
}

static const char *base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* Every rank: the header's period state and this rank's block into @p s. */
static int load(tsr_ctx *ctx, tsr__rstream *s, const char *path, const char *h, char *msg,
                size_t msglen) {
  char v[1024];
  int ranks = field(h, "ranks", v, sizeof v) == 0 ? atoi(v) : -1;
  if (ranks != ctx->size) {
    snprintf(msg, msglen, "reduce: '%s' was saved by %d model ranks and this job has %d: a "
             "period continues only with the same decomposition (remove the file to start a new "
             "period)", path, ranks, ctx->size);
    return TSR_EDECOMP;
  }
  int held = field(h, "folded", v, sizeof v) == 0;
  if (held != s->held) {
    snprintf(msg, msglen, "reduce: '%s' holds a period folded %s, and this job folds %s: a period "
             "continues only where it was folded (remove the file to start a new period)", path,
             held ? "on the I/O servers" : "on the model ranks",
             s->held ? "on the I/O servers" : "on the model ranks");
    return TSR_EDECOMP;
  }
  if (held) { /* the writers load the block (core/reduce_msg.h); the frames are here */
    const char *p = field(h, "frames", v, sizeof v) == 0 ? v : "";
    for (int i = 0; i < s->nitems; i++) {
      char *end;
      s->items[i].frames = strtoll(p, &end, 10);
      if (end == p) {
        snprintf(msg, msglen, "reduce: cannot read '%s' (short or not written by this stream)", path);
        return TSR_EIO;
      }
      p = end;
    }
    return 0;
  }
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_SELF, (char *)path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) return TSR_EIO;
  int64_t *sizes = calloc((size_t)ctx->size, sizeof *sizes);
  int err = !sizes || MPI_File_read_at(fh, HEADER, sizes, ctx->size, MPI_INT64_T, MPI_STATUS_IGNORE);
  MPI_Offset off = HEADER + 8 * (MPI_Offset)ctx->size;
  for (int r = 0; !err && r < ctx->rank; r++) off += sizes[r];
  char *block = err ? NULL : malloc((size_t)(sizes[ctx->rank] > 0 ? sizes[ctx->rank] : 1));
  err |= !block || MPI_File_read_at(fh, off, block, (int)sizes[ctx->rank], MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  char *p = block, *end = block ? block + sizes[ctx->rank] : NULL;
  for (int i = 0; !err && i < s->nitems; i++) {
    tsr__racc *a = &s->items[i];
    int64_t w[ITEM_WORDS];
    if (end - p < (ptrdiff_t)sizeof w) { err = 1; break; }
    memcpy(w, p, sizeof w);
    p += sizeof w;
    a->frames = w[0];
    a->flat = (int)w[2];
    memcpy(a->tile.start, w + 3, sizeof a->tile.start);
    memcpy(a->tile.count, w + 3 + TSR_MAX_DIMS, sizeof a->tile.count);
    tsr_type type = s->vars[a->var].type;
    if (w[1] >= 0 && tsr__racc_alloc(ctx, a, type, w[1])) { err = 1; break; }
    if (end - p < item_arrays(a, type)) { err = 1; break; }
    int64_t n = a->n > 0 ? a->n : 0;
    move(&p, a->sum, a->sum ? n * 8 : 0, 0);
    move(&p, a->m2, a->m2 ? n * 8 : 0, 0);
    move(&p, a->ext, a->ext ? n * (int64_t)tsr__type_size(type) : 0, 0);
  }
  free(sizes), free(block);
  if (err) {
    snprintf(msg, msglen, "reduce: cannot read '%s' (short or not written by this stream)", path);
    return TSR_EIO;
  }
  return 0;
}

int tsr__reduce_partial_load(tsr_ctx *ctx, tsr__rstream *s, const char *src, char *msg,
                             size_t msglen) {
  char found[4096] = "", last[1024] = "";
  char *h = calloc(1, HEADER);
  int rc = 0;
  if (ctx->rank == 0 && h) {
    find_partial(s, src, found, sizeof found, last);
    if (found[0] && read_header(found, h)) rc = TSR_EIO;
    if (found[0] && strcmp(base_of(last), base_of(src)) >= 0) {
      snprintf(msg, msglen, "reduce: '%s' holds a period up to '%s', and this job's first file "
               "'%s' does not follow it (remove the side file to start a new period)",
               found, last, src);
      rc = TSR_EHINT;
    }
  }
  int mine = h ? rc : TSR_ENOMEM;
  rc = tsr__agree(ctx->comm, mine);
  if (rc) tsr__share_message(ctx->comm, mine, rc, msg, msglen);
  if (!rc) {
    MPI_Bcast(found, sizeof found, MPI_CHAR, 0, ctx->comm);
    MPI_Bcast(h, HEADER, MPI_CHAR, 0, ctx->comm);
  }
  if (!rc && found[0]) {
    int lrc = load(ctx, s, found, h, msg, msglen);
    rc = tsr__agree(ctx->comm, lrc);
    if (rc) tsr__share_message(ctx->comm, lrc, rc, msg, msglen);
  }
  if (!rc && found[0]) {
    char v[1024];
    s->first_path = field(h, "first", v, sizeof v) == 0 ? strdup(v) : NULL;
    s->first_frame = field(h, "first_frame", v, sizeof v) == 0 ? atoll(v) : 0;
    s->last_path = field(h, "last", v, sizeof v) == 0 ? strdup(v) : NULL;
    s->last_frame = field(h, "last_frame", v, sizeof v) == 0 ? atoll(v) : 0;
    if (field(h, "times", v, sizeof v) == 0 && v[0]) {
      size_t n = strlen(v) / 2;
      s->times_buf = malloc(n ? n : 1);
      for (size_t i = 0; s->times_buf && i < n; i++) {
        unsigned x = 0;
        sscanf(v + 2 * i, "%2x", &x);
        s->times_buf[i] = (char)x;
      }
      s->times_len = s->times_buf ? (int64_t)n : 0;
    }
    s->partial = strdup(found);
    TSR_LOG("reduce: continuing the period of %s", found);
  }
  free(h);
  return rc;
}
