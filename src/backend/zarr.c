/* Zarr v3 backend (format=zarr): a store directory that xarray and dask open
 * with xarray.open_zarr(path, zarr_format=3, consolidated=False) and see the
 * variables, dimensions, attributes and decoded times of the NetCDF file.
 *
 * Layout (docs/zarr.md): <store>/zarr.json is the root group (the global
 * attributes), <store>/<var>/zarr.json each array (shape, regular chunk grid,
 * data type, fill value, codecs, dimension_names, the variable's attributes),
 * <store>/<var>/c/<t>/<k>/<j>/<i> its chunks (default chunk key encoding).
 * Chunks default to one horizontal level of one frame (chunks= gives others);
 * the record dimension is always cut one frame per chunk, so frames are
 * appended as chunks and the record length is written into the documents at
 * close. Codecs: `bytes` (little-endian), then `zstd` (zstd=, libzstd) or
 * `gzip` (deflate=, zlib); no lossy codec, so values come back exactly.
 * With shards= the unit a writer assembles is a shard, which zarr_shard.c
 * cuts into inner chunks encoded as plain chunks are (`sharding_indexed`).
 *
 * Writers hold whole chunks. Like grib2, the backend says `whole_levels`:
 * serial writes everything from one rank; aggregate's writers and a server
 * group's tasks each get whole horizontal levels, so with several writers a
 * chunk must be one level deep (checked at create); direct on several ranks
 * is refused by the API layer (its ranks hold tiles). Blocks arrive in any
 * shape (the serial writer's slabs), so each chunk is assembled in memory
 * (fill-initialised: edge chunks are padded with the fill value, as Zarr's
 * regular grid wants) and compressed and written the moment its last point
 * arrives: the memory held is the chunks in progress. Every chunk is its own
 * file, so writers need no agreement until the close, which agrees on the
 * record length and then has rank 0 write every array's document.
 *
 * Atomic: the store is built under the sink's temporary name and renamed into
 * place by the API layer like any file. A store already at the final name is
 * renamed to a trash name only when the new one is complete, and removed in
 * the background (zarr_fs.h); anything else at the final name is refused at
 * create. This backend removes its own trees (the temporary after a failure,
 * a stale one before a create): the tier's name functions remove files and
 * flat log directories, not nested stores. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "backend/backend.h"
#include "backend/backend_block.h"
#include "backend/backend_errors.h"
#include "backend/sink.h" /* TSR__TMP_SUFFIX */
#include "backend/zarr_codec.h"
#include "backend/zarr_fs.h"
#include "backend/zarr_meta.h"
#include "backend/zarr_read.h"
#include "backend/zarr_shard.h"

#define LIB "Zarr"
/* Room for any name in a store: its path (at most ZMAXPATH), a variable name
 * and a chunk key of TSR_MAX_DIMS + 1 coordinates. */
#define ZMAXPATH 3700
#define ZPATH (ZMAXPATH + TSR_MAX_NAME + 24 * (TSR_MAX_DIMS + 1) + 64)

typedef struct { /* one chunk being assembled */
  unsigned char *data;
  int64_t nseen, need;
} zchunk;

typedef struct { /* the chunks of one variable at one frame in progress */
  int varid;
  int64_t frame;
  zchunk **c; /* one slot per chunk of the frame */
  int64_t live;
} zframe;

typedef struct {
  int nd;                      /* non-record dimensions */
  int64_t chunk[TSR_MAX_DIMS]; /* their lengths in what a writer assembles: a chunk, or a shard */
  int64_t grid[TSR_MAX_DIMS];  /* chunks (shards) along each */
  int64_t nchunks, celems;
  int sharded;                 /* 1: each chunk above is a shard of inner chunks */
  int64_t inner[TSR_MAX_DIMS]; /* the inner chunk's lengths (= chunk when not sharded) */
  unsigned char fill[8];
} zvar;

struct tsr__bfile {
  char *path, *final; /* the store being written; where it goes (NULL: unknown) */
  MPI_Comm comm;      /* our duplicate with several writers; else MPI_COMM_NULL */
  int rank, nwriters;
  int nvars;
  tsr__bvar *vars;
  zvar *z;
  void *schema; /* rank 0: the packed schema, for the documents at close */
  size_t schema_len;
  int zstd, deflate;
  zframe *fr;
  int nfr, frcap;
  int64_t pending, nrec;
  unsigned char *out; /* compressed chunk */
  size_t outcap;
  tsr__zbuf shard; /* a shard's file being put together */
  void *scratch;
  size_t scratch_cap;
  char lastdir[ZPATH]; /* the chunk directory made last */
  tsr__zreader *rd;    /* a store open for reading (zarr_read.c); NULL when writing */
  char *annot_name;    /* rank 0: a text attribute annotate gave each array (checksum=) */
  char **annot;        /* its text per variable, NULL for none */
  int annot_rc;        /* annotate's failure, which close makes every writer's */
};

/* ---- create ---- */

static void free_file(tsr__bfile *bf) {
  if (!bf) return;
  if (bf->comm != MPI_COMM_NULL) MPI_Comm_free(&bf->comm);
  for (int i = 0; i < bf->nfr; i++) {
    for (int64_t c = 0; c < bf->z[bf->fr[i].varid].nchunks; c++)
      if (bf->fr[i].c[c]) free(bf->fr[i].c[c]->data), free(bf->fr[i].c[c]);
    free(bf->fr[i].c);
  }
  free(bf->fr);
  free(bf->out);
  free(bf->shard.p);
  free(bf->scratch);
  free(bf->schema);
  free(bf->z);
  free(bf->vars);
  free(bf->path);
  free(bf->final);
  for (int v = 0; bf->annot && v < bf->nvars; v++) free(bf->annot[v]);
  free(bf->annot);
  free(bf->annot_name);
  tsr__zarr_read_free(bf->rd);
  free(bf);
}

/* A length of @p c (chunks= or shards=) for dimension @p i of @p nd, counted
 * from the end; @p dflt where @p c gives none (auto, or fewer lengths). */
static int64_t hint_len(const tsr__chunks *c, int i, int nd, int64_t len, int64_t dflt) {
  int from_end = nd - 1 - i;
  if (c->n == TSR__CHUNKS_CONTIGUOUS) return len;
  if (c->n > 0 && from_end < c->n) return c->len[c->n - 1 - from_end];
  return dflt;
}

/* Shard lengths of variable @p v from shards=, each a multiple of the inner
 * chunk's (Zarr's rule); a shard as long as the dimension or longer is the
 * whole dimension, rounded up to whole inner chunks. An array whose shard
 * would hold one inner chunk stays unsharded: the index would only add bytes. */
static int shard_shape(tsr__bfile *bf, int v, const tsr__hints *h, tsr__berr *err) {
  const tsr__bvar *bv = &bf->vars[v];
  zvar *z = &bf->z[v];
  int64_t shard[TSR_MAX_DIMS], ninner = 1;
  for (int i = 0; i < bv->nd && h->shards.n != 0; i++) {
    int64_t len = bv->shape[i], in = z->inner[i];
    int64_t want = hint_len(&h->shards, i, bv->nd, len, in), whole = (len + in - 1) / in * in;
    if (want >= len) want = whole > in ? whole : in;
    else if (want % in != 0)
      return tsr__berr_plain(err, TSR_EHINT, LIB,
                             "shards=: %s: a shard of %lld along dimension %d is no multiple of "
                             "its chunk length %lld; a shard holds whole chunks",
                             bv->name, (long long)want, i, (long long)in);
    if (bf->nwriters > 1 && bv->nd - 1 - i >= 2 && want > 1)
      return tsr__berr_plain(err, TSR_EHINT, LIB,
                             "shards=: %s would get shards %lld levels deep, but each of the "
                             "%d writers holds whole horizontal levels, so a shard must be one "
                             "level deep (give at most two shard lengths, or one writer)",
                             bv->name, (long long)want, bf->nwriters);
    shard[i] = want;
    ninner *= want / in;
  }
  if (h->shards.n == 0 || ninner < 2) return 0;
  z->sharded = 1;
  z->nchunks = z->celems = 1;
  for (int i = 0; i < bv->nd; i++) {
    z->chunk[i] = shard[i];
    z->grid[i] = bv->shape[i] > 0 ? (bv->shape[i] + shard[i] - 1) / shard[i] : 0;
    z->nchunks *= z->grid[i];
    z->celems *= shard[i];
  }
  return 0;
}

/* Chunk lengths of variable @p v's non-record dimensions: chunks= for the
 * last ones, else one horizontal level (the last two whole, the others 1);
 * with several writers, who hold whole levels, one level deep. Then the
 * shards that group them, if asked for: the writers assemble shards. */
static int chunk_shape(tsr__bfile *bf, const tsr__schema *s, int v, const tsr__hints *h,
                       tsr__berr *err) {
  const tsr__bvar *bv = &bf->vars[v];
  zvar *z = &bf->z[v];
  z->nd = bv->nd;
  z->nchunks = z->celems = 1;
  for (int i = 0; i < bv->nd; i++) {
    int64_t len = bv->shape[i];
    int64_t want = hint_len(&h->chunks, i, bv->nd, len, bv->nd - 1 - i < 2 ? len : 1);
    if (h->chunks.n > 0 && bv->nd - 1 - i >= h->chunks.n) want = 1;
    if (want > len) want = len;
    if (want < 1) want = 1;
    if (bf->nwriters > 1 && bv->nd - 1 - i >= 2 && want > 1)
      return tsr__berr_plain(err, TSR_EHINT, LIB,
                             "chunks=: %s would get chunks %lld levels deep, but each of the "
                             "%d writers holds whole horizontal levels, so a chunk must be one "
                             "level deep (give at most two chunk lengths, or one writer)",
                             bv->name, (long long)want, bf->nwriters);
    z->chunk[i] = z->inner[i] = want;
    z->grid[i] = len > 0 ? (len + want - 1) / want : 0;
    z->nchunks *= z->grid[i];
    z->celems *= want;
  }
  int rc = shard_shape(bf, v, h, err);
  if (rc) return rc;
  if ((double)z->celems * (double)bv->esize > 2147483647.0)
    return tsr__berr_plain(err, TSR_EHINT, LIB, "a %s of %s would hold %.0f bytes, more than "
                           "2 GiB; give smaller %s", z->sharded ? "shard" : "chunk", bv->name,
                           (double)z->celems * (double)bv->esize,
                           z->sharded ? "shards=" : "chunks=");
  tsr__var_fill(s, v, z->fill);
  return 0;
}

/* What this backend cannot write, found on every rank alike (same schema,
 * same hints), before anything is made. */
static int refuse(tsr__bfile *bf, const tsr__schema *s, const tsr__hints *h, tsr__berr *err) {
  if (h->zstd > 0 && h->deflate > 0)
    return tsr__berr_plain(err, TSR_EHINT, LIB, "zstd= and deflate= together: a Zarr array "
                           "takes one compressor; give one of them");
  if (h->zstd > 0 && !tsr__zarr_zstd_built())
    return tsr__berr_plain(err, TSR_ENOTBUILT, LIB, "zstd=%d: this library was built without "
                           "libzstd (install libzstd-dev and rebuild, or use deflate=)", h->zstd);
  if ((h->set & TSR__H_SHUFFLE) && h->shuffle)
    return tsr__berr_plain(err, TSR_EHINT, LIB, "shuffle=1: the byte shuffle is no Zarr v3 core "
                           "codec; leave it out (docs/zarr.md)");
  if (h->stage_dir[0])
    return tsr__berr_plain(err, TSR_EHINT, LIB, "stage_dir: a Zarr store is a directory tree, "
                           "which the stage's drain does not copy; write it in place");
  if (tsr__att_find(s->gatts, s->ngatts, "tessera_split_rank"))
    return tsr__berr_plain(err, TSR_EHINT, LIB, "strategy=split: every rank would write a "
                           "store of its own tile; use serial, aggregate or servers");
  for (int v = 0; v < s->nvars; v++) {
    const tsr__var *var = &s->vars[v];
    const char *n = var->name;
    if (!tsr__zarr_dtype(var->type))
      return tsr__berr_plain(err, TSR_ETYPE, LIB, "%s: no Zarr data type for type %d", n,
                             (int)var->type);
    if (!n[0] || !strcmp(n, ".") || !strcmp(n, "..") || !strncmp(n, "__", 2) ||
        !strcmp(n, "zarr.json") || strchr(n, '/'))
      return tsr__berr_plain(err, TSR_EINVAL, LIB, "variable name '%s' cannot name a Zarr "
                             "array (empty, '.', '..', '__...', 'zarr.json' or with '/')", n);
    if ((var->quantize_set ? var->quantize_mode : h->quantize.mode) != TSR__QUANTIZE_NONE)
      return tsr__berr_plain(err, TSR_EHINT, LIB, "quantize (%s): Tessera's Zarr stores "
                             "carry no lossy codec; leave quantize out", n);
    int rc = chunk_shape(bf, s, v, h, err);
    if (rc) return rc;
  }
  return 0;
}

/* Rank 0 lays the store out: a fresh temporary (what a killed run left is
 * removed), the root group's document, a directory per array. */
static int make_store(tsr__bfile *bf, const tsr__schema *s, tsr__berr *err) {
  if (bf->final && !tsr__zarr_replaceable(bf->final))
    return tsr__berr_plain(err, TSR_EACCES, LIB, "%s exists and is not a Zarr store; remove it "
                           "or write elsewhere", bf->final);
  /* What killed runs left (a temporary, trash) goes in the background. */
  errno = 0;
  if (bf->final) tsr__zarr_sweep(bf->final);
  if (tsr__zarr_retire(bf->path, bf->final ? bf->final : bf->path) != 0 ||
      mkdir(bf->path, 0777) != 0)
    return tsr__berr_plain(err, tsr__berr_from_errno(errno), LIB, "cannot create %s: %s",
                           bf->path, strerror(errno));
  tsr__zjson j = {0};
  char p[ZPATH];
  int rc = tsr__zarr_group_json(s, &j);
  snprintf(p, sizeof p, "%s/zarr.json", bf->path);
  if (rc) rc = tsr__berr_plain(err, rc, LIB, "out of memory (%s)", p);
  else rc = tsr__zarr_write_file(p, j.s, j.len, err);
  tsr__zjson_free(&j);
  for (int v = 0; v < s->nvars && !rc; v++) {
    snprintf(p, sizeof p, "%s/%s", bf->path, s->vars[v].name);
    rc = tsr__zarr_make_dir(p, err);
    snprintf(p, sizeof p, "%s/%s/c", bf->path, s->vars[v].name);
    if (!rc && s->vars[v].ndims > 0) /* a scalar's one chunk is c */
      rc = tsr__zarr_make_dir(p, err);
  }
  if (!rc && tsr__schema_pack(s, &bf->schema, &bf->schema_len))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", bf->path);
  return rc;
}

/* Every writer returns the same status; a writer that did not fail itself
 * names the failure as another's. */
static int agree(tsr__bfile *bf, int rc, const char *what, tsr__berr *err) {
  if (bf->comm == MPI_COMM_NULL) return rc;
  int all = rc;
  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, bf->comm) != MPI_SUCCESS)
    return rc ? rc : tsr__berr_plain(err, TSR_EMPI, LIB, "writers could not agree (%s)", what);
  if (all && !rc) tsr__berr_plain(err, all, LIB, "another writer failed: %s %s", what, bf->path);
  return all;
}

static int tsr__zarr_create(MPI_Comm comm, const char *path, const tsr__schema *s,
                            const tsr__hints *h, tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (!bf) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  bf->comm = MPI_COMM_NULL;
  MPI_Comm_size(comm, &bf->nwriters);
  MPI_Comm_rank(comm, &bf->rank);
  int rc = 0;
  if (bf->nwriters > 1 && MPI_Comm_dup(comm, &bf->comm) != MPI_SUCCESS) {
    bf->comm = MPI_COMM_NULL;
    free_file(bf);
    return tsr__berr_plain(err, TSR_EMPI, LIB, "MPI_Comm_dup failed (path %s)", path);
  }
  size_t n = strlen(path), ns = strlen(TSR__TMP_SUFFIX);
  if (!(bf->path = strdup(path)) || tsr__bvars_from_schema(s, &bf->vars) ||
      !(bf->z = calloc((size_t)(s->nvars > 0 ? s->nvars : 1), sizeof *bf->z)))
    rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  else if (n > ns && !strcmp(path + n - ns, TSR__TMP_SUFFIX) && (bf->final = strdup(path)))
    bf->final[n - ns] = '\0';
  bf->nvars = s->nvars;
  bf->zstd = h->zstd;
  bf->deflate = h->deflate;
  if (!rc && n > ZMAXPATH)
    rc = tsr__berr_plain(err, TSR_EACCES, LIB, "store path of %zu bytes: at most %d", n, ZMAXPATH);
  if (!rc) rc = refuse(bf, s, h, err);
  if (!rc && bf->rank == 0) rc = make_store(bf, s, err);
  /* Rank 0's store exists before any writer writes a chunk into it. */
  rc = agree(bf, rc, "creating", err);
  if (rc) {
    if (bf->rank == 0) tsr__zarr_rm_tree(path); /* our temporary, whatever of it was made */
    free_file(bf);
    return rc;
  }
  *out = bf;
  return 0;
}

/* ---- chunks ---- */

static int squeeze(tsr__bfile *bf, const void *src, size_t n, size_t *len, tsr__berr *err) {
  char why[128] = "";
  if (bf->zstd > 0) {
    if (tsr__zarr_zstd(src, n, bf->zstd, &bf->out, &bf->outcap, len, why, sizeof why))
      return tsr__berr_plain(err, TSR_EIO, LIB, "zstd: %s (%s)", why, bf->path);
    return 0;
  }
  /* gzip (a gzip header with no time or name: the same bytes every run). */
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, bf->deflate, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "zlib: deflateInit2 failed (%s)", bf->path);
  size_t need = deflateBound(&z, (uLong)n) + 32;
  unsigned char *p = need > bf->outcap ? realloc(bf->out, need) : bf->out;
  if (!p) {
    deflateEnd(&z);
    return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", bf->path);
  }
  if (need > bf->outcap) bf->out = p, bf->outcap = need;
  z.next_in = (Bytef *)src;
  z.avail_in = (uInt)n;
  z.next_out = bf->out;
  z.avail_out = (uInt)bf->outcap;
  int st = deflate(&z, Z_FINISH);
  *len = z.total_out;
  deflateEnd(&z);
  return st == Z_STREAM_END ? 0
                            : tsr__berr_plain(err, TSR_EIO, LIB, "zlib: deflate failed (%s)",
                                              bf->path);
}

/* What encode() needs besides the chunk (tsr__zarr_encode_fn's context). */
typedef struct {
  tsr__bfile *bf;
  size_t esize;
  tsr__berr *err;
} zenc;

/* One chunk's codecs: little-endian bytes (swapped in place on a big-endian
 * host), then the compressor into bf->out. The one encoding of plain chunks
 * and of a shard's inner chunks. */
static int encode(void *ctx, unsigned char *data, size_t n, const void **bytes, size_t *len) {
  const zenc *e = ctx;
  const uint16_t one = 1;
  if (*(const unsigned char *)&one == 0 && e->esize > 1) /* a big-endian host */
    for (size_t i = 0; i < n; i += e->esize)
      for (size_t a = 0, b = e->esize - 1; a < b; a++, b--) {
        unsigned char t = data[i + a];
        data[i + a] = data[i + b], data[i + b] = t;
      }
  *bytes = data;
  *len = n;
  if (e->bf->zstd <= 0 && e->bf->deflate <= 0) return 0;
  int rc = squeeze(e->bf, data, n, len, e->err);
  *bytes = e->bf->out; /* after squeeze, which may move it */
  return rc;
}

/* Encode chunk (or shard) @p ci of @p f and write it as
 * <var>/c/<t>/<k>/<j>/<i>; the chunk is freed either way. */
static int write_chunk(tsr__bfile *bf, zframe *f, int64_t ci, tsr__berr *err) {
  const tsr__bvar *v = &bf->vars[f->varid];
  const zvar *z = &bf->z[f->varid];
  zchunk *c = f->c[ci];
  size_t n = (size_t)z->celems * v->esize;
  const void *bytes = NULL;
  size_t len = 0;
  zenc e = {bf, v->esize, err};
  int rc;
  if (z->sharded) {
    /* Points of this shard inside the array: inner chunks past the edge
     * get no data, only their index entries. */
    int64_t inside[TSR_MAX_DIMS], rest = ci;
    for (int i = z->nd - 1; i >= 0; i--) {
      int64_t left = v->shape[i] - rest % z->grid[i] * z->chunk[i];
      inside[i] = left < z->chunk[i] ? left : z->chunk[i];
      rest /= z->grid[i];
    }
    rc = tsr__zarr_shard_encode(c->data, v->esize, z->nd, z->chunk, z->inner, inside, encode, &e,
                                &bf->shard);
    if (rc == TSR_ENOMEM)
      rc = tsr__berr_plain(err, rc, LIB, "no memory for a shard of %s (%s)", v->name, bf->path);
    bytes = bf->shard.p, len = bf->shard.len;
  } else {
    rc = encode(&e, c->data, n, &bytes, &len);
  }
  /* The key: the chunk's coordinates, record first, slowest first; the
   * directories above the last one made once (the writer moves along them). */
  int64_t key[TSR_MAX_DIMS + 1], rest = ci;
  int ncoord = (v->is_record ? 1 : 0) + z->nd;
  for (int i = z->nd - 1; i >= 0; i--) {
    key[ncoord - z->nd + i] = rest % z->grid[i];
    rest /= z->grid[i];
  }
  if (v->is_record) key[0] = f->frame;
  char p[ZPATH];
  int w = snprintf(p, sizeof p, "%s/%s/c", bf->path, v->name);
  for (int i = 0; i + 1 < ncoord; i++)
    w += snprintf(p + w, sizeof p - (size_t)w, "/%lld", (long long)key[i]);
  if (!rc && ncoord > 1 && strcmp(p, bf->lastdir) != 0) {
    for (char *s = p + strlen(bf->path) + strlen(v->name) + 3; !rc && (s = strchr(s, '/')); s++) {
      *s = '\0';
      rc = tsr__zarr_make_dir(p, err);
      *s = '/';
    }
    if (!rc && !(rc = tsr__zarr_make_dir(p, err)))
      snprintf(bf->lastdir, sizeof bf->lastdir, "%s", p);
  }
  if (ncoord > 0) snprintf(p + w, sizeof p - (size_t)w, "/%lld", (long long)key[ncoord - 1]);
  if (!rc) rc = tsr__zarr_write_file(p, bytes, len, err);
  bf->pending -= (int64_t)n;
  free(c->data);
  free(c);
  f->c[ci] = NULL;
  f->live--;
  return rc;
}

/* The chunks of @p varid at @p frame, made on the first block of either. */
static zframe *frame_of(tsr__bfile *bf, int varid, int64_t frame) {
  for (int i = 0; i < bf->nfr; i++)
    if (bf->fr[i].varid == varid && bf->fr[i].frame == frame) return &bf->fr[i];
  if (bf->nfr == bf->frcap) {
    int cap = bf->frcap ? 2 * bf->frcap : 16;
    zframe *p = realloc(bf->fr, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    bf->fr = p;
    bf->frcap = cap;
  }
  zframe *f = &bf->fr[bf->nfr];
  f->c = calloc((size_t)bf->z[varid].nchunks, sizeof *f->c);
  if (!f->c) return NULL;
  f->varid = varid;
  f->frame = frame;
  f->live = 0;
  bf->nfr++;
  return f;
}

/* Frames with no chunk in progress are let go (their slot table too). */
static void drop_idle(tsr__bfile *bf) {
  int k = 0;
  for (int i = 0; i < bf->nfr; i++) {
    if (bf->fr[i].live == 0) free(bf->fr[i].c);
    else bf->fr[k++] = bf->fr[i];
  }
  bf->nfr = k;
}

/* Chunk @p ci of @p f, made fill-initialised with the count of its points
 * inside the array (edge chunks hold fewer). */
static zchunk *chunk_of(tsr__bfile *bf, zframe *f, int64_t ci) {
  if (f->c[ci]) return f->c[ci];
  const zvar *z = &bf->z[f->varid];
  size_t es = bf->vars[f->varid].esize;
  zchunk *c = calloc(1, sizeof *c);
  if (!c || !(c->data = malloc((size_t)z->celems * es))) return free(c), NULL;
  for (int64_t i = 0; i < z->celems; i++) memcpy(c->data + i * (int64_t)es, z->fill, es);
  c->need = 1;
  int64_t rest = ci;
  for (int i = z->nd - 1; i >= 0; i--) {
    int64_t g = rest % z->grid[i], left = bf->vars[f->varid].shape[i] - g * z->chunk[i];
    rest /= z->grid[i];
    c->need *= left < z->chunk[i] ? left : z->chunk[i];
  }
  f->c[ci] = c;
  f->live++;
  bf->pending += z->celems * (int64_t)es;
  return c;
}

static int tsr__zarr_write_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                                 const int64_t count[], const void *buf, tsr__memview mem,
                                 tsr__berr *err) {
  const tsr__bvar *v = NULL;
  int rc = tsr__block_check(bf->vars, bf->nvars, varid, frame, start, count, buf, mem, LIB,
                            bf->path, &v, err);
  if (rc) return rc;
  int64_t n = tsr__block_elems(v->nd, count);
  if (n == 0) return 0;
  if (!v->is_record) frame = 0;
  else if (frame + 1 > bf->nrec) bf->nrec = frame + 1;
  const unsigned char *src = tsr__block_contiguous(buf, v->esize, v->nd, count, mem, &bf->scratch,
                                                   &bf->scratch_cap, LIB, v->name, err);
  if (!src) return TSR_ENOMEM; /* the only way it fails; err says which variable */
  const zvar *z = &bf->z[varid];
  zframe *f = frame_of(bf, varid, frame);
  if (!f) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", v->name);
  /* Walk the block by rows of its fastest dimension (a scalar is one row of
   * one), cutting each row where chunks meet. */
  int nd = v->nd > 0 ? v->nd : 1;
  int64_t one = 1, zero = 0;
  const int64_t *cnt = v->nd > 0 ? count : &one, *st = v->nd > 0 ? start : &zero;
  const int64_t *clen = v->nd > 0 ? z->chunk : &one, *grid = v->nd > 0 ? z->grid : &one;
  int64_t idx[TSR_MAX_DIMS] = {0}, rows = n / cnt[nd - 1], q = 0;
  size_t es = v->esize;
  for (int64_t r = 0; r < rows && !rc; r++) {
    int64_t cbase = 0, obase = 0; /* chunk index and offset in it, leading dims */
    for (int i = 0; i < nd - 1; i++) {
      int64_t g = st[i] + idx[i];
      cbase = cbase * grid[i] + g / clen[i];
      obase = obase * clen[i] + g % clen[i];
    }
    for (int64_t x = st[nd - 1], end = x + cnt[nd - 1]; x < end && !rc;) {
      int64_t cx = x / clen[nd - 1], ox = x % clen[nd - 1];
      int64_t seg = clen[nd - 1] - ox < end - x ? clen[nd - 1] - ox : end - x;
      int64_t ci = cbase * grid[nd - 1] + cx;
      zchunk *c = chunk_of(bf, f, ci);
      if (!c) return tsr__berr_plain(err, TSR_ENOMEM, LIB, "no memory for a chunk of %s",
                                     v->name);
      memcpy(c->data + (obase * clen[nd - 1] + ox) * (int64_t)es, src + q * (int64_t)es,
             (size_t)seg * es);
      c->nseen += seg;
      if (c->nseen >= c->need) rc = write_chunk(bf, f, ci, err);
      x += seg;
      q += seg;
    }
    for (int i = nd - 2; i >= 0 && ++idx[i] == cnt[i]; i--) idx[i] = 0;
  }
  if (f->live == 0) drop_idle(bf);
  return rc;
}

static int64_t tsr__zarr_pending_bytes(const tsr__bfile *bf) { return bf->pending; }

/* Every complete chunk is written already; a chunk still in progress waits
 * for its other points (a flush cannot write part of a chunk). */
static int tsr__zarr_flush(tsr__bfile *bf, tsr__berr *err) {
  (void)err;
  drop_idle(bf);
  return 0;
}

/* Rank 0, once every writer is done: each array's document with the agreed
 * record length, then the store that had the final name (if any) moved
 * aside to a trash name, so the rename that follows puts the new one there. */
static int finish_store(tsr__bfile *bf, tsr__berr *err) {
  tsr__schema s;
  tsr__schema_init(&s);
  int rc = tsr__schema_unpack(bf->schema, bf->schema_len, &s);
  if (rc) return tsr__berr_plain(err, rc, LIB, "cannot unpack the schema (%s)", bf->path);
  char p[ZPATH], codec[128] = "";
  if (bf->zstd > 0)
    snprintf(codec, sizeof codec,
             "{\"name\": \"zstd\", \"configuration\": {\"level\": %d, \"checksum\": false}}",
             bf->zstd);
  else if (bf->deflate > 0)
    snprintf(codec, sizeof codec, "{\"name\": \"gzip\", \"configuration\": {\"level\": %d}}",
             bf->deflate);
  /* The attribute annotate gave (the sums of checksum=): one more of the
   * array's attributes, in its document like any other. */
  for (int v = 0; bf->annot && v < s.nvars && !rc; v++)
    if (bf->annot[v] && tsr__schema_put_att(&s, v, bf->annot_name, TSR_CHAR,
                                            strlen(bf->annot[v]), bf->annot[v]))
      rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", bf->path);
  for (int v = 0; v < s.nvars && !rc; v++) {
    int64_t chunk[TSR_MAX_DIMS], inner[TSR_MAX_DIMS];
    int first = s.vars[v].is_record ? 1 : 0;
    chunk[0] = inner[0] = 1;
    for (int i = 0; i < bf->z[v].nd; i++)
      chunk[first + i] = bf->z[v].chunk[i], inner[first + i] = bf->z[v].inner[i];
    tsr__zjson j = {0};
    if (tsr__zarr_array_json(&s, v, bf->nrec, chunk, bf->z[v].sharded ? inner : NULL, codec, &j))
      rc = tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (%s)", bf->path);
    snprintf(p, sizeof p, "%s/%s/zarr.json", bf->path, s.vars[v].name);
    if (!rc) rc = tsr__zarr_write_file(p, j.s, j.len, err);
    tsr__zjson_free(&j);
  }
  tsr__schema_free(&s);
  /* The old store leaves the name in one rename; its files go in the
   * background (zarr_fs.h), off the model's path. */
  if (!rc && bf->final && tsr__zarr_retire(bf->final, bf->final) != 0)
    return tsr__berr_plain(err, tsr__berr_from_errno(errno), LIB, "cannot move the old store "
                           "%s aside: %s", bf->final, strerror(errno));
  return rc;
}

/* checksum=: the texts are known once every block is written, and the
 * documents are written at close, by rank 0: it keeps them for then. Every
 * writer gets the same texts (backend.h), so the others have nothing to do. */
static int tsr__zarr_annotate(tsr__bfile *bf, const char *name, char *const texts[],
                              tsr__berr *err) {
  if (bf->rank != 0 || bf->rd) return 0;
  int rc = 0;
  size_t nv = (size_t)(bf->nvars > 0 ? bf->nvars : 1);
  if (!bf->annot && !(bf->annot = calloc(nv, sizeof *bf->annot))) rc = TSR_ENOMEM;
  free(bf->annot_name);
  if (!rc && !(bf->annot_name = strdup(name))) rc = TSR_ENOMEM;
  for (int v = 0; v < bf->nvars && !rc; v++) {
    free(bf->annot[v]);
    bf->annot[v] = NULL;
    if (texts[v] && !(bf->annot[v] = strdup(texts[v]))) rc = TSR_ENOMEM;
  }
  if (rc) bf->annot_rc = tsr__berr_plain(err, rc, LIB, "out of memory (%s)", bf->path);
  return bf->annot_rc;
}

static int tsr__zarr_close(tsr__bfile *bf, tsr__berr *err) {
  if (!bf) return 0;
  if (bf->rd) { /* open for reading: nothing to write */
    free_file(bf);
    return 0;
  }
  int rc = bf->annot_rc; /* a store without its sums is no store */
  for (int i = 0; i < bf->nfr && !rc; i++)
    for (int64_t c = 0; c < bf->z[bf->fr[i].varid].nchunks && !rc; c++)
      if (bf->fr[i].c[c])
        rc = tsr__berr_plain(err, TSR_EINVAL, LIB, "%s frame %lld: a chunk got %lld of its %lld "
                             "points; every point must be written once (no decomposition "
                             "holes) (path %s)", bf->vars[bf->fr[i].varid].name,
                             (long long)bf->fr[i].frame, (long long)bf->fr[i].c[c]->nseen,
                             (long long)bf->fr[i].c[c]->need, bf->path);
  if (bf->comm != MPI_COMM_NULL &&
      MPI_Allreduce(MPI_IN_PLACE, &bf->nrec, 1, MPI_INT64_T, MPI_MAX, bf->comm) != MPI_SUCCESS)
    rc = rc ? rc : tsr__berr_plain(err, TSR_EMPI, LIB, "writers could not agree on the record "
                                   "count (%s)", bf->path);
  rc = agree(bf, rc, "writing", err);
  if (!rc && bf->rank == 0) rc = finish_store(bf, err);
  rc = agree(bf, rc, "closing", err);
  /* A failed store goes now: the API layer's removal takes files and flat
   * directories only. */
  if (rc && bf->rank == 0) tsr__zarr_rm_tree(bf->path);
  free_file(bf);
  return rc;
}

static void tsr__zarr_abort(tsr__bfile *bf, const char *path) {
  if (!bf) return;
  if (bf->rd) { /* a store open for reading is never removed */
    free_file(bf);
    return;
  }
  /* Removed once every writer has stopped writing into it. */
  if (bf->comm != MPI_COMM_NULL) MPI_Barrier(bf->comm);
  if (bf->rank == 0) tsr__zarr_rm_tree(path ? path : bf->path);
  if (bf->comm != MPI_COMM_NULL) MPI_Barrier(bf->comm);
  free_file(bf);
}

/* ---- reading (zarr_read.c) ---- */

/* Every rank of @p comm reads the documents itself (they are small) and the
 * ranks agree on the result, as a parallel backend's open does. */
static int tsr__zarr_open(MPI_Comm comm, const char *path, const tsr__hints *h,
                          tsr__schema *schema_out, tsr__bfile **out, tsr__berr *err) {
  (void)h;
  *out = NULL;
  tsr__bfile *bf = calloc(1, sizeof *bf);
  int rc = bf ? 0 : tsr__berr_plain(err, TSR_ENOMEM, LIB, "out of memory (path %s)", path);
  if (bf) bf->comm = MPI_COMM_NULL;
  if (!rc) rc = tsr__zarr_read_open(path, schema_out, &bf->rd, err);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size > 1) {
    int all = rc;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = TSR_EMPI;
    if (all && !rc) {
      tsr__berr_plain(err, all, LIB, "another rank could not open %s", path);
      tsr__schema_free(schema_out);
      tsr__schema_init(schema_out);
    }
    rc = all;
  }
  if (rc) {
    free_file(bf);
    return rc;
  }
  *out = bf;
  return 0;
}

static int tsr__zarr_read_block_op(tsr__bfile *bf, int varid, int64_t frame,
                                   const int64_t start[], const int64_t count[], void *buf,
                                   tsr__memview mem, tsr__berr *err) {
  if (!bf->rd) return tsr__berr_plain(err, TSR_EMODE, LIB, "%s is open for writing", bf->path);
  return tsr__zarr_read_block(bf->rd, varid, frame, start, count, buf, mem, err);
}

static int64_t tsr__zarr_num_records(const tsr__bfile *bf) {
  return bf->rd ? tsr__zarr_read_records(bf->rd) : bf->nrec;
}

const tsr__backend_ops tsr__backend_zarr = {
    .version = TSR__BACKEND_VERSION,
    .name = "zarr",
    .parallel = 1, /* one writer or several, each writing whole chunks */
    .whole_levels = 1,
    .create = tsr__zarr_create,
    .write_block = tsr__zarr_write_block,
    .pending_bytes = tsr__zarr_pending_bytes,
    .flush = tsr__zarr_flush,
    .close = tsr__zarr_close,
    .abort = tsr__zarr_abort,
    .file_info = NULL,
    .block_offset = NULL,
    .annotate = tsr__zarr_annotate,
    .open = tsr__zarr_open,
    .read_block = tsr__zarr_read_block_op,
    .num_records = tsr__zarr_num_records,
};
