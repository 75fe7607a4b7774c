#!/bin/sh
# usage: same_file.sh OUTDIR MPIEXEC_AND_FLAGS... -- NP BENCH [ARGS...] -- [VARIANT ARGS...]
# Runs the bench twice on NP processes (no --check: the model's own values,
# so the stencil and halo exchange run on the variant's memory layout too),
# once plainly and once with the variant's options, and requires every
# history file to be identical byte for byte: header and data.
. "$(dirname "$0")/split_launcher.sh"
np=$1
shift
bench=""
while [ "$1" != "--" ]; do bench="$bench $1"; shift; done
shift
rm -rf "$out"
# Exit code 3 (strategy not built) passes through: CTest skips the test.
$launcher -n "$np" $bench --out "$out/plain" --quiet
rc=$?
[ "$rc" -eq 0 ] || { echo "same_file: plain run failed ($rc)"; [ "$rc" -eq 3 ] && exit 3; exit 1; }
$launcher -n "$np" $bench "$@" --out "$out/variant" --quiet
rc=$?
[ "$rc" -eq 0 ] || { echo "same_file: run with $* failed ($rc)"; [ "$rc" -eq 3 ] && exit 3; exit 1; }
n=0
for f in "$out"/plain/wrfout_d01_*; do
  b=$(basename "$f")
  cmp "$f" "$out/variant/$b" || { echo "same_file: $b differs with $*"; exit 1; }
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "same_file: no history files"; exit 1; }
echo "same_file: $n files byte-identical with and without $*"
