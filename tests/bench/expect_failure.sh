#!/bin/sh
# usage: expect_failure.sh CODE TEXT COMMAND [ARGS...]
# Runs COMMAND, shows its output, and succeeds only when it exits with CODE
# and its output (stdout and stderr) contains TEXT (fixed string).
code=$1
text=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then
  echo "expect_failure: exit code $rc, expected $code" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -qF -- "$text"; then
  echo "expect_failure: output lacks: $text" >&2
  exit 1
fi
echo "expect_failure: exit $rc and message as expected"
