/* The times of GRIB2 messages (grib2.c): which output time each frame of a
 * file holds, learned from what the model puts, and the section 1 / 4 keys
 * that say it.
 *
 * The backend sees data, not a calendar: the output time of frame F reaches
 * it as WRF's Times string of that frame ("2026-01-01_00:02:00"), or as XTIME
 * (minutes since the simulation start) with the start date in the global
 * attributes SIMULATION_START_DATE or START_DATE. Both are replicated
 * variables (tsr_put_global), which reach one writer only (the serial
 * writer, aggregate's first writer, a server group's root); with several
 * writers the others learn the times at the next flush (tsr__grib_clock_share),
 * which they all call, before they encode the levels they completed. Models
 * put Times before the fields of the frame (WRF's packages and tessera-bench
 * do), so every message of a frame carries that frame's time. */
#ifndef TSR_BACKEND_GRIB2_TIME_H
#define TSR_BACKEND_GRIB2_TIME_H

#include <eccodes.h>
#include <mpi.h>

#include "core/schema.h"

/* How many of the frames a writer learned itself it tells the others at a
 * flush: more than the frames of one put (one). */
#define TSR__GRIB_SHARE 4

typedef struct {
  int has_start;
  int64_t start;         /* simulation start, seconds since 1970-01-01 (proleptic Gregorian) */
  int times_var;         /* varid of Times (char, whole string per frame), or -1 */
  int xtime_var;         /* varid of XTIME (one number per frame), or -1 */
  int64_t nframes;       /* entries of valid/known */
  int64_t *valid;        /* output time of each frame, seconds since 1970 */
  unsigned char *known;  /* 0: unknown; 1: from XTIME; 2: from Times */
  int64_t recent[TSR__GRIB_SHARE][3]; /* (frame, time, rank) this writer learned itself, newest last */
  int nrecent;
  int warned; /* logged once per file: a frame without a time */
  int nwriters;
  int64_t *all; /* several writers: room for every writer's share */
} tsr__grib_clock;

/* From the schema: the start date and which variables carry times; the
 * file has @p nwriters writers. 0 or TSR_ENOMEM (free it either way). */
int tsr__grib_clock_init(tsr__grib_clock *c, const tsr__schema *s, int nwriters);
void tsr__grib_clock_free(tsr__grib_clock *c);
/* 1 when @p varid carries times (the backend must look at its blocks). */
int tsr__grib_clock_wants(const tsr__grib_clock *c, int varid);
/* A contiguous block of @p varid at @p frame (@p n elements from element
 * @p first of the frame): learn the frame's time when it is the whole Times
 * string or the XTIME value. 0 or TSR_ENOMEM. */
int tsr__grib_clock_block(tsr__grib_clock *c, int varid, int64_t frame, tsr_type type,
                          int64_t first, int64_t n, int64_t frame_elems, const void *src);
/* Collective over the writers: everyone learns what anyone learned. 0 or TSR_EMPI. */
int tsr__grib_clock_share(tsr__grib_clock *c, MPI_Comm comm);
/* Set the reference time, the forecast time and its unit of a message of
 * @p frame. Returns 0 or ecCodes' error, *key naming the key it failed on. */
int tsr__grib_clock_set(tsr__grib_clock *c, codes_handle *h, int64_t frame, const char *path,
                        const char **key);

#endif
