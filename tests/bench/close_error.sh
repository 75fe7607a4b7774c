#!/bin/sh
# A write failure that surfaces only at tsr_close or tsr_finalize reaches the
# user with the library's own sentence, not just a code (issue 25): the bench
# writes into a full disk (a 256 KiB tmpfs mounted for the test: needs root
# and the right to mount, exit 77 = skipped otherwise).
# Usage: close_error.sh MPIEXEC "FLAGS" BENCH SCENARIO
#   direct: PnetCDF buffers the puts; the short write shows at tsr_close.
#   staged: the file is written into a stage and drained at tsr_finalize.
#   servers_staged: the same on an I/O server, whose drain ends before it
#     acknowledges FINAL: the server's sentence reaches every model rank.
set -u
mpiexec=$1 flags=$2 bench=$3 scenario=$4
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
dir=$(mktemp -d /tmp/tessera-close-XXXXXX)
stage=$(mktemp -d /tmp/tessera-close-stage-XXXXXX)
if ! mount -t tmpfs -o size=256k tmpfs "$dir" 2>/dev/null; then
  rmdir "$dir" "$stage"; echo "cannot mount a tmpfs here: skipped"; exit 77
fi
case $scenario in
  direct) extra="--hints strategy=direct"
          want="tessera-bench: tsr_close($dir/wrfout_d01_2026-01-01_00:00:00): TSR_ENOSPC: no space left on device, or file size limit exceeded - PnetCDF: " ;;
  staged) extra="--hints strategy=serial:stage_drain=finalize --stage-dir $stage"
          want="tessera-bench: tsr_finalize: TSR_ENOSPC: no space left on device, or file size limit exceeded - " ;;
  servers_staged) extra="--hints strategy=servers:io_tasks=1 --stage-dir $stage"
          want="tessera-bench: tsr_finalize: TSR_ENOSPC: no space left on device, or file size limit exceeded - drain: " ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
# shellcheck disable=SC2086
out=$(TESSERA_HINTS= "$mpiexec" $flags -n 3 "$bench" --nx 64 --ny 64 --nz 10 --steps 1 \
  --output-every 1 --out "$dir" $extra 2>&1)
rc=$?
printf '%s\n' "$out"
umount "$dir" && rmdir "$dir"
trap 'rm -rf "$stage"' EXIT
if [ "$rc" -ne 1 ]; then echo "close_error: exit code $rc, expected 1" >&2; exit 1; fi
if ! printf '%s\n' "$out" | grep -qF -- "$want"; then
  echo "close_error: output lacks: $want" >&2; exit 1
fi
# The sentence names the file that failed.
if ! printf '%s\n' "$out" | grep -F -- "$want" | grep -qF -- "$dir/wrfout_d01_"; then
  echo "close_error: the message does not name the file" >&2; exit 1
fi
# A staged file that could not be drained stays staged, with its marker.
if [ "$scenario" != direct ] && ! ls "$stage" | grep -q tessera-dest; then
  echo "close_error: nothing left in the stage $stage" >&2; exit 1
fi
echo "close_error: exit 1 with the library's sentence"
