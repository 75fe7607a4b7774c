#!/usr/bin/env bash
# em_b_wave.sh: WRF's em_b_wave ideal case, enlarged, written through WRF's own
# packages and through Tessera (io_form 8), with the files compared value by
# value (netCDF4-python, not Tessera) and WRF's timing lines tabulated.
# Not a CI test: it needs a WRF tree built with the package
# (`tessera wrf install`, docs/wrf.md) and takes minutes.
#
#   wrf/em_b_wave.sh WRF_DIR OUT_DIR [CASE ...]
#
# CASE: nc2 (io_form 2, classic CDF-2), pnc11 (io_form 11, PnetCDF),
# quilt (io_form 2 classic, WRF's quilt servers), tsr-serial, tsr-direct,
# tsr-aggregate, tsr-split (io_form 8, TESSERA_HINTS strategy=...),
# tsr-servers (io_form 8, Tessera's own servers: one rank more),
# quilt-tsr (io_form 8 on WRF's quilt servers), restart (a run restarted
# from a Tessera restart file against the uninterrupted one). Default: all.
# Environment: NP (compute ranks, 2), WE/SN (domain, 201), HOURS (run, 1),
# HIST_MIN (history interval, 20), REPEAT (runs per case, 3), PYTHON (with
# netCDF4 and numpy), TESSERA (the tessera command, for join), MPIEXEC.
set -euo pipefail
WRF=${1:?usage: em_b_wave.sh WRF_DIR OUT_DIR [CASE ...]}
OUT=${2:?usage: em_b_wave.sh WRF_DIR OUT_DIR [CASE ...]}
shift 2
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(nc2 pnc11 quilt tsr-serial tsr-direct tsr-aggregate tsr-split tsr-servers quilt-tsr restart)
NP=${NP:-2}
WE=${WE:-201}
SN=${SN:-201}
HOURS=${HOURS:-1}
HIST_MIN=${HIST_MIN:-20}
REPEAT=${REPEAT:-3}
PYTHON=${PYTHON:-python3}
TESSERA=${TESSERA:-tessera}
MPIEXEC=${MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
HERE=$(cd "$(dirname "$0")" && pwd)
for exe in ideal.exe wrf.exe; do
  [ -x "$WRF/main/$exe" ] || { echo "em_b_wave.sh: $WRF/main/$exe is missing: build em_b_wave first" >&2; exit 2; }
done
mkdir -p "$OUT"

# nl_set FILE GROUP KEY VALUE: replace ' KEY = ...' or add it at the top of &GROUP
nl_set() {
  if grep -q -E "^[[:space:]]*$3[[:space:]]*=" "$1"; then
    sed -i -E "s|^[[:space:]]*$3[[:space:]]*=.*| $3 = $4,|" "$1"
  else
    sed -i -E "/^[[:space:]]*&$2[[:space:]]*$/a\\ $3 = $4," "$1"
  fi
}

# prepare DIR IOFORM NIO: a run folder with the enlarged namelist
prepare() {
  local d=$1 iof=$2 nio=$3 f
  rm -rf "$d"; mkdir -p "$d"
  cp "$WRF/test/em_b_wave/input_jet" "$WRF/test/em_b_wave/namelist.input" "$d"/
  ln -s "$WRF/main/ideal.exe" "$WRF/main/wrf.exe" "$d"/
  f=$d/namelist.input
  nl_set "$f" time_control run_days 0
  nl_set "$f" time_control run_hours "$HOURS"
  nl_set "$f" time_control end_day "01, 01, 01"
  nl_set "$f" time_control end_hour "$HOURS, $HOURS, $HOURS"
  nl_set "$f" time_control history_interval "$HIST_MIN, $HIST_MIN, $HIST_MIN"
  nl_set "$f" time_control io_form_history "$iof"
  nl_set "$f" time_control io_form_restart "$iof"
  nl_set "$f" time_control io_form_input "$iof"
  nl_set "$f" time_control use_netcdf_classic .true.
  # a restart file at half time, compared as the history is
  nl_set "$f" time_control restart_interval $((HOURS * 30))
  nl_set "$f" domains e_we "$WE, $WE, $WE"
  nl_set "$f" domains e_sn "$SN, $SN, $SN"
  nl_set "$f" namelist_quilt nio_tasks_per_group "$nio"
  nl_set "$f" namelist_quilt nio_groups 1
}

# run DIR NIO [HINTS]: ideal.exe on NP ranks, then wrf.exe on NP + NIO ranks, both
# with TESSERA_HINTS=HINTS (ideal.exe with IDEAL_HINTS when set: it never has servers)
run() {
  local d=$1 nio=$2 hints=${3-}
  (cd "$d"
   TESSERA_HINTS="${IDEAL_HINTS-$hints}" $MPIEXEC -np "$NP" ./ideal.exe > ideal.out 2>&1
   mkdir -p rsl.ideal; mv rsl.* rsl.ideal/ 2>/dev/null || true
   grep -q 'SUCCESS COMPLETE IDEAL INIT' rsl.ideal/rsl.out.0000 || { tail -5 rsl.ideal/rsl.error.0000; exit 1; }
   local t0 t1; t0=$(date +%s.%N)
   TESSERA_HINTS="$hints" $MPIEXEC -np $((NP + nio)) ./wrf.exe > wrf.out 2>&1
   t1=$(date +%s.%N)
   grep -q 'SUCCESS COMPLETE WRF' rsl.out.0000 || { tail -20 rsl.error.0000; exit 1; }
   echo "wall_s $(echo "$t1 - $t0" | bc)" > wall.txt)
}

# join split pieces (tessera join) so that readers see one file
join_split() {
  local d=$1 f
  for f in "$d"/wrfout_d01_*.0000 "$d"/wrfinput_d01.0000 "$d"/wrfrst_d01_*.0000; do
    [ -e "$f" ] || continue
    $TESSERA join --force "${f%.0000}" > /dev/null
    mv "$(dirname "$f")-joined/$(basename "${f%.0000}")" "${f%.0000}"
    rm -f "${f%.0000}".[0-9][0-9][0-9][0-9]
  done
  rmdir "$d-joined" 2>/dev/null || true
}

one_case() {
  local c=$1 r=$2 d=$OUT/$1/run$2
  case $c in
    nc2)    prepare "$d" 2 0;  run "$d" 0 ;;
    pnc11)  prepare "$d" 11 0; run "$d" 0 ;;
    quilt)  prepare "$d" 2 1;  run "$d" 1 ;;
    tsr-servers) prepare "$d" 8 0; IDEAL_HINTS="" run "$d" 1 "strategy=servers:io_groups=1:io_tasks=1" ;;
    tsr-*)  prepare "$d" 8 0;  run "$d" 0 "strategy=${c#tsr-}"; join_split "$d" ;;
    quilt-tsr) prepare "$d" 8 1; run "$d" 1 ;;
  esac
}

restart_case() {
  # the uninterrupted run writes a restart file at half time; the restarted
  # run starts from it and must write the same history. History every step
  # (10 minutes), so that every frame of the restarted run has its twin.
  local a=$OUT/restart/full b=$OUT/restart/restarted half=$((HOURS * 30))
  prepare "$a" 8 0
  nl_set "$a/namelist.input" time_control history_interval "10, 10, 10"
  nl_set "$a/namelist.input" time_control restart_interval "$half"
  run "$a" 0
  prepare "$b" 8 0
  cp "$a"/wrfrst_d01_* "$b"/
  nl_set "$b/namelist.input" time_control history_interval "10, 10, 10"
  nl_set "$b/namelist.input" time_control restart .true.
  nl_set "$b/namelist.input" time_control restart_interval "$half"
  nl_set "$b/namelist.input" time_control start_minute "$half, $half, $half"
  nl_set "$b/namelist.input" time_control run_hours 0
  nl_set "$b/namelist.input" time_control run_minutes "$half"
  (cd "$b" && $MPIEXEC -np "$NP" ./wrf.exe > wrf.out 2>&1 && grep -q 'SUCCESS COMPLETE WRF' rsl.out.0000)
  "$PYTHON" "$HERE/compare_wrf_files.py" --restart "$a" "$b" | tee "$OUT/restart/compare.txt"
}

# Repeats outermost, so that the cases interleave and share the machine's
# moods; only the first repeat keeps its files (for the comparison).
for r in $(seq 1 "$REPEAT"); do
  for c in "${CASES[@]}"; do
    [ "$c" = restart ] && continue
    echo "[$(date +%T)] $c run $r"
    one_case "$c" "$r"
    [ "$r" = 1 ] || rm -f "$OUT/$c/run$r"/wrf{input,out,rst}_d01*
  done
done
printf '%s\n' "${CASES[@]}" | grep -q -x restart && { echo "[$(date +%T)] restart"; restart_case; }
"$PYTHON" "$HERE/compare_wrf_files.py" --against nc2 "$OUT" | tee "$OUT/compare.txt"
"$PYTHON" "$HERE/wrf_timing_table.py" "$OUT" | tee "$OUT/timing.md"
