# NetCDF (Debian's MPI build) and PnetCDF.
#
# Debian keeps the MPI build of NetCDF's headers in .../netcdf/mpi/include and
# its library as libnetcdf_mpi; its pkg-config file claims /usr/include, where
# the serial headers live. The MPI include path must come first, so we find it
# explicitly instead of trusting pkg-config.
# tsr_find_optional(NAME HEADER LIBRARY PACKAGE): an optional library, as
# TESSERA_USE_<NAME> (AUTO, ON or OFF) asks. Sets <NAME>_INCLUDE_DIR and
# <NAME>_LIBRARY (cache), and TESSERA_HAVE_<NAME> ON when both were found;
# with TESSERA_USE_<NAME>=ON a missing library stops the configuration,
# naming the Debian PACKAGE. The callers say what they found.
function(tsr_find_optional NAME HEADER LIBRARY PACKAGE)
  set(TESSERA_HAVE_${NAME} OFF PARENT_SCOPE)
  if(TESSERA_USE_${NAME} STREQUAL "OFF")
    return()
  endif()
  find_path(${NAME}_INCLUDE_DIR ${HEADER})
  find_library(${NAME}_LIBRARY ${LIBRARY})
  if(${NAME}_INCLUDE_DIR AND ${NAME}_LIBRARY)
    set(TESSERA_HAVE_${NAME} ON PARENT_SCOPE)
  elseif(TESSERA_USE_${NAME} STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_USE_${NAME}=ON but ${LIBRARY} was not found (${PACKAGE})")
  endif()
endfunction()

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
tsr_find_optional(ISAL isa-l/crc.h isal libisal-dev)
if(TESSERA_HAVE_ISAL)
  message(STATUS "CRC-32 for checksum=crc32: ISA-L ${ISAL_LIBRARY}")
else()
  message(STATUS "CRC-32 for checksum=crc32: zlib (no ISA-L: libisal-dev)")
endif()

# json-c (libjson-c-dev): strategy=auto reads the cost model's profile
# (TESSERA_PROFILE, or the shipped default compiled in) for its first
# ranking (src/core/cost_profile_json.c); without it auto ranks with fixed
# constants and says so in its statistics.
set(TESSERA_USE_JSONC AUTO CACHE STRING "json-c for strategy=auto's profile: AUTO, ON or OFF")
tsr_find_optional(JSONC json-c/json.h json-c libjson-c-dev)
if(TESSERA_HAVE_JSONC)
  message(STATUS "strategy=auto's profile reader: json-c ${JSONC_LIBRARY}")
else()
  message(STATUS "strategy=auto's profile reader: none (no json-c: libjson-c-dev); fixed ranking")
endif()

tsr_find_optional(PNETCDF pnetcdf.h pnetcdf libpnetcdf-dev)
if(TESSERA_HAVE_PNETCDF)
  message(STATUS "PnetCDF: ${PNETCDF_LIBRARY}")
elseif(NOT TESSERA_USE_PNETCDF STREQUAL "OFF")
  message(STATUS "PnetCDF: not found, backend 'pnetcdf' will answer TSR_ENOTBUILT")
endif()

find_program(TESSERA_MPIEXEC NAMES mpiexec mpirun REQUIRED)
find_program(TESSERA_NCGEN ncgen)
find_program(TESSERA_NCDUMP ncdump)

# ecCodes (GRIB2 backend): Debian's libeccodes-dev. Without it `format=grib2`
# answers TSR_ENOTBUILT.
tsr_find_optional(ECCODES eccodes.h eccodes libeccodes-dev)
if(TESSERA_HAVE_ECCODES)
  message(STATUS "ecCodes: ${ECCODES_LIBRARY}")
elseif(NOT TESSERA_USE_ECCODES STREQUAL "OFF")
  message(STATUS "ecCodes: not found, backend 'grib2' will answer TSR_ENOTBUILT")
endif()
