/* Tessera's own hint keys, one line each: the single source of the fields of
 * tsr__hints and their TSR__H_* bits (core/hints.h), the parser's key table
 * (api/hints.c) and the defaults (core/hints_base.c); docs/hints.md has a
 * row per key, which tests/hints/test_hint_docs.c checks.
 *
 *   X(key, BIT, field, ctype, type, arg, mem, dflt)
 *
 *   key    the key as written in a hint string (an identifier)
 *   BIT    TSR__H_<BIT> is the key's bit in tsr__hints.set
 *   field  the member of tsr__hints that holds the value
 *   ctype  its C type: int, int64_t, tsr__hint_name (a registry name),
 *          tsr__hint_path, or a codec's struct (core/hints.h)
 *   type   how the value is parsed (api/hints.c): CHOICE (one of a table of
 *          spellings), INT and SIZE (at least a minimum; sizes take k, m, g),
 *          NAME (a name of a registry), PATH (free text), CODEC (structured,
 *          parsed and printed by a codec of core/hints_values.h)
 *   arg    CHOICE: the choice table; INT, SIZE: the minimum; NAME: the
 *          registry; CODEC: the codec; PATH: 0
 *   mem    1: a size each rank allocates (at most what the process may)
 *   dflt   the default, an initializer of ctype (without a comma)
 *
 * The order is the order tsr__hints_format prints. Adding a key: one line
 * here (a CHOICE key also needs its choice table in hints.c) and a row in
 * docs/hints.md's table of keys. */
#ifndef TSR_CORE_HINT_KEYS_H
#define TSR_CORE_HINT_KEYS_H

/* clang-format off */
#define TSR__HINT_KEYS(X)                                                                              \
  X(strategy,            STRATEGY,           strategy,                tsr__hint_name, NAME,   &strategies,        0, "")     \
  X(backend,             BACKEND,            backend,                 tsr__hint_name, NAME,   &backends,          0, "")     \
  /* format= values are the backend registry's (NC_FORMAT_* numbers; 2 = cdf2). */                     \
  X(format,              FORMAT,             format,                  int,            CHOICE, tsr__format_choices, 0, 2)     \
  X(slab_bytes,          SLAB,               slab_bytes,              int64_t,        SIZE,   1024,               1, (int64_t)64 << 20)  \
  X(buffer_bytes,        BUFFER,             buffer_bytes,            int64_t,        SIZE,   0,                  1, (int64_t)128 << 20) \
  X(aggregators,         AGGREGATORS,        aggregators,             int,            INT,    1,                  0, 0)      \
  X(stride,              STRIDE,             stride,                  int,            INT,    1,                  0, 0)      \
  X(io_groups,           IO_GROUPS,          io_groups,               int,            INT,    1,                  0, 0)      \
  X(io_tasks,            IO_TASKS,           io_tasks,                int,            INT,    1,                  0, 0)      \
  X(server_ranks,        SERVER_RANKS,       server_ranks_first,      int,            CHOICE, ranks_choices,      0, 0)      \
  X(io_placement,        IO_PLACEMENT,       io_placement_nodes,      int,            CHOICE, placement_choices,  0, 0)      \
  X(server_pick,         SERVER_PICK,        server_pick_idle,        int,            CHOICE, pick_choices,       0, 0)      \
  X(hints_strict,        STRICT,             strict,                  int,            CHOICE, bool_choices,       0, 1)      \
  X(writer,              WRITER,             writer,                  int,            INT,    0,                  0, 0)      \
  X(exchange,            EXCHANGE,           exchange_alltoall,       int,            CHOICE, exchange_choices,   0, 0)      \
  X(frames_per_outfile,  FRAMES_PER_OUTFILE, frames_per_outfile,      int,            INT,    1,                  0, 1)      \
  X(clobber,             CLOBBER,            clobber_force,           int,            CHOICE, clobber_choices,    0, 0)      \
  X(safe_mode,           SAFE_MODE,          safe_mode,               int,            CHOICE, bool_choices,       0, 0)      \
  X(put_mode,            PUT_MODE,           put_mode_deferred,       int,            CHOICE, put_mode_choices,   0, 0)      \
  X(deflate,             DEFLATE,            deflate,                 int,            CHOICE, deflate_choices,    0, 0)      \
  X(shuffle,             SHUFFLE,            shuffle,                 int,            CHOICE, bool_choices,       0, 0)      \
  X(quantize,            QUANTIZE,           quantize,                tsr__quantize,  CODEC,  &tsr__hint_quantize, 0, {0})   \
  X(zstd,                ZSTD,               zstd,                    int,            CHOICE, zstd_choices,       0, 0)      \
  X(chunks,              CHUNKS,             chunks,                  tsr__chunks,    CODEC,  &tsr__hint_chunks,  0, {0})    \
  X(shards,              SHARDS,             shards,                  tsr__chunks,    CODEC,  &tsr__hint_shards,  0, {0})    \
  /* grib_bits: 0 (not given) = 16 bits per value. */                                                  \
  X(grib_bits,           GRIB_BITS,          grib_bits,               int,            INT,    1,                  0, 0)      \
  X(grib_packing,        GRIB_PACKING,       grib_packing_ccsds,      int,            CHOICE, packing_choices,    0, 0)      \
  X(transport,           TRANSPORT,          transport,               tsr__hint_name, NAME,   &transports,        0, "")     \
  /* At least 2k: a message must hold an op header and a value (server_transport.h). */                \
  X(server_buffer_bytes, SERVER_BUFFER,      server_buffer_bytes,     int64_t,        SIZE,   TSR__SRV_MIN_BOUND, 1, 0)      \
  X(concentrators,       CONCENTRATORS,      concentrators,           int,            CODEC,  &tsr__hint_concentrators, 0, 0) \
  X(precision,           PRECISION,          precision_float,         int,            CHOICE, precision_choices,  0, 0)      \
  X(null_delay_ms,       NULL_DELAY,         null_delay_ms,           int,            INT,    0,                  0, 0)      \
  X(stage_dir,           STAGE_DIR,          stage_dir,               tsr__hint_path, PATH,   0,                  0, "")     \
  X(stage_min_bytes,     STAGE_MIN,          stage_min_bytes,         int64_t,        SIZE,   0,                  0, 0)      \
  X(stage_drain,         STAGE_DRAIN,        stage_drain_at_finalize, int,            CHOICE, drain_choices,      0, 0)      \
  X(stage_format,        STAGE_FORMAT,       stage_format_log,        int,            CHOICE, stage_format_choices, 0, 0) \
  /* checksum: 0 none, 1 crc32 (backend/sink_checksum.h). */                                           \
  X(checksum,            CHECKSUM,           checksum,                int,            CHOICE, checksum_choices,   0, 0)      \
  /* reduce: time statistics into a derived stream (core/reduce.c, docs/reductions.md). */             \
  X(reduce,              REDUCE,             reduce,                  tsr__reduce,    CODEC,  &tsr__hint_reduce,  0, {0})    \
  X(reduce_prefix,       REDUCE_PREFIX,      reduce_prefix,           tsr__hint_name, CODEC,  &tsr__hint_reduce_prefix, 0, "wrfxtrm")
/* clang-format on */

#endif
