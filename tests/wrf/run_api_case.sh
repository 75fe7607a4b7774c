#!/bin/sh
# One case of the WRF API test: write with the driver under a strategy, join
# split pieces, read back through the package, compare the header with what
# io_form 2 writes for the same calls (ncdump: header and every value).
#   run_api_case.sh DRIVER STRATEGY NP DIR REFERENCE_CDL "MPIEXEC FLAGS" PYTHON
set -eu
driver=$1 strategy=$2 np=$3 dir=$4 ref=$5 mpiexec=$6 python=$7
rm -rf "$dir" && mkdir -p "$dir"
file=$dir/wrfout_d01_2026-11-27_00:00:00
case $strategy in
  servers*) # servers-T: Tessera's servers, a group of T tasks, split off as WRF would
    export TESSERA_HINTS="wrfout*:strategy=servers:io_groups=1:io_tasks=${strategy#servers-}" ;;
  *) export TESSERA_HINTS="wrfout*:strategy=$strategy" ;;
esac
$mpiexec -n "$np" "$driver" write "$file"
if [ "$strategy" = split ]; then
  # the pieces read as one file (as WRF reads an io_form 102 restart), then joined
  $mpiexec -n "$np" "$driver" read "$file"
  "$python" -m tessera join --force "$file" > "$dir/join.log"
  joined=$(sed -n 's/.*-> \(.*\) (.*/\1/p' "$dir/join.log")
  mv "$joined" "$file"
  rm -f "$file".[0-9][0-9][0-9][0-9]
  rmdir "$(dirname "$joined")"
fi
$mpiexec -n "$np" "$driver" read "$file"
# header and values, less the first line (the file's name)
ncdump "$file" | tail -n +2 > "$dir/file.cdl"
tail -n +2 "$ref" | diff -u - "$dir/file.cdl"
echo "file equal to io_form 2's, header and values"
