"""`tessera follow DIR`: hand each frame of a run's output to a downstream job
as soon as it is complete, never a half-written file.

Tessera writes a file under a temporary name and renames it when it is
complete; with the hint checksum=crc32 it then adds one line per frame to the
manifest of the directory (tessera/manifest.py), and for staged output only
once the drain has put the file at its final place. This command watches the
manifest and takes each new line: it prints the frame, or runs a command on
it (`--exec CMD`). It opens no file the manifest has not named (`--exec` takes `{file}` and `{frame}` where they go, else they are
added at the end). The Python API is `follow(DIR)` (xarray datasets, one per frame) and
`follow_frames(DIR)` (the manifest's records).

Exit status: 0 when it stopped as asked (--count frames taken, or --timeout
seconds without a new frame), 1 when a --exec command failed, 2 on bad input.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time

from . import manifest, zarr_store
from .cli_args import at_least, positive_seconds

POLL_S = 0.2


class Tail:
    """The manifest of a directory, read as it grows: whole lines only (a
    line still being appended waits for the next poll)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.offset = 0
        self.partial = b""

    def new_frames(self) -> list:
        try:
            with open(manifest.manifest_path(self.directory), "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []  # nothing complete yet
        self.offset += len(data)
        data = self.partial + data
        *lines, self.partial = data.split(b"\n")
        return [manifest.parse_line(self.directory, ln.decode("utf-8", "surrogateescape"))
                for ln in lines if ln.strip()]


def follow_frames(directory: str, count: int | None = None, timeout: float | None = None,
                  from_start: bool = True):
    """Yield a manifest.Frame for each complete frame of `directory`, in the
    order the manifest lists them: those already there (unless `from_start`
    is False), then each new one as it appears. Stops after `count` frames,
    or when `timeout` seconds pass without a new one (None: never)."""
    if not os.path.isdir(directory):
        raise ValueError(f"{directory}: no such directory")
    tail = Tail(directory)
    if not from_start:
        tail.new_frames()
    taken, last = 0, time.monotonic()
    while count is None or taken < count:
        frames = tail.new_frames()
        for fr in frames:
            yield fr
            taken += 1
            if count is not None and taken >= count:
                return
        if frames:
            last = time.monotonic()
        elif timeout is not None and time.monotonic() - last >= timeout:
            return
        else:
            time.sleep(POLL_S)


def follow(directory: str, count: int | None = None, timeout: float | None = None,
           from_start: bool = True):
    """Yield each complete frame of `directory` as an xarray Dataset (the
    frame's slice of its file or Zarr store along the record dimension), as
    follow_frames finds them. Needs xarray (and zarr-python for stores)."""
    import xarray  # optional: only this API needs it (the tools' test extra)

    for fr in follow_frames(directory, count, timeout, from_start):
        if zarr_store.is_store(fr.path):  # format=zarr: the layout names the record dimension
            rec = zarr_store.record_dim(fr.path)
            ds = xarray.open_zarr(fr.path, zarr_format=3, consolidated=False, decode_times=False)
        else:
            ds = xarray.open_dataset(fr.path, decode_times=False)
            rec = next((d for d, n in ds.sizes.items() if n == fr.frames
                        and d in ds.encoding.get("unlimited_dims", ())), None)
        with ds:
            yield (ds.isel({rec: fr.frame}) if rec in ds.sizes else ds).load()


def command_for(command: list, fr) -> list:
    """The command run for a frame: {file} and {frame} replaced where the
    user put them, else FILE FRAME added at the end."""
    if any("{file}" in a or "{frame}" in a for a in command):
        return [a.replace("{file}", fr.path).replace("{frame}", str(fr.frame)) for a in command]
    return command + [fr.path, str(fr.frame)]


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tessera follow",
        description="Print (or run a command on) each frame of DIR as soon as the manifest "
                    "says it is complete (files written with checksum=crc32; docs/verify.md).")
    p.add_argument("directory", metavar="DIR", help="the output directory of a run")
    p.add_argument("--exec", dest="command", metavar="CMD",
                   help="run CMD for each frame, in order, one at a time: {file} and {frame} "
                        "in CMD are replaced, else FILE FRAME are added at the end")
    p.add_argument("--count", type=at_least(1), metavar="N", help="stop after N frames")
    p.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                   help="stop after SECONDS without a new frame (default: follow until interrupted)")
    p.add_argument("--new", action="store_true",
                   help="only frames completed from now on, not those already listed")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    command = shlex.split(args.command) if args.command else None
    try:
        for fr in follow_frames(args.directory, args.count, args.timeout, not args.new):
            if command:
                run = command_for(command, fr)
                rc = subprocess.call(run)
                if rc != 0:
                    print(f"tessera follow: '{shlex.join(run)}' exited with status {rc}",
                          file=sys.stderr)
                    return 1
            else:
                print(f"{fr.path} frame {fr.frame} of {fr.frames}", flush=True)
    except ValueError as e:
        print(f"tessera follow: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"tessera follow: cannot run '{args.command}': {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
