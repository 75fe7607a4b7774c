#!/bin/sh
# Makes wrf_api_io_form2.cdl: the ncdump (header and values) of the file that
# WRF's own NetCDF package (io_form 2, external/io_netcdf of a WRF tree)
# writes for the calls of wrf_api_driver.
# The driver's source is compiled against WRF's package with its ext_tsr_
# calls spelled ext_ncd_, run on one rank (io_form 2 is written by one rank),
# and its ncdump kept. WRF's files are used in a scratch folder
# only; nothing of them enters this repository.
#   tests/wrf/make_ncd_reference.sh WRF_DIR [OUT.cdl]
# Needs Debian's gfortran, Open MPI, libnetcdff-dev and m4.
set -eu
wrf=${1:?usage: make_ncd_reference.sh WRF_DIR [OUT.cdl]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/wrf_api_io_form2.cdl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$wrf"/external/io_netcdf/wrf_io.F90 "$wrf"/external/io_netcdf/field_routines.F90 \
   "$wrf"/external/io_netcdf/*.code "$wrf"/external/ioapi_share/*.h "$tmp"/
cd "$tmp"
for f in wrf_io field_routines; do
  cpp -P -traditional -I. "$f.F90" | m4 -Uinclude -Uindex -Ulen - > "$f.f90"
done
# WRF's message routine, which the package calls; the driver with WRF's prefix
cat > wrf_debug.f90 <<'F90'
subroutine wrf_debug(level, msg)
  integer, intent(in) :: level
  character(len=*), intent(in) :: msg
  if (level <= 0) write(0, '(a)') trim(msg)
end subroutine
F90
sed -e '/ext_tsr_server_split/d' -e 's/ext_tsr_/ext_ncd_/g' "$here/wrf_api_driver.F90" > driver.F90
mpif90 -O0 -ffree-line-length-none -fallow-argument-mismatch -w -I/usr/include \
  wrf_io.f90 field_routines.f90 wrf_debug.f90 "$here/wrf_api_fields.F90" driver.F90 \
  -lnetcdff -lnetcdf -o driver
mpiexec -n 1 ./driver write "$tmp/wrfout_d01_2026-11-27_00:00:00"
ncdump "$tmp/wrfout_d01_2026-11-27_00:00:00" > "$out"
echo "wrote $out"
