#!/bin/sh
# selftest.sh PROGRAM VERDICT_SH MPIEXEC [FLAGS...]: runs test_tsr_test's
# scenarios on two ranks and checks what tsr_test.h promises: exit codes, the
# same verdict on every rank, the failing expression with both values and the
# rank; then one run over several scenarios in verdict mode, as
# tsr_add_mpi_scenarios runs programs, read back with VERDICT_SH.
prog=$1 verdict=$2
shift 2
fails=0
expect() { # expect SCENARIO CODE [PATTERN...]
  scenario=$1 want=$2
  shift 2
  out=$($MPI -n 2 "$prog" "$scenario" 2>&1)
  code=$?
  if [ "$code" != "$want" ]; then
    echo "FAIL $scenario: exit $code, expected $want"; echo "$out"; fails=$((fails + 1)); return
  fi
  for pat in "$@"; do
    if ! printf '%s\n' "$out" | grep -q -- "$pat"; then
      echo "FAIL $scenario: output lacks '$pat'"; echo "$out"; fails=$((fails + 1)); return
    fi
  done
  echo "ok   $scenario: exit $code"
}
MPI="$*"
[ "$("$prog" list | tr '\n' ' ')" = "pass fail-one-rank skip require many-ranks " ] ||
  { echo "FAIL list"; fails=$((fails + 1)); }
"$prog" no-such-scenario >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL unknown scenario: exit not 2"; fails=$((fails + 1)); }
expect pass 0 "tsr_test pass np2: 12 passed, 0 failed"
expect fail-one-rank 1 "\[rank 1\] fail-one-rank/the last rank: test_tsr_test.c:[0-9]*: last ? 41 : 42 == 42 failed: 41 != 42" \
  "returned TSR_EHINT (-3), expected TSR_OK (0)" "np2: 2 passed, 2 failed"
expect skip 77 "SKIPPED (strategy imaginary is not built into this library)"
expect many-ranks 77 "SKIPPED (needs at least 1000 ranks)"
out=$($MPI -n 2 "$prog" require 2>&1)
code=$?
if [ $code -eq 0 ] || ! printf '%s\n' "$out" | grep -q "required: tsr_test_nranks() < 0; aborting"; then
  echo "FAIL require: exit $code"; echo "$out"; fails=$((fails + 1))
else
  echo "ok   require: exit $code (MPI_Abort)"
fi
# Verdict mode: the run passes, each scenario's verdict is in its file.
dir=$(mktemp -d)
out=$(TSR_TEST_VERDICTS=$dir $MPI -n 2 "$prog" pass,fail-one-rank,skip 2>&1)
code=$?
[ $code -eq 0 ] || { echo "FAIL verdict run: exit $code"; echo "$out"; fails=$((fails + 1)); }
for want in "pass 0 12 passed, 0 failed" "fail-one-rank 1 41 != 42" "skip 77 SKIPPED (strategy imaginary"; do
  set -- $want
  s=$1 c=$2
  shift 2
  got=$(sh "$verdict" "$dir/$s.np2" run 2>&1)
  gc=$?
  if [ $gc -ne "$c" ] || ! printf '%s\n' "$got" | grep -qF -- "$*"; then
    echo "FAIL verdict $s: exit $gc, expected $c with '$*'"; echo "$got"; fails=$((fails + 1))
  else
    echo "ok   verdict $s: exit $gc"
  fi
done
got=$(sh "$verdict" "$dir/require.np2" run 2>&1)
[ $? -eq 1 ] || { echo "FAIL verdict of a scenario that never ran: not 1"; fails=$((fails + 1)); }
rm -rf "$dir"
echo "selftest: $fails failed"
[ $fails -eq 0 ]
