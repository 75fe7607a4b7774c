/* strategy=split on tsr_open: the pieces `<path>.NNNN` that strategy=split
 * wrote (split.c), read as the one file they were cut from, by any number of
 * ranks.
 *
 * It has the shape of a read-only backend (backend.h), so the read side of
 * every rank reading its own tile (read_each.c: index maps through the flat
 * plan, replicated reads) works on it unchanged. Opening is collective: piece p's metadata is
 * read by rank p mod P only, rank 0 rebuilds the file's schema from every
 * piece's (as `tessera join` does: global dimensions from
 * tessera_global_shape, the variable order merged over pieces that lack
 * variables with empty tiles, the split attributes dropped) and broadcasts
 * it, and every rank learns every piece's tile of every variable (a table
 * reduced over the ranks). A read of a block then opens, on that rank, only
 * the pieces whose tiles meet the block, once each, through the backend the
 * pieces are written in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategy/read_common.h"

struct tsr__bfile {
  const tsr__backend_ops *inner; /* the pieces' backend */
  const tsr__hints *hints;
  char *base;
  int n, nvars;
  tsr__schema *global;  /* the schema handed to the caller (theirs; for types and shapes) */
  tsr__bfile **pieces;  /* n: open on this rank, or NULL */
  tsr__schema *pschema; /* n: the open pieces' schemas */
  int64_t *row;         /* nvars + 1 offsets into tab */
  int64_t *tab;         /* per variable, per piece: varid + 1 (0: absent), start, count */
  void *tmp;
  int64_t tmp_cap;
  int64_t nrecs;
};

static void piece_path(const char *base, int p, char *out, size_t n) {
  snprintf(out, n, "%s.%04d", base, p);
}

static int int_att(const tsr__schema *s, const char *name, int *out) {
  const tsr__att *a = tsr__att_find(s->gatts, s->ngatts, name);
  if (!a || a->type != TSR_INT || a->n != 1) return TSR_EFORMAT;
  *out = *(const int32_t *)a->values;
  return 0;
}

static int open_piece(tsr__bfile *bf, int p, tsr__berr *err) {
  if (bf->pieces[p]) return 0;
  char path[4200];
  piece_path(bf->base, p, path, sizeof path);
  tsr__schema_init(&bf->pschema[p]);
  int rc = bf->inner->open(MPI_COMM_SELF, path, bf->hints, &bf->pschema[p], &bf->pieces[p], err);
  int r = -1, n = -1;
  if (!rc && (int_att(&bf->pschema[p], "tessera_split_rank", &r) ||
              int_att(&bf->pschema[p], "tessera_split_nranks", &n) || r != p ||
              (bf->n > 0 && n != bf->n))) {
    snprintf(err->message, sizeof err->message,
             "'%.120s' is not piece %d of %d of a strategy=split file (tessera_split_rank %d, "
             "tessera_split_nranks %d)",
             path, p, bf->n, r, n);
    rc = TSR_EFORMAT;
  }
  if (rc && !strstr(err->message, path)) { /* name the piece, keep the backend's words */
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    snprintf(err->message, sizeof err->message, "strategy=split: piece '%.120s': %.100s", path,
             why[0] ? why : "cannot open");
  }
  return rc;
}

/* The file's name of a piece dimension: split.c names a second extent of
 * dimension D `D_t1`, a third `D_t2`, always next to D itself. */
static const char *global_dim(const tsr__schema *ps, int d, char base[TSR_MAX_NAME]) {
  const char *name = ps->dims[d].name, *t = strrchr(name, '_');
  if (!t || t[1] != 't' || !t[2] || strspn(t + 2, "0123456789") != strlen(t + 2)) return name;
  snprintf(base, TSR_MAX_NAME, "%.*s", (int)(t - name), name);
  for (int i = 0; i < ps->ndims; i++)
    if (strcmp(ps->dims[i].name, base) == 0) return base;
  return name;
}

/* Names in the order of the file: each piece's names merged in, an unseen
 * name right after its predecessor in that piece. */
typedef struct {
  char (*names)[TSR_MAX_NAME];
  int n, cap;
} order;

static int order_find(const order *o, const char *name) {
  for (int i = 0; i < o->n; i++)
    if (strcmp(o->names[i], name) == 0) return i;
  return -1;
}

static int order_merge(order *o, const char *name, int *at) {
  int i = order_find(o, name);
  if (i >= 0) {
    *at = i + 1;
    return 0;
  }
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 32;
    void *p = realloc(o->names, (size_t)cap * sizeof *o->names);
    if (!p) return TSR_ENOMEM;
    o->names = p;
    o->cap = cap;
  }
  memmove(o->names + *at + 1, o->names + *at, (size_t)(o->n - *at) * sizeof *o->names);
  snprintf(o->names[*at], TSR_MAX_NAME, "%s", name);
  o->n++;
  (*at)++;
  return 0;
}

static int copy_atts(tsr__schema *g, int v, const tsr__att *a, int n, const char *skip1,
                     const char *skip2) {
  int rc = 0;
  for (int i = 0; i < n && !rc; i++)
    if (strcmp(a[i].name, skip1) != 0 && strcmp(a[i].name, skip2) != 0)
      rc = tsr__schema_put_att(g, v, a[i].name, a[i].type, a[i].n, a[i].values);
  return rc;
}

/* The file's schema from every piece's (rank 0). */
static int merge_schemas(const tsr__schema *ps, int n, tsr__schema *g) {
  order dims = {0}, vars = {0};
  char nb[TSR_MAX_NAME]; /* a folded twin's name */
  int rc = 0;
  for (int p = 0; p < n && !rc; p++) {
    int at = 0, at2 = 0;
    for (int d = 0; d < ps[p].ndims && !rc; d++) rc = order_merge(&dims, global_dim(&ps[p], d, nb), &at);
    for (int v = 0; v < ps[p].nvars && !rc; v++) rc = order_merge(&vars, ps[p].vars[v].name, &at2);
  }
  /* Lengths: the global shape of a decomposed user, else the piece's own
   * (dimensions no tile cuts keep their length in every piece). */
  int64_t *len = calloc((size_t)dims.n + 1, sizeof *len);
  if (!len) rc = TSR_ENOMEM;
  for (int p = 0; p < n && !rc; p++)
    for (int d = 0; d < ps[p].ndims; d++) {
      int i = order_find(&dims, global_dim(&ps[p], d, nb));
      if (len[i] == 0 || ps[p].dims[d].len == TSR_UNLIMITED) len[i] = ps[p].dims[d].len;
    }
  for (int p = 0; p < n && !rc; p++)
    for (int v = 0; v < ps[p].nvars; v++) {
      const tsr__var *pv = &ps[p].vars[v];
      const tsr__att *gs = tsr__att_find(pv->atts, pv->natts, "tessera_global_shape");
      int rec = pv->is_record ? 1 : 0;
      for (int i = 0; gs && gs->type == TSR_INT && i < (int)gs->n && rec + i < pv->ndims; i++)
        len[order_find(&dims, global_dim(&ps[p], pv->dimids[rec + i], nb))] =
            ((const int32_t *)gs->values)[i];
    }
  g->format = ps[0].format;
  for (int i = 0; i < dims.n && !rc; i++) {
    int id;
    rc = tsr__schema_add_dim(g, dims.names[i], len[i], &id);
  }
  for (int i = 0; i < vars.n && !rc; i++) {
    int p = 0, v = -1;
    for (; p < n && v < 0; p++) v = tsr__schema_find_var(&ps[p], vars.names[i]);
    const tsr__var *pv = &ps[p - 1].vars[v];
    int dimids[TSR_MAX_DIMS], id;
    for (int k = 0; k < pv->ndims; k++)
      dimids[k] = order_find(&dims, global_dim(&ps[p - 1], pv->dimids[k], nb));
    rc = tsr__schema_add_var(g, pv->name, pv->type, pv->ndims, dimids, &id);
    if (!rc)
      rc = copy_atts(g, id, pv->atts, pv->natts, "tessera_global_shape", "tessera_tile_start");
  }
  if (!rc)
    rc = copy_atts(g, TSR_GLOBAL, ps[0].gatts, ps[0].ngatts, "tessera_split_rank",
                   "tessera_split_nranks");
  free(len);
  free(dims.names);
  free(vars.names);
  return rc;
}

/* Rank 0 gathers the packed schemas of the pieces (each rank's, in piece
 * order), merges them into @p out and shares the result
 * (tsr__readers_share_schema). */
static int share_schema(MPI_Comm comm, tsr__bfile *bf, int rc, tsr__schema *out) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  /* Mine: [len][bytes] per piece p = me, me + P, ... */
  char *mine = NULL;
  int64_t mlen = 0;
  for (int p = me; p < bf->n && !rc; p += P) {
    void *b = NULL;
    size_t l = 0;
    rc = tsr__schema_pack(&bf->pschema[p], &b, &l);
    char *m = rc ? NULL : realloc(mine, (size_t)(mlen + 8 + (int64_t)l));
    if (!m) rc = rc ? rc : TSR_ENOMEM;
    if (!rc) {
      mine = m;
      int64_t l64 = (int64_t)l;
      memcpy(mine + mlen, &l64, 8);
      memcpy(mine + mlen + 8, b, l);
      mlen += 8 + (int64_t)l;
    }
    free(b);
  }
  rc = tsr__agree(comm, rc);
  int cnt = (int)mlen, *cnts = NULL, *displs = NULL;
  char *all = NULL;
  int64_t total = 0;
  if (!rc && me == 0) {
    cnts = calloc((size_t)P, sizeof *cnts);
    displs = calloc((size_t)P, sizeof *displs);
    if (!cnts || !displs) rc = TSR_ENOMEM;
  }
  if (!rc && MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, comm) != MPI_SUCCESS) rc = TSR_EMPI;
  for (int r = 0; !rc && me == 0 && r < P; r++) displs[r] = (int)total, total += cnts[r];
  if (!rc && me == 0 && !(all = malloc((size_t)total + 1))) rc = TSR_ENOMEM;
  rc = tsr__agree(comm, rc);
  if (!rc && MPI_Gatherv(mine, cnt, MPI_BYTE, all, cnts, displs, MPI_BYTE, 0, comm) != MPI_SUCCESS)
    rc = TSR_EMPI;
  if (!rc && me == 0) { /* piece p is the (p / P)-th of rank p % P */
    tsr__schema *ps = calloc((size_t)bf->n, sizeof *ps);
    int64_t *at = calloc((size_t)P, sizeof *at);
    if (!ps || !at) rc = TSR_ENOMEM;
    for (int p = 0; p < bf->n && !rc; p++) {
      int r = p % P;
      int64_t l;
      memcpy(&l, all + displs[r] + at[r], 8);
      tsr__schema_init(&ps[p]);
      rc = tsr__schema_unpack(all + displs[r] + at[r] + 8, (size_t)l, &ps[p]);
      at[r] += 8 + l;
    }
    if (!rc) rc = merge_schemas(ps, bf->n, out);
    for (int p = 0; ps && p < bf->n; p++) tsr__schema_free(&ps[p]);
    free(ps);
    free(at);
  }
  free(mine);
  free(all);
  free(cnts);
  free(displs);
  return tsr__readers_share_schema(out, me == 0 ? rc : 0, 0, comm, NULL);
}

/* Every piece's tile of every variable: this rank fills the rows of its
 * pieces, a sum over the ranks completes the table. */
static int share_tiles(MPI_Comm comm, tsr__bfile *bf, const tsr__schema *g) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  bf->nvars = g->nvars;
  bf->row = malloc((size_t)(g->nvars + 1) * sizeof *bf->row);
  if (!bf->row) return TSR_ENOMEM;
  bf->row[0] = 0;
  for (int v = 0; v < g->nvars; v++) {
    int64_t shape[TSR_MAX_DIMS];
    int nd = tsr__var_shape(g, v, shape);
    bf->row[v + 1] = bf->row[v] + (int64_t)bf->n * (1 + 2 * nd);
  }
  bf->tab = calloc((size_t)bf->row[g->nvars] + 1, sizeof *bf->tab);
  if (!bf->tab) return TSR_ENOMEM;
  for (int p = me; p < bf->n; p += P) {
    const tsr__schema *ps = &bf->pschema[p];
    for (int v = 0; v < g->nvars; v++) {
      int64_t shape[TSR_MAX_DIMS];
      int nd = tsr__var_shape(g, v, shape), pv = tsr__schema_find_var(ps, g->vars[v].name);
      int64_t *e = bf->tab + bf->row[v] + (int64_t)p * (1 + 2 * nd);
      if (pv < 0) continue; /* an empty tile on that rank */
      const tsr__var *var = &ps->vars[pv];
      const tsr__att *ts = tsr__att_find(var->atts, var->natts, "tessera_tile_start");
      e[0] = ts ? pv + 1 : -(pv + 1); /* negative: replicated */
      for (int i = 0; i < nd; i++) { /* a replicated variable is whole in every piece */
        e[1 + i] = ts && i < (int)ts->n ? ((const int32_t *)ts->values)[i] : 0;
        e[1 + nd + i] = ts ? ps->dims[var->dimids[var->ndims - nd + i]].len : shape[i];
      }
    }
  }
  if (MPI_Allreduce(MPI_IN_PLACE, bf->tab, (int)bf->row[g->nvars], MPI_INT64_T, MPI_SUM, comm) !=
      MPI_SUCCESS)
    return TSR_EMPI;
  return 0;
}

static int sp_close(tsr__bfile *bf, tsr__berr *err) {
  (void)err;
  int rc = 0;
  for (int p = 0; bf->pieces && p < (bf->n > 0 ? bf->n : 1); p++) { /* piece 0 before n is known */
    if (!bf->pieces[p]) continue;
    tsr__berr e = {0};
    int r = bf->inner->close(bf->pieces[p], &e);
    if (!rc) rc = r;
    tsr__schema_free(&bf->pschema[p]);
  }
  free(bf->pieces);
  free(bf->pschema);
  free(bf->row);
  free(bf->tab);
  free(bf->tmp);
  free(bf->base);
  free(bf);
  return rc;
}

/* The pieces' backend: the hints' (when it reads), else the reading default
 * for piece 0's format. */
static int inner_backend(const char *p0, const tsr__hints *h, const tsr__backend_ops **out,
                         tsr__berr *err) {
  const char *name = h->backend[0] ? h->backend : tsr__backend_default_read(p0);
  int rc = name ? tsr__backend_find(name, out) : TSR_ENOTBUILT;
  if (!rc && (!(*out)->open || !(*out)->read_block)) rc = TSR_ENOTBUILT;
  if (rc)
    snprintf(err->message, sizeof err->message, "strategy=split: backend '%s' cannot read the pieces",
             name ? name : "(none)");
  return rc;
}

static int sp_open(MPI_Comm comm, const char *path, const tsr__hints *h, tsr__schema *schema_out,
                   tsr__bfile **out, tsr__berr *err) {
  *out = NULL;
  int me, P, rc = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  tsr__bfile *bf = calloc(1, sizeof *bf);
  if (bf) bf->base = strdup(path);
  if (!bf || !bf->base) rc = TSR_ENOMEM;
  char p0[4200];
  piece_path(path, 0, p0, sizeof p0);
  if (!rc) rc = inner_backend(p0, h, &bf->inner, err);
  if (!rc) bf->hints = h;
  /* Rank 0 finds the number of pieces in piece 0. */
  int n = 0;
  if (!rc) bf->pieces = calloc(1, sizeof *bf->pieces), bf->pschema = calloc(1, sizeof *bf->pschema);
  if (!rc && (!bf->pieces || !bf->pschema)) rc = TSR_ENOMEM;
  if (!rc && me == 0) rc = open_piece(bf, 0, err);
  if (!rc && me == 0 && int_att(&bf->pschema[0], "tessera_split_nranks", &n) == 0 && n < 1)
    rc = TSR_EFORMAT;
  int head[2] = {rc, n}, agreed;
  MPI_Bcast(head, 2, MPI_INT, 0, comm);
  agreed = tsr__agree(comm, rc ? rc : head[0]);
  if (!agreed) { /* every rank opens its share of the pieces */
    bf->n = head[1];
    tsr__bfile *b0 = bf->pieces[0];
    tsr__schema s0 = bf->pschema[0];
    free(bf->pieces);
    free(bf->pschema);
    bf->pieces = calloc((size_t)bf->n, sizeof *bf->pieces);
    bf->pschema = calloc((size_t)bf->n, sizeof *bf->pschema);
    if (!bf->pieces || !bf->pschema) rc = TSR_ENOMEM;
    else bf->pieces[0] = b0, bf->pschema[0] = s0;
    for (int p = me; p < bf->n && !rc; p += P) rc = open_piece(bf, p, err);
    agreed = tsr__agree(comm, rc);
    tsr__share_message(comm, rc, agreed, err->message, sizeof err->message);
  } else {
    tsr__share_message(comm, rc ? rc : head[0], agreed, err->message, sizeof err->message);
  }
  if (!agreed) agreed = share_schema(comm, bf, 0, schema_out);
  if (!agreed) agreed = tsr__agree(comm, share_tiles(comm, bf, schema_out));
  if (!agreed) {
    int64_t nr = 0;
    for (int p = me; p < bf->n; p += P) {
      int64_t r = bf->inner->num_records ? bf->inner->num_records(bf->pieces[p]) : 0;
      if (r > nr) nr = r;
    }
    MPI_Allreduce(&nr, &bf->nrecs, 1, MPI_INT64_T, MPI_MAX, comm);
  }
  if (agreed) {
    if (bf && bf->pieces) sp_close(bf, NULL);
    else if (bf) free(bf->base), free(bf);
    return agreed;
  }
  bf->global = schema_out;
  *out = bf;
  return 0;
}

/* A block of the file: the part of each piece's tile inside it, read from
 * that piece (opened here on first use) and copied into place. */
static int sp_read_block(tsr__bfile *bf, int varid, int64_t frame, const int64_t start[],
                         const int64_t count[], void *buf, tsr__memview mem, tsr__berr *err) {
  int64_t shape[TSR_MAX_DIMS], origin[TSR_MAX_DIMS], mshape[TSR_MAX_DIMS];
  int nd = tsr__var_shape(bf->global, varid, shape);
  size_t es = tsr__type_size(bf->global->vars[varid].type);
  tsr__box want;
  for (int i = 0; i < nd; i++) {
    want.start[i] = start[i];
    want.count[i] = count[i];
    origin[i] = mem.mshape ? start[i] - mem.moffset[i] : start[i];
    mshape[i] = mem.mshape ? mem.mshape[i] : count[i];
  }
  if (tsr__box_elems(nd, &want) == 0) return 0;
  /* A replicated variable is whole in every piece that has it: one serves,
   * one already open here if there is one. */
  int one = -1;
  for (int p = 0; p < bf->n; p++) {
    int64_t e0 = bf->tab[bf->row[varid] + (int64_t)p * (1 + 2 * nd)];
    if (e0 < 0 && (one < 0 || (bf->pieces[p] && !bf->pieces[one]))) one = p;
  }
  /* Points no piece holds (nobody owned them) read as the fill value, as
   * in a file written whole. */
  int64_t covered = 0;
  for (int p = 0; one < 0 && p < bf->n; p++) {
    const int64_t *e = bf->tab + bf->row[varid] + (int64_t)p * (1 + 2 * nd);
    tsr__box tile, x;
    for (int i = 0; i < nd; i++) tile.start[i] = e[1 + i], tile.count[i] = e[1 + nd + i];
    if (e[0] && tsr__box_intersect(nd, &tile, &want, &x)) covered += tsr__box_elems(nd, &x);
  }
  if (one < 0 && covered < tsr__box_elems(nd, &want)) {
    char fill[8];
    tsr__var_fill(bf->global, varid, fill);
    int rc = tsr__grow(&bf->tmp, &bf->tmp_cap, tsr__box_elems(nd, &want) * (int64_t)es);
    if (rc) return rc;
    tsr__fill_elems(bf->tmp, fill, es, tsr__box_elems(nd, &want));
    tsr__copy_box(nd, &want, es, bf->tmp, want.start, want.count, buf, origin, mshape);
  }
  for (int p = one < 0 ? 0 : one; p < (one < 0 ? bf->n : one + 1); p++) {
    const int64_t *e = bf->tab + bf->row[varid] + (int64_t)p * (1 + 2 * nd);
    if (e[0] == 0) continue;
    tsr__box tile, x;
    for (int i = 0; i < nd; i++) tile.start[i] = e[1 + i], tile.count[i] = e[1 + nd + i];
    if (nd > 0 && !tsr__box_intersect(nd, &tile, &want, &x)) continue;
    if (nd == 0) x = want;
    int rc = open_piece(bf, p, err);
    int64_t need = tsr__box_elems(nd, &x) * (int64_t)es;
    if (!rc && need > bf->tmp_cap) rc = tsr__grow(&bf->tmp, &bf->tmp_cap, need);
    int64_t pstart[TSR_MAX_DIMS];
    for (int i = 0; i < nd; i++) pstart[i] = x.start[i] - tile.start[i];
    if (!rc)
      rc = bf->inner->read_block(bf->pieces[p], (int)(e[0] < 0 ? -e[0] : e[0]) - 1, frame,
                                 pstart, x.count, bf->tmp, (tsr__memview){0}, err);
    if (rc) return rc;
    tsr__copy_box(nd, &x, es, bf->tmp, x.start, x.count, buf, origin, mshape);
  }
  return 0;
}

static int64_t sp_num_records(const tsr__bfile *bf) { return bf->nrecs; }

/* Parallel in the backend sense: opened collectively by every reading rank
 * (the metadata is shared out); the reads themselves are independent. */
static const tsr__backend_ops pieces = {
    .version = TSR__BACKEND_VERSION,
    .name = "split",
    .parallel = 1,
    .close = sp_close,
    .open = sp_open,
    .read_block = sp_read_block,
    .num_records = sp_num_records,
};

/* Split's read side: every rank reads its own tile, from the pieces. */
const tsr__read_ops tsr__split_read = {
    .backend = &pieces,
    .setup = tsr__read_each_setup,
    .opened = tsr__read_each_opened,
    .get = tsr__read_each_get,
};
