# NetCDF (Debian's MPI build) and PnetCDF.
#
# Debian keeps the MPI build of NetCDF's headers in .../netcdf/mpi/include and
# its library as libnetcdf_mpi; its pkg-config file claims /usr/include, where
# the serial headers live. The MPI include path must come first, so we find it
# explicitly instead of trusting pkg-config.
find_path(NETCDF_MPI_INCLUDE_DIR netcdf_par.h
  HINTS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/netcdf/mpi/include
        /usr/lib/x86_64-linux-gnu/netcdf/mpi/include
        /usr/lib/aarch64-linux-gnu/netcdf/mpi/include
  NO_DEFAULT_PATH)
if(NOT NETCDF_MPI_INCLUDE_DIR)
  find_path(NETCDF_MPI_INCLUDE_DIR netcdf_par.h)
endif()
find_library(NETCDF_MPI_LIBRARY NAMES netcdf_mpi netcdf)
if(NOT NETCDF_MPI_INCLUDE_DIR OR NOT NETCDF_MPI_LIBRARY)
  message(FATAL_ERROR "NetCDF (MPI build) not found: run scripts/install-deps.sh")
endif()
message(STATUS "NetCDF: ${NETCDF_MPI_LIBRARY} (headers ${NETCDF_MPI_INCLUDE_DIR})")

# zlib (zlib1g-dev, there with NetCDF's own dependencies): the CRC-32 of
# checksum=crc32 (src/backend/sink_checksum.c), whose pieces combine.
find_package(ZLIB REQUIRED)
# ISA-L (libisal-dev): the same CRC-32 five times as fast (src/core/crc32_isal.c);
# without it zlib computes it (crc32_zlib.c), to the same value.
set(TESSERA_USE_ISAL AUTO CACHE STRING "ISA-L for checksum=crc32's CRC: AUTO, ON or OFF")
set(TESSERA_HAVE_ISAL OFF)
if(NOT TESSERA_USE_ISAL STREQUAL "OFF")
  find_path(ISAL_INCLUDE_DIR isa-l/crc.h)
  find_library(ISAL_LIBRARY isal)
  if(ISAL_INCLUDE_DIR AND ISAL_LIBRARY)
    set(TESSERA_HAVE_ISAL ON)
  elseif(TESSERA_USE_ISAL STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_USE_ISAL=ON but ISA-L was not found (libisal-dev)")
  endif()
endif()
if(TESSERA_HAVE_ISAL)
  message(STATUS "CRC-32 for checksum=crc32: ISA-L ${ISAL_LIBRARY}")
else()
  message(STATUS "CRC-32 for checksum=crc32: zlib (no ISA-L: libisal-dev)")
endif()

set(TESSERA_HAVE_PNETCDF OFF)
if(NOT TESSERA_USE_PNETCDF STREQUAL "OFF")
  find_path(PNETCDF_INCLUDE_DIR pnetcdf.h)
  find_library(PNETCDF_LIBRARY pnetcdf)
  if(PNETCDF_INCLUDE_DIR AND PNETCDF_LIBRARY)
    set(TESSERA_HAVE_PNETCDF ON)
    message(STATUS "PnetCDF: ${PNETCDF_LIBRARY}")
  elseif(TESSERA_USE_PNETCDF STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_USE_PNETCDF=ON but PnetCDF was not found")
  else()
    message(STATUS "PnetCDF: not found, backend 'pnetcdf' will answer TSR_ENOTBUILT")
  endif()
endif()

find_program(TESSERA_MPIEXEC NAMES mpiexec mpirun REQUIRED)
find_program(TESSERA_NCGEN ncgen)
find_program(TESSERA_NCDUMP ncdump)

# ecCodes (GRIB2 backend): Debian's libeccodes-dev. Without it `format=grib2`
# answers TSR_ENOTBUILT.
set(TESSERA_HAVE_ECCODES OFF)
if(NOT TESSERA_USE_ECCODES STREQUAL "OFF")
  find_path(ECCODES_INCLUDE_DIR eccodes.h)
  find_library(ECCODES_LIBRARY eccodes)
  if(ECCODES_INCLUDE_DIR AND ECCODES_LIBRARY)
    set(TESSERA_HAVE_ECCODES ON)
    message(STATUS "ecCodes: ${ECCODES_LIBRARY}")
  elseif(TESSERA_USE_ECCODES STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_USE_ECCODES=ON but ecCodes was not found")
  else()
    message(STATUS "ecCodes: not found, backend 'grib2' will answer TSR_ENOTBUILT")
  endif()
endif()
