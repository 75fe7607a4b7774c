# Zarr v3 backend (format=zarr, src/backend/zarr*.c): zlib (always there with
# NetCDF) for the gzip codec, and libzstd (Debian's libzstd-dev) for zstd=.
# Without zlib the backend answers TSR_ENOTBUILT; without libzstd it is built
# and zstd= answers TSR_ENOTBUILT (CMake compiles zarr_zstd_off.c instead).
# Sets TESSERA_HAVE_ZARR, TESSERA_HAVE_ZSTD, ZSTD_INCLUDE_DIR, ZSTD_LIBRARY.
set(TESSERA_USE_ZSTD AUTO CACHE STRING "zstd for format=zarr (libzstd): AUTO, ON or OFF")
# zlib itself is required (TesseraDeps: checksum=crc32); the backend is built with it.
set(TESSERA_HAVE_ZARR ${ZLIB_FOUND})
tsr_find_optional(ZSTD zstd.h zstd libzstd-dev) # TesseraDeps
if(TESSERA_HAVE_ZARR)
  message(STATUS "Zarr: zlib ${ZLIB_LIBRARIES}; zstd: ${TESSERA_HAVE_ZSTD} ${ZSTD_LIBRARY}")
else()
  message(STATUS "Zarr: zlib not found, backend 'zarr' will answer TSR_ENOTBUILT")
endif()
