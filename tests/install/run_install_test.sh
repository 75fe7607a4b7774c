#!/bin/sh
# Install Tessera as a user would and use only what was installed:
#   run_install_test.sh shared BUILD SRC MPIEXEC [MPIEXEC FLAGS...]
#     installs BUILD into a fresh prefix outside the build tree;
#   run_install_test.sh static BUILD SRC MPIEXEC [FLAGS...]
#     configures and builds SRC with -DBUILD_SHARED_LIBS=OFF in BUILD first.
# Then, with LD_LIBRARY_PATH, PKG_CONFIG_PATH and PYTHONPATH unset: RUNPATHs,
# the installed benchmarks (--version, a checked run), a C consumer through
# find_package(Tessera), another through pkg-config and tessera-config with
# the plain C compiler (so the flags must carry MPI), a Fortran consumer (also
# built with `tessera-config --fc --fflags --flibs` alone), the installed
# `tessera` command and the man pages. The `tessera` command must stand alone:
# in static mode BUILD is configured with a throwaway Python environment as
# TESSERA_PYTHON, which is deleted after the install, and BUILD is hidden
# (renamed) while the checks run; in both modes no installed text file names
# the prefix, BUILD or the source tree. At the end the prefix is moved and
# the command, the man page, tessera-config and the consumers work from there.
set -eu
mode=$1 build=$2 src=$3 mpiexec=$4
shift 4
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH PYTHONPATH TESSERA_PYTHON VIRTUAL_ENV
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-install-$mode.XXXXXX")
prefix="$work/prefix"
hidden="$build.hidden-by-install-test"
passed=0
ok() { passed=$((passed + 1)); echo "ok $passed - $*"; }
fail() { echo "FAILED: $*" >&2; echo "install: $passed passed, 1 failed"; exit 1; }
# The hidden build tree comes back, whatever happens (and after a killed run).
unhide() { if [ -d "$hidden" ] && [ ! -e "$build" ]; then mv "$hidden" "$build"; fi; }
trap 'unhide; rm -rf "$work"' EXIT
unhide
mpirun() { "$mpiexec" "$@"; }
flags="$*"

if [ "$mode" = static ]; then
  # TESSERA_PYTHON: a Python environment of this run's own (made from the
  # main build's Python, TSR_TEST_PYTHON from CTest), deleted after the install.
  "${TSR_TEST_PYTHON:-python3}" -m venv --without-pip "$work/build-venv" || fail "throwaway venv"
  cmake -S "$src" -B "$build" -DBUILD_SHARED_LIBS=OFF -DTESSERA_BUILD_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=Release -DTESSERA_PYTHON="$work/build-venv/bin/python" \
        >"$work/configure.log" 2>&1 || fail "configure (static)"
  cmake --build "$build" -j 2 >"$work/build.log" 2>&1 || { tail -20 "$work/build.log"; fail "build (static)"; }
fi
t0=$(date +%s)
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
libdir=${libdir%/}
ok "cmake --install $build --prefix $prefix ($(($(date +%s) - t0)) s, with lib/tessera/venv)"

# Nothing installed names where it was installed or built from (the venv's
# own scripts and pip's records do; bin/tessera never runs them).
named=$(grep -rIlF -e "$prefix" -e "$build" -e "$src" --exclude-dir=venv "$prefix" || true)
[ -z "$named" ] || fail "installed files name the prefix, the build or the source tree: $named"
venv="$libdir/tessera/venv"
[ -x "$venv/bin/python" ] || fail "no $venv/bin/python"
base=$(readlink -f "$venv/bin/python")
case "$base" in "$prefix"/*|"$build"/*|"$src"/*|"$work"/*) fail "the venv's python is $base" ;; esac
ok "no installed file names the prefix, build or source; the venv's python is $base"
if [ "$mode" = static ]; then
  rm -rf "$work/build-venv"
  mv "$build" "$hidden"
  ok "the build's TESSERA_PYTHON environment deleted, the build tree hidden"
fi

# Programs and shared libraries find libtessera relative to themselves.
if [ "$mode" = shared ]; then
  for f in "$prefix/bin/tessera-bench" "$prefix/bin/tessera-servers-bench" "$prefix/bin/tessera-convert" \
      "$libdir"/libtessera*.so; do
    readelf -d "$f" | grep -q 'RUNPATH.*\$ORIGIN' || fail "no \$ORIGIN RUNPATH in $f"
  done
  ok "RUNPATH \$ORIGIN on programs and libraries"
else
  [ -f "$libdir/libtessera.a" ] && ! ls "$libdir"/libtessera*.so >/dev/null 2>&1 \
    || fail "static build should install libtessera.a and no shared library"
  ok "static libraries installed"
fi

# The installed programs, from another directory, no environment.
cd "$work"
v=$("$prefix/bin/tessera-config" --version)
"$prefix/bin/tessera-servers-bench" --version | grep -qx "tessera-servers-bench (Tessera) ${v#tessera }" \
  || fail "tessera-servers-bench --version"
mpirun $flags -n 2 "$prefix/bin/tessera-bench" --nx 16 --ny 12 --nz 3 --steps 2 --output-every 1 \
  --check --quiet --out "$work/bench" >"$work/bench.log" 2>&1 || { cat "$work/bench.log"; fail "installed tessera-bench"; }
grep -q "check: passed" "$work/bench.log" || { cat "$work/bench.log"; fail "bench check"; }
ok "installed tessera-bench --check and tessera-servers-bench --version ($v)"
# stage_format=log: the installed library's drain finds the installed
# tessera-convert by itself (no TESSERA_CONVERT, no LD_LIBRARY_PATH).
mpirun $flags -n 2 "$prefix/bin/tessera-bench" --nx 16 --ny 12 --nz 3 --steps 2 --output-every 1 \
  --check --quiet --out "$work/bench_log" --stage-dir "$work/stage_log" --hints stage_format=log \
  >"$work/bench_log.log" 2>&1 || { cat "$work/bench_log.log"; fail "installed tessera-bench, stage_format=log"; }
grep -q "check: passed" "$work/bench_log.log" || { cat "$work/bench_log.log"; fail "bench check (log)"; }
[ -z "$(ls -A "$work/stage_log")" ] || fail "stage_format=log left files in the stage"
ok "installed drain converts stage_format=log with the installed tessera-convert"

# C consumer through find_package(Tessera).
cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/c.log" 2>&1 \
  && cmake --build "$work/cmake" >>"$work/c.log" 2>&1 || { cat "$work/c.log"; fail "find_package consumer build"; }
mpirun $flags -n 2 "$work/cmake/consumer" "$work/cmake.nc" | grep -qx "consumer: ok (libtessera ${v#tessera })" \
  || fail "find_package consumer run"
ok "C consumer via find_package(Tessera)"

# C consumer through pkg-config, compiled with the plain C compiler: the
# MPI include path and library must come from tessera.pc.
cc=${CC:-cc}
static=""
[ "$mode" = static ] && static=--static
pcflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config $static --cflags --libs tessera)
echo "pkg-config $static --cflags --libs tessera: $pcflags"
$cc "$here/consumer/consumer.c" -o "$work/consumer_pc" $pcflags || fail "pkg-config consumer build"
mpirun $flags -n 2 "$work/consumer_pc" "$work/pc.nc" | grep -q "consumer: ok" || fail "pkg-config consumer run"
ncdump "$work/pc.nc" | grep -q "v = 1, 2, 3, 4, 1, 2, 3, 4" || fail "pkg-config consumer output"
ok "C consumer via pkg-config tessera ($cc)"

$cc "$here/consumer/consumer.c" -o "$work/consumer_tc" $("$prefix/bin/tessera-config" --cflags --libs) \
  || fail "tessera-config consumer build"
mpirun $flags -n 2 "$work/consumer_tc" "$work/tc.nc" | grep -q "consumer: ok" || fail "tessera-config consumer run"
ok "C consumer via tessera-config --cflags --libs"

# Fortran consumer through find_package(Tessera), when the module was built.
if [ "$("$prefix/bin/tessera-config" --has-fortran)" = yes ]; then
  cmake -S "$here/consumer_fortran" -B "$work/fortran" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_Fortran_COMPILER="$("$prefix/bin/tessera-config" --fc)" >"$work/f.log" 2>&1 \
    && cmake --build "$work/fortran" >>"$work/f.log" 2>&1 || { cat "$work/f.log"; fail "Fortran consumer build"; }
  mpirun $flags -n 2 "$work/fortran/consumer_fortran" "$work/f.nc" \
    | grep -qx " *consumer_fortran: ok (libtessera ${v#tessera })" || fail "Fortran consumer run"
  ncdump "$work/f.nc" | grep -q "v = 1, 2, 3, 4, 1, 2, 3, 4" || fail "Fortran consumer output"
  ok "Fortran consumer via find_package(Tessera) (tsr_inq_libvers)"
  # ... and through pkg-config tessera-fortran with the MPI Fortran wrapper.
  if command -v mpif90 >/dev/null 2>&1; then
    fflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config $static --cflags --libs tessera-fortran)
    mpif90 "$here/consumer_fortran/consumer.F90" -o "$work/consumer_fpc" $fflags \
      || fail "pkg-config tessera-fortran consumer build"
    mpirun $flags -n 2 "$work/consumer_fpc" "$work/fpc.nc" | grep -q "consumer_fortran: ok" \
      || fail "pkg-config tessera-fortran consumer run"
    ok "Fortran consumer via pkg-config tessera-fortran (mpif90)"
  fi
  # ... and with tessera-config alone, as nc-config users do: --fc is the MPI
  # Fortran wrapper, so the consumer's `use mpi` builds with --fflags/--flibs.
  tc="$prefix/bin/tessera-config"
  fc=$("$tc" --fc)
  [ -n "$fc" ] || fail "tessera-config --fc is empty with the Fortran module built"
  $fc "$here/consumer_fortran/consumer.F90" -o "$work/consumer_ftc" $("$tc" --fflags) \
      $("$tc" --flibs) || fail "tessera-config --fc ($fc) --fflags --flibs consumer build"
  mpirun $flags -n 2 "$work/consumer_ftc" "$work/ftc.nc" | grep -q "consumer_fortran: ok" \
    || fail "tessera-config Fortran consumer run"
  ncdump "$work/ftc.nc" | grep -q "v = 1, 2, 3, 4, 1, 2, 3, 4" || fail "tessera-config Fortran consumer output"
  ok "Fortran consumer via \$(tessera-config --fc) --fflags --flibs ($fc)"
fi

# The installed `tessera` command (the Python tools), in a bare environment:
# its own Python environment, the cost model's profiles, its programs.
tsr() { env -i HOME="$work" PATH=/usr/bin:/bin "$@"; }
tools() { # PREFIX: --version, tune --version, --help, advise and model predict
  tsr "$1/bin/tessera" --version | grep -qx "$v" || fail "$1/bin/tessera --version"
  tsr "$1/bin/tessera" tune --version | grep -qx "tessera tune ${v#tessera }" || fail "tessera tune --version"
  help=$(tsr "$1/bin/tessera" --help) && echo "$help" | grep -q "tune" || fail "tessera --help"
  tsr "$1/bin/tessera" advise --profile here --procs 4 >"$work/advise.log" 2>&1 \
    && grep -q "^recommended: TESSERA_HINTS=strategy=" "$work/advise.log" \
    || { cat "$work/advise.log"; fail "$1/bin/tessera advise"; }
  tsr "$1/bin/tessera" model predict --profile here --strategies serial,aggregate:2 --ranks 2,4 \
    >"$work/model.log" 2>&1 && grep -q "^aggregate:2 *4 " "$work/model.log" \
    || { cat "$work/model.log"; fail "$1/bin/tessera model predict"; }
}
tools "$prefix"
ok "installed tessera --version, tune --version, advise, model predict (bare environment)"
# Man pages of every program in bin/, when help2man made them.
manpages() { # PREFIX
  for p in "$1"/bin/*; do
    page="$1/share/man/man1/${p##*/}.1"
    [ -f "$page" ] || fail "no man page $page"
    LC_ALL=C MANWIDTH=500 man -l "$page" 2>/dev/null | sed -n '/^NAME/,/^DESCRIPTION/p' >"$work/man.txt"
    grep -Eq "^ +${p##*/} +- +[^ ]" "$work/man.txt" \
      && grep -A1 "^SYNOPSIS" "$work/man.txt" | grep -Eq "^ +${p##*/} +[^ ]" \
      || { cat "$work/man.txt"; fail "man -l $page: NAME or SYNOPSIS"; }
  done
  LC_ALL=C MANWIDTH=500 MANPATH="$1/share/man" man tessera 2>/dev/null | grep -A1 "^SYNOPSIS" \
    | grep -q "tessera \[--version\] <command> \[args\]" || fail "MANPATH=$1/share/man man tessera"
}
if command -v help2man >/dev/null 2>&1 && command -v man >/dev/null 2>&1; then
  manpages "$prefix"
  ok "man pages of $(ls "$prefix/bin" | wc -l) programs: NAME and SYNOPSIS (man -l, MANPATH)"
fi
# A log whose drain failed (a converter that refuses) is finished later by the
# installed `tessera stage recover`, which finds the installed tessera-convert
# without PATH or TESSERA_CONVERT.
TESSERA_CONVERT=/bin/false mpirun $flags -n 2 "$prefix/bin/tessera-bench" --nx 16 --ny 12 --nz 3 \
  --steps 2 --output-every 1 --quiet --out "$work/bench_rec" --stage-dir "$work/stage_rec" \
  --hints stage_format=log >"$work/bench_rec.log" 2>&1 && fail "a refusing converter went unnoticed"
ls "$work/stage_rec" | grep -q tessera-dest || { cat "$work/bench_rec.log"; fail "no staged log left"; }
env -u TESSERA_CONVERT PATH=/usr/bin:/bin "$prefix/bin/tessera" stage recover "$work/stage_rec" \
  >"$work/recover.log" 2>&1 || { cat "$work/recover.log"; fail "installed tessera stage recover"; }
[ -z "$(ls -A "$work/stage_rec")" ] || fail "stage recover left files in the stage"
ls "$work/bench_rec" | grep -q . || fail "stage recover placed no file"
ok "installed tessera stage recover finds the installed tessera-convert"

# The prefix moved: nothing in it names its old place.
mv "$prefix" "$work/moved"
prefix="$work/moved"
libdir="$prefix/${libdir##*/}"
tools "$prefix"
[ "$("$prefix/bin/tessera-config" --prefix)" = "$prefix" ] || fail "tessera-config --prefix after the move"
# ... and through links to them, as from a directory on PATH.
mkdir "$work/links"
ln -s "$prefix/bin/tessera" "$prefix/bin/tessera-config" "$work/links/"
[ "$("$work/links/tessera-config" --prefix)" = "$prefix" ] || fail "tessera-config through a link"
tsr "$work/links/tessera" --version | grep -qx "$v" || fail "tessera through a link"
if command -v help2man >/dev/null 2>&1 && command -v man >/dev/null 2>&1; then
  manpages "$prefix"
fi
mpirun $flags -n 2 "$prefix/bin/tessera-bench" --nx 16 --ny 12 --nz 3 --steps 2 --output-every 1 \
  --check --quiet --out "$work/bench_moved" >"$work/bench_moved.log" 2>&1 \
  && grep -q "check: passed" "$work/bench_moved.log" || { cat "$work/bench_moved.log"; fail "moved tessera-bench"; }
cmake -S "$here/consumer" -B "$work/cmake_moved" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cm.log" 2>&1 \
  && cmake --build "$work/cmake_moved" >>"$work/cm.log" 2>&1 || { cat "$work/cm.log"; fail "find_package consumer, moved prefix"; }
mpirun $flags -n 2 "$work/cmake_moved/consumer" "$work/cmake_moved.nc" \
  | grep -qx "consumer: ok (libtessera ${v#tessera })" || fail "find_package consumer run, moved prefix"
pcflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config $static --cflags --libs tessera)
case "$pcflags" in *"$work/prefix"*) fail "pkg-config names the old prefix: $pcflags" ;; esac
$cc "$here/consumer/consumer.c" -o "$work/consumer_pc_moved" $pcflags || fail "pkg-config consumer build, moved prefix"
mpirun $flags -n 2 "$work/consumer_pc_moved" "$work/pc_moved.nc" | grep -q "consumer: ok" \
  || fail "pkg-config consumer run, moved prefix"
$cc "$here/consumer/consumer.c" -o "$work/consumer_tc_moved" $("$prefix/bin/tessera-config" --cflags --libs) \
  || fail "tessera-config consumer build, moved prefix"
mpirun $flags -n 2 "$work/consumer_tc_moved" "$work/tc_moved.nc" | grep -q "consumer: ok" \
  || fail "tessera-config consumer run, moved prefix"
ok "moved prefix: tessera (advise, model; also through a link), man pages, tessera-bench, consumers via find_package, pkg-config, tessera-config"
echo "install: $passed passed, 0 failed"
