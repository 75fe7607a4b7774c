"""`tessera convert LOGDIR-or-MARKER [--out PATH]`: turn a staged log into the
file it stands for, by hand; `tessera convert INPUT --to FORMAT --out PATH`:
copy a NetCDF file or Zarr store into another format.

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

With `--to cdf2|cdf5|netcdf4|zarr` the source is a NetCDF file (CDF-2, CDF-5,
netCDF-4) or a Zarr store, and PATH is written in FORMAT by the same program
(`tessera-convert --to`, apps/convert/convert_format.c): the library opens the
input with the backend it needs (`backend=zarr` for a store) and writes every
dimension, variable, attribute and record with `format=FORMAT` and
`strategy=serial` plus `--hints`, on one rank or with `--np N` under mpiexec.
The output appears atomically, as every Tessera file does.

The program is $TESSERA_CONVERT, `tessera-convert` on PATH, or the build
tree's. Exit status 0, 1 when the conversion failed (the log is kept), 2 on a
usage error. Standard library only, like `tessera stage recover`.
"""
from __future__ import annotations

import argparse
import os
import sys

from .stage import protocol as stage
from .stage.converter import FORMATS, ConvertError, convert_format, convert_log

def _format_main(args) -> int:
    src = args.source.rstrip("/") or args.source
    if not args.out:
        print("tessera convert: --to needs --out PATH", file=sys.stderr)
        return 2
    if not os.path.exists(src):
        print(f"tessera convert: {src} does not exist", file=sys.stderr)
        return 2
    try:
        convert_format(src, args.out, args.to, args.hints, args.np, args.mpiexec)
    except (OSError, ConvertError) as e:
        print(f"tessera convert: {e}", file=sys.stderr)
        return 1
    print(f"converted {src} -> {args.out} ({args.to})")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tessera convert", description=__doc__.split("\n")[0])
    p.add_argument("source", metavar="LOGDIR-or-MARKER-or-INPUT")
    p.add_argument("--out", metavar="PATH", help="write PATH and keep the log (default: the "
                   "marker's final path, then remove log and marker)")
    p.add_argument("--to", choices=FORMATS, help="copy the NetCDF file or Zarr store INPUT "
                   "into PATH (--out) in this format")
    p.add_argument("--hints", help="with --to: hints for the output (e.g. zstd=3)")
    p.add_argument("--np", type=int, default=1, help="with --to: ranks under mpiexec (1)")
    p.add_argument("--mpiexec", default="mpiexec", help="MPI launcher for --np (mpiexec)")
    args = p.parse_args(argv)
    if args.to:
        return _format_main(args)
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
