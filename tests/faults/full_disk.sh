#!/usr/bin/env bash
# A full disk and a read-only file system, for real: a small tmpfs mounted
# for the test (needs root and the right to mount; exit 77 = skipped
# otherwise). Usage: full_disk.sh MPIEXEC "FLAGS" NP PROGRAM SCENARIO
set -u
mpiexec=$1 flags=$2 np=$3 prog=$4 scenario=$5
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
dir=$(mktemp -d /tmp/tessera-fault-XXXXXX)
opts=size=256k
[ "$scenario" = readonly ] && opts=size=256k,ro
if ! mount -t tmpfs -o "$opts" tmpfs "$dir" 2>/dev/null; then
  rmdir "$dir"; echo "cannot mount a tmpfs here: skipped"; exit 77
fi
# shellcheck disable=SC2086
"$mpiexec" $flags -n "$np" "$prog" "$scenario" "$dir"
rc=$?
ls -la "$dir"
umount "$dir" && rmdir "$dir"
exit $rc
