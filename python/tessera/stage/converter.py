"""Running the `tessera-convert` program (apps/convert): the drain's
conversion of a staged log into its file, which the staging protocol
(protocol.py) and `tessera convert` both do, and the copy of a NetCDF file
or Zarr store into another format (`tessera convert --to`).

The program is $TESSERA_CONVERT, `tessera-convert` on PATH, or the build
tree's. Standard library only, like the protocol.
"""
from __future__ import annotations

import os
import subprocess

from ..bench.launch import find_program, mpiexec_command


#: Variables of an MPI launcher: with them the converter (an MPI program run
#: as a singleton) would take itself for a rank of someone else's job.
_LAUNCHER_PREFIXES = ("OMPI_", "PMIX_", "PMI_", "OPAL_", "ORTE_", "PRTE_", "MPICH_", "HYDRA_",
                      "I_MPI_")
#: ... except where the MPI library itself is (OPAL_PREFIX, component paths of
#: a relocated installation), without which not even a singleton starts: the
#: rule of the library's drain (child_env in src/tier/drain_convert.c).
_INSTALL_LOCATION_ENDS = ("_PREFIX", "DIR", "component_path")


def converter_env() -> dict:
    """This process's environment without the MPI launcher's variables."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(_LAUNCHER_PREFIXES) or k.endswith(_INSTALL_LOCATION_ENDS)
            or k.startswith("OMPI_ALLOW_RUN_AS_ROOT")}


class ConvertError(Exception):
    """A log that could not be converted; the message says why."""


def find_converter() -> str | None:
    """The tessera-convert program: $TESSERA_CONVERT, PATH, or the build tree."""
    return find_program("tessera-convert", os.environ.get("TESSERA_CONVERT"))


def convert_log(log_dir: str, final: str) -> int:
    """Convert log_dir into final (temporary name, sync, verify, rename); the
    log is left as it is. Returns the size of the final file."""
    prog = find_converter()
    if not prog:
        raise ConvertError("tessera-convert not found (set TESSERA_CONVERT or put it on PATH)")
    res = subprocess.run([prog, log_dir, final], env=converter_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=False)
    if res.returncode != 0:
        raise ConvertError(res.stderr.strip() or f"{prog} exited {res.returncode}")
    return os.path.getsize(final)


FORMATS = ("cdf2", "cdf5", "netcdf4", "zarr")


def convert_format(source: str, out: str, to: str, hints: str | None = None, np: int = 1,
                   mpiexec: str = "mpiexec") -> None:
    """Write `out` as format `to` from the NetCDF file or Zarr store `source`
    (tessera-convert --to); ConvertError with the program's message on failure."""
    prog = find_converter()
    if not prog:
        raise ConvertError("tessera-convert not found (set TESSERA_CONVERT or put it on PATH)")
    cmd = [prog, "--to", to] + (["--hints", hints] if hints else []) + [source, out]
    env = converter_env()
    if np > 1:
        cmd = mpiexec_command(mpiexec, np) + cmd
        env = dict(os.environ)
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    res = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, check=False)
    if res.returncode != 0:
        raise ConvertError(res.stderr.strip() or f"{prog} exited {res.returncode}")
