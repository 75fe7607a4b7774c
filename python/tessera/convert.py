"""`tessera convert LOGDIR-or-MARKER [--out PATH]`: turn a staged log into the
file it stands for, by hand.

With `stage_format=log` (docs/staging.md) a closed file sits in the stage as a
log directory `<stage>/<name>` (each writer's blocks and an index, plus the
schema) next to its marker `<stage>/<name>.tessera-dest`, until the drain has
run the `tessera-convert` program on it. This command runs the same program:

- `tessera convert MARKER` (or the log directory of a marker) finishes that
  drain: the file is written to `<final>.tessera-tmp` with the backend and
  hints the log records, synced, read back and compared with the log, renamed
  to the final path the marker names; then the log and the marker are removed
  (what `tessera stage recover` does for every marker of a stage);
- `tessera convert LOGDIR --out PATH` writes PATH the same way and leaves the
  log and any marker as they are.

The program is $TESSERA_CONVERT, `tessera-convert` on PATH, or the build
tree's. Exit status 0, 1 when the conversion failed (the log is kept), 2 on a
usage error. Standard library only, like `tessera stage recover`.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from .launch import find_program

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


def main(argv=None) -> int:
    from . import stage  # the marker protocol lives there

    p = argparse.ArgumentParser(prog="tessera convert", description=__doc__.split("\n")[0])
    p.add_argument("source", metavar="LOGDIR-or-MARKER")
    p.add_argument("--out", metavar="PATH", help="write PATH and keep the log (default: the "
                   "marker's final path, then remove log and marker)")
    args = p.parse_args(argv)
    src = args.source.rstrip("/")
    log_dir = src[: -len(stage.DEST_SUFFIX)] if src.endswith(stage.DEST_SUFFIX) else src
    marker = log_dir + stage.DEST_SUFFIX
    if not os.path.isdir(log_dir):
        print(f"tessera convert: {log_dir} is not a log directory", file=sys.stderr)
        return 2
    if args.out:
        try:
            n = convert_log(log_dir, args.out)
        except (OSError, ConvertError) as e:
            print(f"tessera convert: {e}", file=sys.stderr)
            return 1
        print(f"converted {log_dir} -> {args.out} ({n} bytes); log kept")
        return 0
    if not os.path.exists(marker):
        print(f"tessera convert: {log_dir} has no marker {marker}: name the output with --out",
              file=sys.stderr)
        return 2
    return 0 if stage.recover_one(marker, print) else 1


if __name__ == "__main__":
    sys.exit(main())
