#!/usr/bin/env bash
# The steps of the Slurm tests (tests/slurm/CMakeLists.txt registers them),
# each run against the one-node cluster that scripts/slurm-local.sh started in
# DIR (the `slurm` fixture):
#
#   slurm_test.sh srun DIR WORK NP BENCH HINTS
#       srun --mpi=pmix -n NP tessera-bench --check with HINTS: every value
#       read back, and the run's JSON counts NP ranks (one MPI job, not NP
#       singletons);
#   slurm_test.sh fortran DIR WORK CONSUMER
#       the install test's Fortran consumer, srun -n 2, its line and its file;
#   slurm_test.sh sbatch DIR WORK README BENCH PYTHON SRC
#       the job script that README.md's "On a cluster" shows, taken from the
#       README as written, submitted as the README says (sbatch --wait) with
#       tessera-bench and tessera on PATH; its exit code, its check lines and
#       its table.
#   slurm_test.sh docs - WORK DOC SRC
#       docs/slurm.md's local-cluster block as written, from SRC: it starts
#       and stops a cluster of its own (not DIR's).
#
# Exits 77 (skipped) with the reason when the cluster is not up.
set -uo pipefail
mode=$1 dir=$2 work=$3
shift 3

fail() { echo "FAILED: $*" >&2; exit 1; }
if [ "$mode" != docs ]; then
  if [ ! -f "$dir/env" ]; then
    cat "$dir/skip-reason" 2>/dev/null || echo "no Slurm cluster in $dir (test slurm.up did not run)"
    exit 77
  fi
  . "$dir/env"
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# block MARKER FILE: the ```bash block after the line <!-- tests/slurm: MARKER -->.
block() {
  awk -v m="<!-- tests/slurm: $1 -->" '$0 == m { f = 1; next }
       f == 1 && /^```bash$/ { f = 2; next }
       f == 2 && /^```$/ { exit }
       f == 2 { print }' "$2"
}

# ranks_in JSON: model + io ranks of a tessera-bench --json file.
ranks_in() {
  local m i
  m=$(sed -n 's/.*"model": *\([0-9]*\).*/\1/p' "$1" | head -n 1)
  i=$(sed -n 's/.*"io": *\([0-9]*\).*/\1/p' "$1" | head -n 1)
  echo $((${m:-0} + ${i:-0}))
}

case $mode in
srun)
  np=$1 bench=$2 hints=$3
  timeout 150 srun --mpi=pmix -n "$np" "$bench" --nx 32 --ny 24 --nz 4 --steps 2 --output-every 1 \
    --check --quiet --out "$work/out" --json "$work/run.json" --hints "$hints" >run.log 2>&1
  rc=$?
  cat run.log
  [ $rc = 0 ] || fail "srun --mpi=pmix -n $np tessera-bench --hints $hints exited $rc"
  grep -q "^check: passed" run.log || fail "no 'check: passed'"
  [ "$(ranks_in run.json)" = "$np" ] || fail "the run counts $(ranks_in run.json) ranks, not $np"
  echo "srun --mpi=pmix -n $np, $hints: passed"
  ;;
fortran)
  consumer=$1
  timeout 120 srun --mpi=pmix -n 2 "$consumer" "$work/f.nc" >run.log 2>&1
  rc=$?
  cat run.log
  [ $rc = 0 ] || fail "srun --mpi=pmix -n 2 consumer_fortran exited $rc"
  grep -qx " *consumer_fortran: ok (libtessera [0-9.]*)" run.log || fail "no 'consumer_fortran: ok'"
  ncdump "$work/f.nc" | grep -q "v = 1, 2, 3, 4, 1, 2, 3, 4" || fail "the consumer's file"
  echo "consumer_fortran under srun --mpi=pmix -n 2: passed"
  ;;
sbatch)
  readme=$1 bench=$2 python=$3 src=$4
  block tessera-check.sh "$readme" >tessera-check.sh
  grep -q '^#SBATCH' tessera-check.sh || fail "no job script after the marker in $readme"
  # What an installed Tessera puts on PATH: tessera-bench and tessera.
  mkdir bin
  ln -s "$bench" bin/tessera-bench
  printf '#!/bin/sh\nPYTHONPATH=%s/python exec %s -m tessera "$@"\n' "$src" "$python" >bin/tessera
  chmod +x bin/tessera
  export PATH=$work/bin:$PATH
  timeout 300 sbatch --wait tessera-check.sh >submit.log 2>&1
  rc=$?
  cat submit.log
  job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' submit.log)
  [ -n "$job" ] || fail "sbatch submitted no job"
  log=tessera-check-$job.out
  cat "$log" 2>/dev/null
  [ $rc = 0 ] || fail "sbatch --wait tessera-check.sh: job $job exited $rc"
  n=$(grep -c "^check: passed" "$log")
  [ "$n" = 5 ] || fail "$n of 5 runs passed their check"
  for s in serial direct aggregate split servers; do
    grep -q "^$s " "$log" || fail "no row for $s in the job's table"
    [ "$(ranks_in "tessera-check-$job/$s.json")" = 5 ] || fail "$s did not run on 5 ranks"
  done
  echo "sbatch --wait tessera-check.sh (job $job): passed"
  ;;
docs)
  doc=$1 src=$2
  block "local cluster" "$doc" >block.sh
  grep -q slurm-local.sh block.sh || fail "no local-cluster block in $doc"
  [ -x "$src/build/apps/bench/tessera-bench" ] \
    || { echo "the block runs $src/build/apps/bench/tessera-bench: not built"; exit 77; }
  (cd "$src" && bash -euo pipefail "$work/block.sh") >run.log 2>&1
  rc=$?
  cat run.log
  # The cluster's directory, from up's last line: stopped here if the block
  # failed before its own `down`, and checked gone if it did not.
  d=$(sed -n 's/^slurm-local: .* in \(\/[^ ]*\): .*/\1/p' run.log | tail -n 1)
  if [ -n "$d" ] && [ -e "$d" ]; then
    bash "$src/scripts/slurm-local.sh" down "$d"
    [ $rc = 0 ] && fail "slurm-local.sh down left $d"
  fi
  [ $rc = 77 ] && exit 77
  [ $rc = 0 ] || fail "the block exited $rc"
  grep -qxE "[[:space:]]*pmix" run.log || fail "srun --mpi=list does not offer pmix"
  grep -q "^check: passed" run.log || fail "no 'check: passed'"
  echo "docs/slurm.md's local cluster block: passed"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
