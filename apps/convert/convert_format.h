/* tessera-convert --to FORMAT (convert_format.c): a NetCDF file or a Zarr
 * store copied into another format with the library's public API. */
#ifndef TESSERA_CONVERT_FORMAT_H
#define TESSERA_CONVERT_FORMAT_H

/* Copy @p input into @p output written with `format=@p format` (and
 * @p hints, may be NULL). Collective over MPI_COMM_WORLD (MPI initialised by
 * the caller). 0, or the first TSR_E* code, with a message on stderr. */
int convert_format(const char *input, const char *output, const char *format,
                   const char *hints);

#endif
