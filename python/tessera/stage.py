"""`tessera stage recover STAGE_DIR`: finish the drains a crash interrupted.
(`tessera stage in SRC... --to DIR`, staging inputs before a job, is in
stage_in.py.)

With the `stage_dir` hint (docs/staging.md) every closed file is complete in the
stage as `<stage>/<name>`, next to `<stage>/<name>.tessera-dest`, whose first
line is the file's final path and second line its size in bytes, until the
drain has copied it to `<final>.tessera-tmp`, verified the copy (size and
checksum), renamed it into place and removed the staged file, then the marker.
A job killed at any point therefore leaves each closed file either complete in
the stage with its marker, or complete at its final path. This command does
what the drain would have done, with the same protocol:

- marker and staged file of the recorded size: copy to `<final>.tessera-tmp`,
  fsync, read back and compare size and checksum, rename into place, remove the
  staged file, then the marker;
- marker, staged file of another size: the staged file is not what was closed;
  it is kept, reported, and the exit status is 1;
- marker without a staged file, `<name>.tessera-tmp` present: the file never
  finished closing (the job died inside tsr_close): marker and temporary are
  removed, nothing was promised;
- marker without either, final path present: the drain finished and died
  before removing the marker: the marker is removed.

A staged file may be a log directory (`stage_format=log`): its size is the sum
of its files, and instead of a copy it is converted by the `tessera-convert`
program (`tessera convert`, tessera/convert.py), which writes, syncs and
verifies `<final>.tessera-tmp` against the log before the rename.

Markers are taken oldest first, so two staged versions of one final path land
in the order they were closed. Exit status: 0 when every marker was resolved,
1 when some staged file could not be placed (it stays, with its marker), 2 on a
usage error.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys

from .convert import ConvertError, convert_log

DEST_SUFFIX = ".tessera-dest"
TMP_SUFFIX = ".tessera-tmp"
CHUNK = 4 << 20


class StageError(Exception):
    """A staged file that cannot be placed; the message names it."""


def read_marker(marker: str) -> tuple:
    """(final path, size) from a marker; ValueError when it is torn."""
    with open(marker, encoding="utf-8", errors="surrogateescape") as fh:
        lines = fh.read().split("\n")
    if len(lines) < 3 or not lines[0] or lines[2] != "":
        raise ValueError(f"{marker}: not a complete marker")
    return lines[0], int(lines[1])


def _digest(fh) -> tuple:
    h, n = hashlib.blake2b(digest_size=16), 0
    fh.seek(0)
    while True:
        b = fh.read(CHUNK)
        if not b:
            return h.digest(), n
        h.update(b)
        n += len(b)


def copy_verified(staged: str, final: str) -> int:
    """Copy staged to `<final>.tessera-tmp`, verify, rename into place; the
    staged file is untouched. Returns the bytes copied."""
    tmp = final + TMP_SUFFIX
    try:
        with open(staged, "rb") as src, open(tmp, "w+b") as dst:
            h, n = hashlib.blake2b(digest_size=16), 0
            while True:
                b = src.read(CHUNK)
                if not b:
                    break
                h.update(b)
                dst.write(b)
                n += len(b)
            dst.flush()
            os.fsync(dst.fileno())
            if _digest(dst) != (h.digest(), n):
                raise StageError(f"{tmp}: copy of {staged} does not verify")
        os.replace(tmp, final)
        return n
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def staged_size(staged: str) -> int:
    """Bytes of a staged file, or of the files of a staged log directory."""
    if os.path.isdir(staged):
        return sum(os.path.getsize(os.path.join(staged, n)) for n in os.listdir(staged))
    return os.path.getsize(staged)


def remove_staged(staged: str) -> None:
    if os.path.isdir(staged):
        shutil.rmtree(staged)
    else:
        os.unlink(staged)


def place(staged: str, final: str) -> int:
    """Put staged at final: a copy, or the conversion of a log."""
    return convert_log(staged, final) if os.path.isdir(staged) else copy_verified(staged, final)


def recover_one(marker: str, log) -> bool:
    """Resolve one marker; True when nothing of it is left to do."""
    staged = marker[: -len(DEST_SUFFIX)]
    try:
        final, size = read_marker(marker)
    except (ValueError, OSError) as e:
        # A torn marker can only be one whose file never finished closing
        # (the marker is written before the staged file takes its name).
        if not os.path.exists(staged):
            os.unlink(marker)
            log(f"removed torn marker {marker} (its file never closed)")
            return True
        log(f"ERROR: {e}; {staged} kept")
        return False
    if os.path.exists(staged):
        have = staged_size(staged)
        if have != size:
            log(f"ERROR: {staged} holds {have} bytes, its marker says {size}; kept")
            return False
        try:
            n = place(staged, final)
        except (OSError, StageError, ConvertError) as e:
            log(f"ERROR: {staged} -> {final}: {e}; staged copy kept")
            return False
        remove_staged(staged)
        os.unlink(marker)
        log(f"recovered {final} ({n} bytes) from {staged}")
        return True
    if os.path.exists(staged + TMP_SUFFIX):
        remove_staged(staged + TMP_SUFFIX)
        os.unlink(marker)
        log(f"removed {staged}{TMP_SUFFIX} and its marker (the file never finished closing)")
        return True
    if os.path.exists(final):
        os.unlink(marker)
        log(f"{final} already in place; removed marker {marker}")
        return True
    log(f"ERROR: {marker}: neither {staged} nor {final} exists")
    return False


def recover(stage_dir: str, log=print) -> int:
    """Resolve every marker in stage_dir; the number left unresolved."""
    markers = [os.path.join(stage_dir, n) for n in os.listdir(stage_dir)
               if n.endswith(DEST_SUFFIX)]
    markers.sort(key=lambda m: (os.stat(m).st_mtime_ns, m))
    failed = sum(0 if recover_one(m, log) else 1 for m in markers)
    log(f"stage recover {stage_dir}: {len(markers)} marker(s), "
        f"{len(markers) - failed} resolved, {failed} left")
    return failed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="tessera stage",
        description="Fast-tier staging tools (docs/staging.md).")
    sub = p.add_subparsers(dest="action", required=True)
    r = sub.add_parser("recover", help="finish drains a crash interrupted")
    r.add_argument("stage_dir", metavar="STAGE_DIR")
    i = sub.add_parser("in", help="copy input files to the fast tier before a job, "
                                  "where tsr_open with stage_dir=DIR reads them")
    i.add_argument("sources", metavar="SRC", nargs="+")
    i.add_argument("--to", required=True, metavar="DIR", help="the stage (the stage_dir hint)")
    args = p.parse_args(argv)
    if args.action == "in":
        from . import stage_in  # imports this module: loaded on use
        try:
            return 1 if stage_in.run(args.sources, args.to) else 0
        except OSError as e:
            print(f"tessera stage in: cannot make {args.to}: {e.strerror}", file=sys.stderr)
            return 2
    if not os.path.isdir(args.stage_dir):
        print(f"tessera stage: {args.stage_dir} is not a directory", file=sys.stderr)
        return 2
    return 1 if recover(args.stage_dir) else 0


if __name__ == "__main__":
    sys.exit(main())
