# Sourced (`. split_launcher.sh`) by the bench test scripts whose arguments
# are OUTDIR MPIEXEC_AND_FLAGS... -- REST: sets $out and $launcher and leaves
# REST as the positional parameters (a sourced file shifts the caller's).
out=$1
shift
launcher=""
while [ "$1" != "--" ]; do launcher="$launcher $1"; shift; done
shift
