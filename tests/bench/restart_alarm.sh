#!/bin/sh
# A restart_interval that is no whole number of time steps (5 minutes of
# 180 s steps) is written as WRF's alarm rings: at the first step at or
# after each multiple of the interval, the alarm moving on by the interval.
# Usage: restart_alarm.sh OUTDIR MPIEXEC_AND_FLAGS... -- BENCH NAMELIST
. "$(dirname "$0")/split_launcher.sh"
rm -rf "$out"
# shellcheck disable=SC2086
$launcher -n 2 "$1" --namelist "$2" --out "$out" --quiet || exit 1
got=$(cd "$out" && ls wrfrst_d01_* | tr '\n' ' ')
want="wrfrst_d01_2026-01-01_00:06:00 wrfrst_d01_2026-01-01_00:12:00 wrfrst_d01_2026-01-01_00:15:00 wrfrst_d01_2026-01-01_00:21:00 wrfrst_d01_2026-01-01_00:27:00 wrfrst_d01_2026-01-01_00:30:00 "
[ "$got" = "$want" ] || { echo "restart_alarm: got $got, want $want"; exit 1; }
echo "restart_alarm: restart files at 6, 12, 15, 21, 27 and 30 minutes, as WRF writes them"
