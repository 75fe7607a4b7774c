/* Schema: the dimensions, variables and attributes of a file, built in define
 * mode and handed whole to a backend at tsr_enddef (and shipped to servers). */
#ifndef TSR_CORE_SCHEMA_H
#define TSR_CORE_SCHEMA_H

#include "tessera.h"

typedef struct {
  char name[TSR_MAX_NAME];
  int64_t len; /* TSR_UNLIMITED (0) for the record dimension */
} tsr__dim;

typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  size_t n;     /* number of values */
  void *values; /* n * tsr__type_size(type) bytes, owned */
} tsr__att;

typedef struct {
  char name[TSR_MAX_NAME];
  tsr_type type;
  int ndims; /* record dimension included */
  int dimids[TSR_MAX_DIMS];
  int is_record;  /* first dimension is the record dimension */
  int natts;
  tsr__att *atts;
  const tsr_decomp *decomp; /* default decomposition, may be NULL (not owned) */
  /* tsr_def_var_quantize: 1 when set for this variable (then it wins over the
   * quantize hint); mode TSR_QUANTIZE_*, nsd digits or bits. */
  int quantize_set, quantize_mode, quantize_nsd;
} tsr__var;

struct tsr__name_index;

typedef struct tsr__schema {
  int ndims;
  tsr__dim *dims;
  int nvars;
  tsr__var *vars;
  /* Room in dims and vars (they grow geometrically), and the indexes of
   * their names (core/name_index.h): defining N variables costs O(N). */
  int dim_cap, var_cap;
  struct tsr__name_index *dim_index, *var_index;
  int ngatts;
  tsr__att *gatts;
  int format; /* 2 = CDF-2 (64-bit offset), 5 = CDF-5, 3 = netCDF-4 (4: its classic model, read only) */
} tsr__schema;

size_t tsr__type_size(tsr_type t);
int tsr__type_valid(tsr_type t);
/* 1 when format @p format (NC_FORMAT_* number) has type @p t. */
int tsr__type_in_format(tsr_type t, int format);

void tsr__schema_init(tsr__schema *s);
void tsr__schema_free(tsr__schema *s);
int tsr__schema_add_dim(tsr__schema *s, const char *name, int64_t len, int *dimid);
int tsr__schema_add_var(tsr__schema *s, const char *name, tsr_type type, int ndims,
                        const int dimids[], int *varid);
int tsr__schema_put_att(tsr__schema *s, int varid, const char *name, tsr_type type, size_t n,
                        const void *values);
int tsr__schema_find_var(const tsr__schema *s, const char *name);
/* The attribute @p name among the @p n of @p a, or NULL. */
const tsr__att *tsr__att_find(const tsr__att *a, int n, const char *name);

/* Non-record dimensions of a variable: their count and lengths (slowest first). */
int tsr__var_shape(const tsr__schema *s, int varid, int64_t shape[TSR_MAX_DIMS]);
/* Elements in one frame of the variable (all of a fixed variable). */
int64_t tsr__var_frame_elems(const tsr__schema *s, int varid);
/* The variable's fill value (its _FillValue attribute, else NetCDF's default)
 * written into @p out, which holds tsr__type_size(type) bytes. */
void tsr__var_fill(const tsr__schema *s, int varid, void *out);

/* Serialise to a byte buffer (malloc'd, *len bytes) and back, for servers. */
int tsr__schema_pack(const tsr__schema *s, void **buf, size_t *len);
int tsr__schema_unpack(const void *buf, size_t len, tsr__schema *s);

#endif
