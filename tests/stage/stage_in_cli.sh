#!/usr/bin/env bash
# `tessera stage in` before a job, then the job's tsr_open with stage_dir:
# the CLI's copy holds the source's exact bytes, and the library reads that
# very copy (same inode, one entry in the stage) instead of copying again; a
# second `stage in` keeps it too.
# Usage: stage_in_cli.sh MPIEXEC "FLAGS" PROGRAM PYTHON PYTHONPATH DIR
set -u
mpiexec=$1 flags=$2 prog=$3 py=$4 pypath=$5 dir=$6
rm -rf "$dir" && mkdir -p "$dir"
fail=0
# shellcheck disable=SC2086
"$mpiexec" $flags -n 2 "$prog" prestage_write "$dir" || { echo "FAIL: writing the input"; exit 1; }
src="$dir/prestaged.nc"
PYTHONPATH="$pypath" "$py" -m tessera stage in "$src" --to "$dir/prestage" \
  || { echo "FAIL: stage in exited $?"; exit 1; }
mapfile -t copies < <(ls -A "$dir/prestage")
if [ "${#copies[@]}" -ne 1 ]; then echo "FAIL: the stage holds ${copies[*]}"; exit 1; fi
copy="$dir/prestage/${copies[0]}"
case "${copies[0]}" in prestaged.nc.????????????????.in) ;;
  *) echo "FAIL: copy named ${copies[0]}, not <base>.<16 hex digits>.in"; fail=1 ;; esac
cmp "$src" "$copy" || { echo "FAIL: the copy differs from the source"; fail=1; }
ino=$(stat -c %i "$copy")
# shellcheck disable=SC2086
"$mpiexec" $flags -n 2 "$prog" prestage_read "$dir" || { echo "FAIL: the job's read"; fail=1; }
if [ "$(stat -c %i "$copy")" != "$ino" ]; then echo "FAIL: tsr_open copied again"; fail=1; fi
out=$(PYTHONPATH="$pypath" "$py" -m tessera stage in "$src" --to "$dir/prestage") \
  || { echo "FAIL: second stage in exited $?"; fail=1; }
echo "$out"
case "$out" in *"up to date"*) ;; *) echo "FAIL: second stage in did not keep the copy"; fail=1 ;; esac
if [ "$(stat -c %i "$copy")" != "$ino" ]; then echo "FAIL: second stage in copied again"; fail=1; fi
cmp "$src" "$copy" || fail=1
if [ "$fail" -eq 0 ]; then echo "1 passed, 0 failed"; fi
exit "$fail"
