#!/bin/sh
# A history_interval that is no whole number of time steps (5 minutes of
# 180 s steps) is written as WRF's alarm rings: at the start, then at the
# first step at or after each multiple of the interval, the alarm moving on
# by the interval; each file holds its step's time, and --check reads every
# value back.
# Usage: history_alarm.sh OUTDIR MPIEXEC_AND_FLAGS... -- BENCH NAMELIST
. "$(dirname "$0")/split_launcher.sh"
rm -rf "$out"
# shellcheck disable=SC2086
$launcher -n 2 "$1" --namelist "$2" --out "$out" --check --quiet | grep "^check: passed" || exit 1
got=$(cd "$out" && ls wrfout_d01_* | tr '\n' ' ')
want="wrfout_d01_2026-01-01_00:00:00 wrfout_d01_2026-01-01_00:06:00 wrfout_d01_2026-01-01_00:12:00 wrfout_d01_2026-01-01_00:15:00 wrfout_d01_2026-01-01_00:21:00 wrfout_d01_2026-01-01_00:27:00 wrfout_d01_2026-01-01_00:30:00 "
[ "$got" = "$want" ] || { echo "history_alarm: got $got, want $want"; exit 1; }
echo "history_alarm: history at 0, 6, 12, 15, 21, 27 and 30 minutes, as WRF writes it"
