#!/usr/bin/env bash
# A rank killed (SIGKILL) in the middle of the output: the job must end by
# itself (CTest's timeout catches a hang), and no file may carry the final
# name; only a recognisable temporary may be left.
# Usage: killed_rank.sh MPIEXEC "FLAGS" NP PROGRAM STRATEGY DIR
set -u
mpiexec=$1 flags=$2 np=$3 prog=$4 strategy=$5 dir=$6
path="$dir/killed_${strategy}_np${np}.nc"
rm -f "$path" "$path".*
start=$(date +%s)
# shellcheck disable=SC2086
"$mpiexec" $flags -n "$np" "$prog" "killed:$strategy" "$dir" >/dev/null 2>&1
rc=$?
end=$(date +%s)
echo "job exited with $rc after $((end - start)) s"
if [ "$rc" -eq 0 ]; then echo "FAIL: the job reported success"; exit 1; fi
shopt -s nullglob
for f in "$path" "$path".[0-9][0-9][0-9][0-9]; do
  if [ -e "$f" ]; then echo "FAIL: $f carries a final name"; exit 1; fi
done
left=("$path"*)
echo "left behind: ${left[*]:-nothing}"
for f in "${left[@]}"; do
  case "$f" in *.tessera-tmp|*.tessera-lock) ;; *) echo "FAIL: unexpected $f"; exit 1 ;; esac
done
echo "1 passed, 0 failed"
