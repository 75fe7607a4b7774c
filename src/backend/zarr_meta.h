/* Zarr v3 metadata (format=zarr, backend/zarr.c): the zarr.json documents of
 * the store's root group and of each array, written as text by a small JSON
 * writer with a careful string escaper (valid UTF-8 out, whatever bytes a
 * NetCDF char attribute holds). What the documents say follows xarray's
 * convention for Zarr v3: `dimension_names` in each array, the CF attributes
 * (units, calendar, coordinates, ...) as array attributes, _FillValue as
 * xarray encodes it (base64 of a little-endian double for floats). */
#ifndef TSR_BACKEND_ZARR_META_H
#define TSR_BACKEND_ZARR_META_H

#include <stddef.h>
#include <stdint.h>

#include "core/schema.h"

/* A growing text buffer; `oom` sticks once an allocation failed. */
typedef struct {
  char *s;
  size_t len, cap;
  int oom;
} tsr__zjson;

void tsr__zjson_free(tsr__zjson *j);

/* The Zarr v3 data_type of @p t as JSON text (a quoted name, or an object for
 * char: zarr-python's null_terminated_bytes of one byte, which xarray joins
 * into strings as it does NetCDF's char arrays); NULL when Zarr has none. */
const char *tsr__zarr_dtype(tsr_type t);

/* The root group attribute that keeps what Zarr cannot say of a NetCDF
 * file: {"dimensions": [[name, len], ...] (len 0: the record dimension),
 * "unlimited": name or null, "arrays": [names in file order]}. */
#define TSR__ZARR_LAYOUT_ATT "_nc_tessera_layout"

/* The root group's document: its attributes are the file's global ones,
 * then the layout attribute. */
int tsr__zarr_group_json(const tsr__schema *s, tsr__zjson *out);

/* Variable @p v's document. @p nrec: length of the record dimension;
 * @p chunk: chunk lengths of every dimension (record first), the shard's
 * when @p inner is not NULL: then the codec is `sharding_indexed` with inner
 * chunks of @p inner; @p compressor: the JSON object of the codec after
 * `bytes` ("" for none). Returns 0 or TSR_ENOMEM. */
int tsr__zarr_array_json(const tsr__schema *s, int v, int64_t nrec, const int64_t chunk[],
                         const int64_t inner[], const char *compressor, tsr__zjson *out);

#endif
