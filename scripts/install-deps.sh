#!/usr/bin/env bash
# Install the Debian packages Tessera needs, if missing. Idempotent: does
# nothing (and needs no network) when everything is already there.
set -euo pipefail
# cdo and nco: the tests read the bench's files with the tools WRF users run
# on them (tests/bench/test_cdo_nco.py). libnetcdff-dev and m4: what a WRF
# build needs beside Tessera (the serial NetCDF-Fortran; its serial NetCDF-C
# headers in /usr/include must not shadow the MPI build Tessera uses, which
# tests/wrf/check_netcdf_mpi.sh checks). slurmctld, slurmd, slurm-client and
# munge: tests/slurm start a one-node Slurm cluster of their own
# (scripts/slurm-local.sh; the packages' own services are not used).
# doxygen: the API reference (docs/api, `cmake --build build --target docs`);
# help2man: the installed programs' man pages, made from their --help.
# zlib1g-dev: checksum=crc32 (CRC-32 whose pieces combine) and the Zarr gzip codec;
# libisal-dev: the same CRC-32 five times as fast (ISA-L).
# libjson-c-dev: strategy=auto reads the cost model's profile (TESSERA_PROFILE).
# universal-ctags: tests/arch finds every function definition with it (the
# layer rule and the call-circle count run in CI, not skipped).
pkgs=(libopenmpi-dev openmpi-bin libpnetcdf-dev pnetcdf-bin libnetcdf-mpi-dev netcdf-bin
      cmake gfortran pkg-config python3-venv make libeccodes-dev libeccodes-tools
      cdo nco libnetcdff-dev m4 slurmctld slurmd slurm-client munge doxygen help2man universal-ctags
      libzstd-dev zlib1g-dev libisal-dev libjson-c-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
