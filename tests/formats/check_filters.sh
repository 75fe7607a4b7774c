#!/bin/sh
# The storage a netCDF-4 file asked for is what NetCDF reports: write with
# test_formats on two ranks (collective, compressed in parallel), then grep
# `ncdump -hs` for the chunk shapes, filters and quantization of the hints;
# then a server group of two tasks, which must both write (compressing).
# usage: check_filters.sh MPIEXEC "MPIEXEC_FLAGS" TEST_FORMATS NCDUMP DIR
set -u
mpiexec=$1 flags=$2 prog=$3 ncdump=$4 dir=$5
pass=0 fail=0
expect() { # file pattern [absent]
  if "$ncdump" -hs "$1" | grep -q -- "$2"; then found=1; else found=0; fi
  if [ "${3:-}" = absent ]; then found=$((1 - found)); fi
  if [ $found = 1 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: ncdump -hs $1: '$2' ${3:+should be }${3:-not found}"
  fi
}
run() { # log np dir scenario [VAR=value]: test_formats, a failure counted
  # shellcheck disable=SC2086 # flags are words; ${5:-} is one assignment or none
  if ! env ${5:-} $mpiexec $flags -n "$2" "$prog" "$3" "$4" > "$dir/$1.log" 2>&1; then
    cat "$dir/$1.log"
    echo "FAIL: test_formats $4 ${5:-}"
    fail=$((fail + 1))
  fi
}
for sc in nc4-aggregate nc4z-aggregate nc4q-direct; do
  run "$sc" 2 "$dir" "$sc"
done
f="$dir/fmt_nc4-aggregate_np2.nc"
expect "$f" ':_Format = "netCDF-4"'
expect "$f" 'v_float:_ChunkSizes = 1, 1, 9, 10 ;' # auto: one horizontal level
expect "$f" 'v_float_2d:_ChunkSizes = 9, 10 ;'
expect "$f" 'v_float:_DeflateLevel' absent
expect "$f" 'v_float:_Shuffle' absent # no compressor: no shuffle
f="$dir/fmt_nc4z-aggregate_np2.nc"
expect "$f" 'v_float:_ChunkSizes = 1, 1, 4, 8 ;' # chunks=1x4x8
expect "$f" 'v_uint64_2d:_ChunkSizes = 4, 8 ;'
expect "$f" 'v_double:_DeflateLevel = 1 ;'
expect "$f" 'v_int64:_Shuffle = "true" ;'
f="$dir/fmt_nc4q-direct_np2.nc"
expect "$f" 'v_float:_QuantizeBitRoundNumberOfSignificantBits = 12 ;'
expect "$f" 'v_double:_QuantizeBitRoundNumberOfSignificantBits = 12 ;'
expect "$f" 'v_int:_QuantizeBitRound' absent # integers are never quantized
expect "$f" 'v_float:_DeflateLevel = 2 ;'
expect "$f" 'v_float:_Shuffle = "true" ;' # shuffle= not given: on with deflate, as WRF
# shuffle=0 given (here through TESSERA_HINTS, merged last): deflate alone.
mkdir -p "$dir/noshuffle"
run noshuffle 2 "$dir/noshuffle" nc4q-direct TESSERA_HINTS=shuffle=0
f="$dir/noshuffle/fmt_nc4q-direct_np2.nc"
expect "$f" 'v_float:_DeflateLevel = 2 ;'
expect "$f" 'v_float:_Shuffle' absent
# Server groups: both tasks of io_tasks=2 write, each compressing its own
# clients' tiles (collective HDF5 filters), no gather to the root. The
# statistics file names the writers.
st="$dir/nc4z-servers.stats"
rm -f "$st"
run nc4z-servers 4 "$dir" nc4z-servers "TESSERA_STATS_FILE=$st"
f="$dir/fmt_nc4z-servers_np4.nc"
expect "$f" 'v_double:_DeflateLevel = 1 ;'
expect "$f" 'v_float:_ChunkSizes = 1, 1, 4, 8 ;'
if grep -q '"writers": 2, "writer_ranks": \[2, 3\], "writers_on": "io_servers"' "$st"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: $st: the two server tasks (ranks 2 and 3) are not both writers"
fi
echo "check_filters: $pass passed, $fail failed"
[ $fail = 0 ]
