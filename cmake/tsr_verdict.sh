#!/bin/sh
# tsr_verdict.sh VERDICT_FILE RUN_TEST: the CTest of one (scenario, rank
# count) under tsr_add_mpi_scenarios. Prints the failure lines every rank
# wrote (VERDICT_FILE.rank<R>) and the closing line, and exits with the
# scenario's code (0, 1, or 77 = skipped). No verdict: RUN_TEST, the run of
# the program at that rank count, ended before the scenario did.
f=$1
for r in "$f".rank*; do
  [ -f "$r" ] && cat "$r"
done
if [ ! -f "$f" ]; then
  echo "no verdict in $f: the run ($2) stopped before this scenario ended; see its output"
  exit 1
fi
tail -n +2 "$f"
code=$(head -n 1 "$f")
exit "${code:-1}"
