#!/bin/sh
# usage: same_output.sh NCDUMP OUTDIR MPIEXEC_AND_FLAGS... -- BENCH [ARGS...]
# Runs the bench (no --check: the model's own values) on 1 process, then on 4
# (2 x 2) and 3 (3 x 1), and requires the data of every history file to be
# identical: halo exchange and staggered tiles must not change the model.
ncdump=$1
out=$2
shift 2
launcher=""
while [ "$1" != "--" ]; do launcher="$launcher $1"; shift; done
shift
rm -rf "$out"
for np in 1 4 3; do
  $launcher -n $np "$@" --out "$out/np$np" --quiet || { echo "run on $np failed"; exit 1; }
done
n=0
for f in "$out"/np1/wrfout_d01_*; do
  b=$(basename "$f")
  "$ncdump" "$f" | sed -n '/^data:/,$p' > "$out/ref.txt"
  for np in 4 3; do
    "$ncdump" "$out/np$np/$b" | sed -n '/^data:/,$p' > "$out/cmp.txt"
    if ! cmp -s "$out/ref.txt" "$out/cmp.txt"; then
      echo "same_output: $b differs between 1 and $np processes:"
      diff "$out/ref.txt" "$out/cmp.txt" | head -20
      exit 1
    fi
  done
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "same_output: no history files"; exit 1; }
echo "same_output: $n files identical on 1, 4 and 3 processes"
