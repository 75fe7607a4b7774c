#!/bin/sh
# A nest of WRF's em_real namelist (--domain 2): its files are named as WRF
# names d02's (wrfout_d02_<date>), say GRID_ID = 2 and hold the nest's grid
# (e_we 88 x e_sn 79 x e_vert 45 staggered points); nothing of d01 is written.
# Usage: domain_files.sh OUTDIR MPIEXEC_AND_FLAGS... -- BENCH NAMELIST
. "$(dirname "$0")/split_launcher.sh"
rm -rf "$out"
# shellcheck disable=SC2086
$launcher -n 2 "$1" --namelist "$2" --domain 2 --nz 4 --out "$out" --quiet || exit 1
got=$(cd "$out" && ls | tr '\n' ' ')
want="wrfout_d02_2006-12-19_12:00:00 "
[ "$got" = "$want" ] || { echo "domain_files: got $got, want $want"; exit 1; }
hdr=$(ncdump -h "$out/wrfout_d02_2006-12-19_12:00:00") || exit 1
for want in ":GRID_ID = 2 ;" "west_east = 87 ;" "south_north = 78 ;" ":DX = 10000.f ;"; do
  printf '%s\n' "$hdr" | grep -qF -- "$want" || { echo "domain_files: header lacks '$want'"; exit 1; }
done
echo "domain_files: d02's file, GRID_ID 2, the nest's 87 x 78 grid"
