#!/bin/sh
# A machine that builds WRF has the serial NetCDF-C and NetCDF-Fortran
# (libnetcdff-dev) in /usr/include and /usr/lib beside the MPI build: Tessera
# must still compile against the MPI build's headers and link libnetcdf_mpi.
#   check_netcdf_mpi.sh CMAKECACHE LIBTESSERA
# Exit 77 (skipped) when the serial headers are not installed.
set -eu
cache=$1 lib=$2
if [ ! -e /usr/include/netcdf.h ] || [ ! -e /usr/include/netcdf.inc ]; then
  echo "skipped: the serial NetCDF-C/NetCDF-Fortran headers (libnetcdff-dev) are not installed"
  exit 77
fi
inc=$(sed -n 's/^NETCDF_MPI_INCLUDE_DIR:[A-Z]*=//p' "$cache")
libnc=$(sed -n 's/^NETCDF_MPI_LIBRARY:[A-Z]*=//p' "$cache")
echo "headers: $inc; library: $libnc"
case $inc in
  */netcdf/mpi/include) ;;
  *) echo "FAILED: Tessera found NetCDF's headers in $inc, not the MPI build's"; exit 1 ;;
esac
case $libnc in
  *netcdf_mpi*) ;;
  *) echo "FAILED: Tessera links $libnc, not libnetcdf_mpi"; exit 1 ;;
esac
if ! ldd "$lib" | grep -q 'libnetcdf_mpi\.so'; then
  echo "FAILED: $lib does not load libnetcdf_mpi"; exit 1
fi
if ldd "$lib" | grep -q 'libnetcdf\.so'; then
  echo "FAILED: $lib loads the serial libnetcdf too"; exit 1
fi
echo "the MPI NetCDF is used although the serial one is installed"
