#!/bin/sh
# usage: restart_roundtrip.sh OUTDIR MPIEXEC_AND_FLAGS... -- BENCH HINTS
# The restart round trip of one strategy (and format, from HINTS), on 3
# processes, with the model's own values (no --check: the state between
# outputs matters):
#   full:    6 steps, history every 2, a restart file every 3, --write-input;
#   resumed: from full's restart file at step 3 (outputs at steps 4 and 6);
#   input:   from full's wrfinput_d01 (every output).
# Every history file (or split piece) of resumed and input must equal
# full's file of the same name byte for byte (cmp): the data, and the bytes
# that are not data (padding, gaps, HDF5's free space), which must be zeros.
# --nocolons keeps ':' out of the names (ROMIO reads 'name:' as a file-system
# prefix). Exit code 3 (strategy or backend not built) passes through: CTest
# skips the test.
. "$(dirname "$0")/split_launcher.sh"
bench=$1
hints=$2
case="--nx 20 --ny 16 --nz 4 --steps 6 --output-every 2 --sweeps 2 --nocolons --quiet --hints $hints"
rm -rf "$out"
mkdir -p "$out"
fail() { echo "restart_roundtrip: $*"; exit 1; }
$launcher -n 3 "$bench" $case --restart-every 3 --write-input --out "$out/full" \
  --json "$out/full.json"
rc=$?
[ "$rc" -eq 3 ] && { echo "restart_roundtrip: not built ($hints)"; exit 3; }
[ "$rc" -eq 0 ] || fail "the full run failed ($rc)"
rst="$out/full/wrfrst_d01_2026-01-01_00_03_00"
[ -f "$rst" ] || fail "no restart file $rst"
[ -f "$out/full/wrfrst_d01_2026-01-01_00_06_00" ] || fail "no restart file at step 6"
[ -f "$out/full/wrfinput_d01" ] || fail "no wrfinput_d01"
grep -q '"restarts": 2,' "$out/full.json" || fail "full.json does not count 2 restart files"
# The Restart row's bytes: two restart files and the input, each the whole
# state (what one history file holds, every file one output here) plus the
# 4-byte BENCH_STEP.
key() { sed -n "s/^  \"$1\": \([0-9]*\),\$/\1/p" "$2"; }
hist=$(key bytes "$out/full.json")
rb=$(key restart_bytes "$out/full.json")
[ "$rb" = $((3 * (hist / 4 + 4))) ] || fail "full.json: restart_bytes $rb, expected 3 x ($hist / 4 + 4)"
$launcher -n 3 "$bench" $case --restart "$rst" --out "$out/resumed" --json "$out/resumed.json" ||
  fail "the resumed run failed"
grep -q '"start_step": 3,' "$out/resumed.json" || fail "resumed.json does not start at step 3"
# The Input row's bytes: the decomposed fields read, less than the whole state.
inb=$(key input_bytes "$out/resumed.json")
[ "${inb:-0}" -gt 0 ] && [ "$inb" -lt $((hist / 4)) ] ||
  fail "resumed.json: input_bytes '$inb', expected 0 < it < $((hist / 4))"
$launcher -n 3 "$bench" $case --input "$out/full/wrfinput_d01" --out "$out/input" ||
  fail "the run from wrfinput_d01 failed"

# The resumed run writes the outputs after step 3 only: steps 4 and 6.
for run in resumed input; do
  n=0
  for f in "$out/$run"/wrfout_d01_*; do
    [ -f "$f" ] || fail "$run wrote no history files"
    b=$(basename "$f")
    [ -f "$out/full/$b" ] || fail "$run wrote $b, which the full run did not"
    cmp -- "$f" "$out/full/$b" || fail "$run/$b differs from full/$b"
    n=$((n + 1))
  done
  echo "restart_roundtrip: $run: $n history files byte-identical to the full run's"
done
nfull=$(ls "$out/full"/wrfout_d01_* | wc -l)
ninput=$(ls "$out/input"/wrfout_d01_* | wc -l)
[ "$nfull" -eq "$ninput" ] || fail "input wrote $ninput history files, full $nfull"
ls "$out/resumed"/wrfout_d01_2026-01-01_00_00_00* >/dev/null 2>&1 &&
  fail "the resumed run wrote output 0 again"
ls "$out/resumed"/wrfout_d01_2026-01-01_00_04_00* >/dev/null 2>&1 ||
  fail "the resumed run lacks the output at step 4"
echo "restart_roundtrip: passed"
