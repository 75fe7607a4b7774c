#!/bin/sh
# Install Tessera into a scratch prefix, then build a consumer with
# find_package(Tessera) and another with pkg-config, and run both.
set -eu
build=$1 src=$2 work=$3 mpiexec=$4
shift 4
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n 1)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$mpiexec" "$@" -n 2 "$work/cmake/consumer" "$work/cmake.nc"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
mpicc $(pkg-config --cflags tessera) "$src/consumer/consumer.c" -o "$work/consumer_pc" $(pkg-config --libs tessera)
"$mpiexec" "$@" -n 2 "$work/consumer_pc" "$work/pc.nc"
ncdump "$work/pc.nc" | grep -q "v = 1, 2, 3, 4, 1, 2, 3, 4"
echo "install: 3 passed, 0 failed"
