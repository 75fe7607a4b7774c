"""`tessera verify FILE...`: recompute the per-frame checksums of files (NetCDF)
or stores (Zarr, format=zarr) written with the hint checksum=crc32 and compare
them with what the writers recorded.

The writers summed each variable's values at each frame as they handed them
to the file (src/backend/sink_checksum.c), and recorded the sums in the file
(attribute `tessera_crc32` of each variable) and in the manifest beside it
(tessera/manifest.py). This reads every summed (variable, frame) back, sums
it the same way, and reports each one that differs, that cannot be read, or
whose manifest line disagrees with the file. Exit status: 0 when every sum
matched, 1 when one did not (or a file has no sums, or a frame of a store
cannot be decoded), 2 on bad input.
"""
from __future__ import annotations

import argparse
import os
import sys
import zlib

import netCDF4
import numpy as np

from . import manifest, zarr_store


class VerifyError(Exception):
    """A file that cannot be verified at all; the message names it."""


class NetCDFFile:
    """A NetCDF file opened for reading with netCDF4, values as stored (no
    masking or scaling: the sums are of the values written)."""

    def __init__(self, path: str):
        try:
            self.ds = netCDF4.Dataset(path, "r")
        except OSError as e:
            raise VerifyError(f"{path}: not a NetCDF file Tessera wrote ({e})") from None
        self.ds.set_auto_maskandscale(False)
        self.record = next((d.name for d in self.ds.dimensions.values() if d.isunlimited()), None)

    def text_attribute(self, name: str) -> dict:
        return {n: str(v.getncattr(name)) for n, v in self.ds.variables.items()
                if name in v.ncattrs()}

    def frame_values(self, name: str, frame: int):
        var = self.ds.variables[name]
        if self.record is not None and var.dimensions and var.dimensions[0] == self.record:
            return var[frame]
        return var[...]

    def close(self) -> None:
        self.ds.close()


#: What reading a frame may raise: NetCDF's errors, and for a store whatever
#: zarr-python or a codec raises on a damaged chunk (no common base).
READ_ERRORS = {NetCDFFile: (OSError, RuntimeError, IndexError), zarr_store.Store: (Exception,)}


def open_dataset(path: str):
    """The file (NetCDF) or store (Zarr) at `path`, opened for reading."""
    if not os.path.exists(path):
        raise VerifyError(f"{path}: no such file")
    if os.path.isdir(path):
        if not zarr_store.is_store(path):
            raise VerifyError(f"{path}: a directory without zarr.json: verify reads NetCDF "
                              f"files and Zarr stores")
        try:
            return zarr_store.Store(path)
        except (ImportError, ValueError) as e:
            raise VerifyError(f"{path}: {e}") from None
    return NetCDFFile(path)


def crc32_of(values: np.ndarray) -> str:
    """The sum Tessera records: CRC-32 of the values, little-endian, C order."""
    a = np.ascontiguousarray(values)
    if a.dtype.kind in "iufc" and a.dtype.byteorder not in ("<", "|", "="):
        a = a.astype(a.dtype.newbyteorder("<"))
    elif a.dtype.byteorder == "=" and not np.little_endian:
        a = a.byteswap()
    return f"{zlib.crc32(a.tobytes()) & 0xFFFFFFFF:08x}"


def recorded(ds) -> dict:
    """variable -> [hex sum or None per frame], from the file's attributes."""
    return {name: [None if set(s) == {"-"} else s for s in text.split()]
            for name, text in ds.text_attribute(manifest.CHECKSUM_ATT).items()}


def verify_file(path: str, say) -> int:
    """Problems found in one file or store (0: every recorded sum matched)."""
    ds = open_dataset(path)
    bad = checked = 0
    try:
        sums = recorded(ds)
        if not sums:
            say(f"{path}: no checksums to verify (written without the hint checksum=crc32)")
            return 1
        for name, per_frame in sums.items():
            for f, want in enumerate(per_frame):
                if want is None:
                    continue
                try:
                    got = crc32_of(ds.frame_values(name, f))
                except READ_ERRORS[type(ds)] as e:
                    say(f"{path}: variable {name} frame {f}: cannot be read "
                        f"({type(e).__name__}: {e})")
                    bad += 1
                    continue
                checked += 1
                if got != want:
                    say(f"{path}: variable {name} frame {f}: crc32 {got}, "
                        f"recorded {want}: the values differ from what was written")
                    bad += 1
        bad += against_manifest(path, sums, say)
    finally:
        ds.close()
    if not bad:
        say(f"{path}: ok, {checked} sums of {len(sums)} variables matched")
    return bad


def against_manifest(path: str, sums: dict, say) -> int:
    """The manifest lines of the file, if its directory has a manifest, must
    hold the sums the file holds."""
    directory = os.path.dirname(os.path.normpath(path)) or "."
    try:
        frames = [fr for fr in manifest.read_frames(directory)
                  if os.path.basename(fr.path) == os.path.basename(os.path.normpath(path))]
    except ValueError as e:
        say(f"{manifest.manifest_path(directory)}: {e}")
        return 1
    bad = 0
    for fr in frames:
        for name, want in fr.sums.items():
            per_frame = sums.get(name, [])
            # A fixed variable is listed only in frame 0's line, beside its one sum.
            have = per_frame[fr.frame] if fr.frame < len(per_frame) else None
            if have != want:
                say(f"{path}: variable {name} frame {fr.frame}: the manifest records {want}, "
                    f"the file {have or 'none'}")
                bad += 1
    return bad


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tessera verify",
        description="Recompute the per-frame checksums of files written with checksum=crc32 "
                    "and compare them with the sums the writers recorded (docs/verify.md).")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="NetCDF files or Zarr stores Tessera wrote")
    p.add_argument("--quiet", action="store_true", help="print only the problems")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    bad = 0

    def say(line: str) -> None:
        if not (args.quiet and ": ok," in line):
            print(line)

    for path in args.files:
        try:
            bad += verify_file(path, say)
        except VerifyError as e:
            print(f"tessera verify: {e}", file=sys.stderr)
            return 2
    return 1 if bad else 0
