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
for sc in nc4-aggregate nc4z-aggregate nc4q-direct; do
  # shellcheck disable=SC2086 # flags are words
  if ! $mpiexec $flags -n 2 "$prog" "$dir" $sc > "$dir/$sc.log" 2>&1; then
    cat "$dir/$sc.log"
    echo "FAIL: test_formats $sc"
    fail=$((fail + 1))
  fi
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
# shellcheck disable=SC2086 # flags are words
if ! TESSERA_HINTS=shuffle=0 $mpiexec $flags -n 2 "$prog" "$dir/noshuffle" nc4q-direct \
    > "$dir/noshuffle.log" 2>&1; then
  cat "$dir/noshuffle.log"
  echo "FAIL: test_formats nc4q-direct with shuffle=0"
  fail=$((fail + 1))
fi
f="$dir/noshuffle/fmt_nc4q-direct_np2.nc"
expect "$f" 'v_float:_DeflateLevel = 2 ;'
expect "$f" 'v_float:_Shuffle' absent
# Server groups: both tasks of io_tasks=2 write, each compressing its own
# clients' tiles (collective HDF5 filters), no gather to the root. The
# statistics file names the writers.
st="$dir/nc4z-servers.stats"
rm -f "$st"
# shellcheck disable=SC2086 # flags are words
if ! TESSERA_STATS_FILE="$st" $mpiexec $flags -n 4 "$prog" "$dir" nc4z-servers \
    > "$dir/nc4z-servers.log" 2>&1; then
  cat "$dir/nc4z-servers.log"
  echo "FAIL: test_formats nc4z-servers"
  fail=$((fail + 1))
fi
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
