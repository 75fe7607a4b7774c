#!/bin/sh
# usage: stage_dir.sh OUT MPIEXEC_AND_FLAGS... -- BENCH [ARGS...]
# tessera-bench --stage-dir DIR: the bench creates DIR, the run passes --check
# on the final paths (so every staged file reached its place with the right
# values), the library's stage record counts the staged files (they went
# through DIR), DIR is empty afterwards (staged copies and markers removed
# after their verified copy), and the metrics name the stage_dir hint.
. "$(dirname "$0")/split_launcher.sh"
rm -rf "$out"
stage="$out/stage/deeper"
TESSERA_STATS_FILE="$out/stats.jsonl" $launcher "$@" --check --stage-dir "$stage" --out "$out/final" --json "$out/m.json" ||
  { echo "stage_dir: the staged run failed"; exit 1; }
[ -d "$stage" ] || { echo "stage_dir: $stage was not created"; exit 1; }
left=$(ls -A "$stage")
[ -z "$left" ] || { echo "stage_dir: left in the stage: $left"; exit 1; }
n=$(ls "$out/final" | grep -c '^wrfout_d01_')
[ "$n" -gt 0 ] || { echo "stage_dir: no history files at the final paths"; exit 1; }
ls "$out/final" | grep -q 'tessera-tmp' && { echo "stage_dir: a temporary name is left"; exit 1; }
staged=$(sed -n 's/.*"record": "stage", "staged_files": \([0-9]*\).*/\1/p' "$out/stats.jsonl")
[ "$staged" = "$n" ] || { echo "stage_dir: $n files at the final paths, '$staged' staged"; exit 1; }
grep -q "stage_dir=$stage" "$out/m.json" || { echo "stage_dir: the metrics do not name the hint"; exit 1; }
echo "stage_dir: $n files staged, drained and verified"
