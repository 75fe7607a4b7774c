#!/usr/bin/env bash
# A full tier: a 1 MiB tmpfs mounted as the stage (stage_full) or as the
# destination directory (dest_full), then test_stage's scenario. After
# dest_full, the tmpfs is unmounted and `tessera stage recover` places the
# kept staged file on the (now roomy) directory beneath. Needs root and
# mount(2); exits 77 (skip) without them.
# Usage: stage_mount.sh MPIEXEC "FLAGS" PROGRAM SCENARIO PYTHON PYTHONPATH DIR
set -u
mpiexec=$1 flags=$2 prog=$3 scenario=$4 py=$5 pypath=$6 dir=$7
if [ "$(id -u)" -ne 0 ]; then echo "not root: cannot mount a small tmpfs; skipped"; exit 77; fi
case "$scenario" in
  stage_full) mnt="$dir/small_stage" ;;
  dest_full) mnt="$dir/small_dest" ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
umount "$mnt" 2>/dev/null
rm -rf "$dir" && mkdir -p "$mnt"
if ! mount -t tmpfs -o size=1m tmpfs "$mnt"; then echo "mount failed; skipped"; exit 77; fi
trap 'umount "$mnt" 2>/dev/null' EXIT
# shellcheck disable=SC2086
"$mpiexec" $flags -n 2 "$prog" "$scenario" "$dir"
rc=$?
if [ "$rc" -ne 0 ]; then echo "FAIL: $scenario exited $rc"; exit 1; fi
if [ "$scenario" = dest_full ]; then
  umount "$mnt"
  PYTHONPATH="$pypath" "$py" -m tessera stage recover "$dir/stage_destfull" || { echo "FAIL: recover"; exit 1; }
  cmp "$mnt/destfull.nc" "$dir/destfull_ref.nc" || { echo "FAIL: recovered file differs"; exit 1; }
  if [ -n "$(ls -A "$dir/stage_destfull")" ]; then echo "FAIL: stage not empty after recover"; exit 1; fi
fi
echo "1 passed, 0 failed"
