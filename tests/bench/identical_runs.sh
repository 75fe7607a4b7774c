#!/bin/sh
# usage: identical_runs.sh OUTDIR MPIEXEC_AND_FLAGS... -- NP BENCH [ARGS...]
# Runs the bench twice on NP processes with the same arguments and requires
# every file the two runs write to be identical byte for byte (cmp): the
# bytes that are not data (padding, gaps) must be zeros, never whatever
# memory held. Exit code 3 (strategy or backend not built) passes through:
# CTest skips the test.
. "$(dirname "$0")/split_launcher.sh"
np=$1
shift
rm -rf "$out"
for run in first second; do
  $launcher -n "$np" "$@" --out "$out/$run" --quiet
  rc=$?
  [ "$rc" -eq 0 ] || { echo "identical_runs: the $run run failed ($rc)"; [ "$rc" -eq 3 ] && exit 3; exit 1; }
done
[ "$(ls "$out/first")" = "$(ls "$out/second")" ] ||
  { echo "identical_runs: the two runs wrote different files"; exit 1; }
n=0
for f in "$out"/first/*; do
  b=$(basename "$f")
  cmp "$f" "$out/second/$b" || { echo "identical_runs: $b differs between two identical runs"; exit 1; }
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "identical_runs: no files"; exit 1; }
echo "identical_runs: $n files byte-identical"
