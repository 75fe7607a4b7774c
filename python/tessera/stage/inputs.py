"""`tessera stage in SRC... --to DIR`: put a job's input files on the fast
tier before the job starts (docs/staging.md, "Stage-in of inputs").

Each source is copied to `<DIR>/<base>.<hash>.in`, the name under which
`tsr_open` with the hint `stage_dir=DIR` looks for its copy
(src/tier/stage_in.c): base name and 64-bit FNV-1a hash (16 hex digits) of the
source's resolved path. The copy is written as `<copy>.tessera-tmp`, synced,
read back and compared (size and checksum), renamed into place, and given the
source's modification time: a later `tsr_open` finds the same size and time
and reads this copy instead of copying again. A copy already there with the
source's size and time is kept (the library's quick check, like rsync's).
"""
from __future__ import annotations

import os

from .protocol import StageError, copy_verified

#: src/tier/stage_in.c's offset basis: one digit short of FNV-1a's published
#: 14695981039346656037. Kept as it is: the names only need to agree.
FNV_OFFSET = 1469598103934665603
FNV_PRIME = 1099511628211


def path_hash(path: str) -> int:
    """FNV-1a (with the library's offset basis) over the path's bytes, as
    src/tier/stage_in.c computes it."""
    h = FNV_OFFSET
    for b in os.fsencode(path):
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def staged_name(src: str, stage_dir: str) -> str:
    """Where tsr_open with stage_dir=stage_dir reads its copy of src."""
    real = os.path.realpath(src)
    return os.path.join(stage_dir, f"{os.path.basename(real)}.{path_hash(real):016x}.in")


def same_version(a: os.stat_result, b: os.stat_result) -> bool:
    return a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


def stage_in(src: str, stage_dir: str) -> tuple:
    """Copy src into stage_dir unless an up-to-date copy is there.
    Returns (path of the copy, bytes copied; 0 when the copy was reused).
    OSError or StageError (message naming the file) when it cannot."""
    st = os.stat(src)
    if not os.path.isfile(src):
        raise StageError(f"{src}: not a regular file")
    local = staged_name(src, stage_dir)
    try:
        if same_version(st, os.stat(local)):
            return local, 0
    except FileNotFoundError:
        pass
    n = copy_verified(src, local)
    if n != st.st_size:
        raise StageError(f"{src} changed while it was copied ({n} of {st.st_size} bytes)")
    # The source's times: what the library's quick check compares.
    os.utime(local, ns=(st.st_atime_ns, st.st_mtime_ns))
    return local, n


def run(sources: list, stage_dir: str, log=print) -> int:
    """Stage every source; the number that failed (each reported)."""
    os.makedirs(stage_dir, exist_ok=True)
    failed = 0
    for src in sources:
        try:
            local, n = stage_in(src, stage_dir)
        except (OSError, StageError) as e:
            log(f"ERROR: {src}: {e.strerror if isinstance(e, OSError) and e.strerror else e}")
            failed += 1
            continue
        log(f"{src} -> {local}: " + (f"copied {n} bytes, verified" if n else
                                      "up to date (same size and time), kept"))
    return failed
