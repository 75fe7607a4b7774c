"""The manifest beside Tessera's output (hint checksum=crc32; docs/verify.md).

Each output directory has a file `tessera-manifest.jsonl`: one JSON object
per line, one line per frame of each file Tessera committed there, added
once the file has its final name (a staged file's: once the drain, or
`tessera stage recover`, has put it there). A line reads

    {"file": "wrfout_d01_...", "frame": 0, "frames": 1, "hash": "crc32",
     "vars": {"U": "89abcdef", ...}}

`vars` holds the CRC-32 (zlib's) of each variable's values at that frame,
little-endian in C order; a fixed variable appears in its file's frame 0.
The same sums are in the file, as the text attribute `tessera_crc32` of each
variable (one per frame). This module is the protocol: its name, how a line
is added, how lines are read; `tessera verify` and `tessera follow` use it,
and `tessera stage recover`, which needs only the standard library.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

MANIFEST_NAME = "tessera-manifest.jsonl"
#: The attribute each summed variable carries in the file.
CHECKSUM_ATT = "tessera_crc32"


@dataclass(frozen=True)
class Frame:
    """One complete frame, as the manifest names it."""
    path: str      # the file, in the manifest's directory
    frame: int     # its index along the file's record dimension
    frames: int    # frames the file holds
    sums: dict = field(default_factory=dict)  # variable -> 8-digit hex CRC-32


def manifest_path(directory: str) -> str:
    return os.path.join(directory, MANIFEST_NAME)


def append(final: str, lines: str) -> None:
    """Add lines (each ending in a newline) to the manifest beside `final`,
    in one write with O_APPEND, as the library does (tier/manifest.c)."""
    if not lines:
        return
    path = manifest_path(os.path.dirname(final) or ".")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        data = lines.encode("utf-8", "surrogateescape")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def parse_line(directory: str, line: str) -> Frame:
    """A manifest line as a Frame; ValueError naming what is wrong."""
    try:
        d = json.loads(line)
        return Frame(os.path.join(directory, d["file"]), int(d["frame"]), int(d["frames"]),
                     dict(d.get("vars", {})))
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"not a manifest line ({e}): {line.strip()[:80]}") from None


def read_frames(directory: str) -> list:
    """Every frame the manifest of `directory` names (none when it has none)."""
    try:
        with open(manifest_path(directory), encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
    except FileNotFoundError:
        return []
    # A line still being appended has no newline yet: not taken.
    return [parse_line(directory, ln) for ln in text.split("\n")[:-1] if ln.strip()]

