"""`tessera clean [--dry-run] DIR...`: remove what interrupted runs left behind.

Tessera writes every file as `<path>.tessera-tmp` (a directory for a staged
log) and renames it into place
only when it is complete, and holds an advisory lock on `<path>.tessera-lock`
while the file is open (docs/architecture.md, "Files appear atomically"). A
job that was killed leaves these two kinds of files and nothing under a final
name. This command removes them, except where a running job still holds the
lock of the same path: its temporary is being written now. It also removes
the trash names `<path>.tessera-old-<pid>-<n>` under which a Zarr store that
a run replaced waits for its background removal (docs/zarr.md); a killed run
can leave one. Nothing reads a trash name, so it goes even while a job runs.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import sys

from .stage.protocol import clear_name

TMP_SUFFIX = ".tessera-tmp"
LOCK_SUFFIX = ".tessera-lock"
TRASH_INFIX = ".tessera-old-"  # src/backend/zarr_fs.h: a replaced store being removed


def lock_held(lock_path: str) -> bool:
    """True when another process holds the fcntl lock Tessera takes on lock_path."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False  # absent, or a link: not a lock Tessera holds
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


def final_path(name: str) -> str:
    """The path a temporary or lock file belongs to (a split piece's lock is
    the base path's)."""
    for suffix in (TMP_SUFFIX, LOCK_SUFFIX):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    if TRASH_INFIX in name:
        return name[: name.rindex(TRASH_INFIX)]
    return name


def leftovers(directory: str) -> list[tuple[str, bool]]:
    """(path, in use) for every temporary, lock file and trash name in directory."""
    out = []
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if TRASH_INFIX in entry and not entry.endswith((TMP_SUFFIX, LOCK_SUFFIX)):
            out.append((path, False))
            continue
        if not entry.endswith((TMP_SUFFIX, LOCK_SUFFIX)):
            continue
        base = final_path(path)
        candidates = [base + LOCK_SUFFIX]
        head, _, tail = base.rpartition(".")
        if tail.isdigit() and len(tail) >= 4:  # a split piece: the lock is the base path's
            candidates.append(head + LOCK_SUFFIX)
        out.append((path, any(lock_held(c) for c in candidates)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tessera clean", description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", metavar="DIR", help="output directories to clean")
    p.add_argument("-n", "--dry-run", action="store_true", help="list, remove nothing")
    args = p.parse_args(argv)
    removed = kept = 0
    for d in args.dirs:
        if not os.path.isdir(d):
            print(f"tessera clean: {d}: not a directory", file=sys.stderr)
            return 2
        for path, in_use in leftovers(d):
            if in_use:
                print(f"kept    {path} (a running job holds its lock)")
                kept += 1
                continue
            print(f"{'would remove' if args.dry_run else 'removed'} {path}")
            if not args.dry_run:
                clear_name(path)  # a log temporary is a directory; a link goes, not its target
            removed += 1
    print(f"{removed} {'to remove' if args.dry_run else 'removed'}, {kept} in use")
    return 0


if __name__ == "__main__":
    sys.exit(main())
