#!/usr/bin/env bash
# A job killed (SIGKILL) while the drain copies a staged file, then
# `tessera stage recover`: every file tsr_close returned for is complete at
# its final path (byte-identical to an unstaged twin), nothing half-written
# ever carried a final name, and the stage ends empty.
# With MODE log (stage_format=log): the job dies after closing three logs and
# before converting any; the first is converted by hand (`tessera convert
# MARKER`), recover converts the others.
# Usage: stage_kill.sh MPIEXEC "FLAGS" PROGRAM PYTHON PYTHONPATH DIR [log]
set -u
mpiexec=$1 flags=$2 prog=$3 py=$4 pypath=$5 dir=$6 mode=${7:-}
rm -rf "$dir" && mkdir -p "$dir/stage_kill"
# shellcheck disable=SC2086
"$mpiexec" $flags -n 2 "$prog" "kill${mode:+_$mode}" "$dir"
rc=$?
echo "job exited with $rc"
fail=0
if [ "$rc" -eq 0 ]; then echo "FAIL: the job reported success"; fail=1; fi
ref="$dir/kill_ref.nc"
if [ ! -f "$dir/kill_closed" ]; then echo "FAIL: the job did not record its closed files"; exit 1; fi
mapfile -t closed < "$dir/kill_closed"
echo "closed before the kill: ${#closed[@]} file(s)"
if [ "${#closed[@]}" -ne 3 ]; then echo "FAIL: expected 3 closed files"; fail=1; fi
# Before recovery: whatever carries a final name is complete.
for f in "${closed[@]}"; do
  if [ -e "$f" ] && ! cmp -s "$f" "$ref"; then echo "FAIL: $f is under its final name but incomplete"; fail=1; fi
done
if [ "$mode" = log ]; then
  for m in "$dir"/stage_kill/*.tessera-dest; do
    if [ ! -d "${m%.tessera-dest}" ]; then echo "FAIL: $m has no log directory"; fail=1; fi
  done
  first=$(ls "$dir"/stage_kill/*.tessera-dest | head -n 1)
  # --out: a copy by hand, the log and its marker stay.
  PYTHONPATH="$pypath" "$py" -m tessera convert "${first%.tessera-dest}" --out "$dir/by_hand.nc" \
    || { echo "FAIL: convert --out exited $?"; fail=1; }
  if ! cmp -s "$dir/by_hand.nc" "$ref"; then echo "FAIL: convert --out differs from $ref"; fail=1; fi
  if [ ! -e "$first" ]; then echo "FAIL: convert --out removed $first"; fail=1; fi
  PYTHONPATH="$pypath" "$py" -m tessera convert "$first" || { echo "FAIL: convert exited $?"; fail=1; }
  if [ -e "$first" ] || [ -e "${first%.tessera-dest}" ]; then echo "FAIL: convert left $first"; fail=1; fi
fi
PYTHONPATH="$pypath" "$py" -m tessera stage recover "$dir/stage_kill" || { echo "FAIL: recover exited $?"; fail=1; }
for f in "${closed[@]}"; do
  if ! cmp -s "$f" "$ref"; then echo "FAIL: $f is not complete after recover"; fail=1; fi
  if [ -e "$f.tessera-tmp" ]; then echo "FAIL: $f.tessera-tmp left"; fail=1; fi
done
left=$(ls -A "$dir/stage_kill")
if [ -n "$left" ]; then echo "FAIL: stage not empty: $left"; fail=1; fi
if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; fi
exit "$fail"
