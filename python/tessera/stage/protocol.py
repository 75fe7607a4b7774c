"""The staging protocol: markers, verified copies, recovery. What
`tessera stage recover STAGE_DIR` (command.py), `tessera convert` and
`tessera clean` share; staging inputs before a job (`tessera stage in`) is
in inputs.py.

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
  before removing the marker: the marker is removed;
- final path newer than the marker (a rerun or another job wrote it after the
  staged file was complete): never replaced; the staged file stays, reported,
  exit status 1. A recovered copy carries the marker's time as its
  modification time, as the library's drain does;
- a marker or staged file that is a symbolic link or belongs to another user
  is left alone and reported (a marker names the path to be written);
- a temporary `<name>.tessera-tmp` without a marker: its file never finished
  closing; removed, unless the process named in it (`<name>` ends in
  `-<pid>-<n>`) is still running on this node.

Nothing is created through a link: a link at `<final>.tessera-tmp` is
removed and the copy created exclusively (O_EXCL | O_NOFOLLOW).

A staged file may be a log directory (`stage_format=log`): its size is the sum
of its files, and instead of a copy it is converted by the `tessera-convert`
program (`tessera convert`; converter.py runs it), which writes, syncs and
verifies `<final>.tessera-tmp` against the log before the rename.

Markers are taken oldest first, so two staged versions of one final path land
in the order they were closed. Exit status: 0 when every marker was resolved,
1 when some staged file could not be placed (it stays, with its marker), 2 on a
usage error.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time

from .. import manifest
from .converter import ConvertError, convert_log

DEST_SUFFIX = ".tessera-dest"
TMP_SUFFIX = ".tessera-tmp"
CHUNK = 4 << 20


class StageError(Exception):
    """A staged file that cannot be placed; the message names it."""


def read_marker(marker: str) -> tuple:
    """(final path, size, manifest lines) from a marker; ValueError when it
    is torn. The manifest lines (checksum=, tessera/manifest.py) follow the
    two lines every marker has; "" when there are none."""
    with open(marker, encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    lines = text.split("\n")
    if len(lines) < 3 or not lines[0] or not text.endswith("\n"):
        raise ValueError(f"{marker}: not a complete marker")
    return lines[0], int(lines[1]), "\n".join(lines[2:])


def _digest(fh) -> tuple:
    h, n = hashlib.blake2b(digest_size=16), 0
    fh.seek(0)
    while True:
        b = fh.read(CHUNK)
        if not b:
            return h.digest(), n
        h.update(b)
        n += len(b)


def clear_name(path: str) -> None:
    """Remove whatever has the name path: a file, a link (never its target),
    a log directory a killed run left (src/tier/safe_names.c does the same)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def create_fresh(path: str):
    """A new file at path, opened w+b, created without following a link: a
    link planted at the name is removed, one planted again makes this fail."""
    clear_name(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    return os.fdopen(fd, "w+b")


def made_ns(staged: str) -> int:
    """When a staged file was complete: its marker's modification time (the
    marker is written just before the staged file takes its name)."""
    try:
        return os.lstat(staged + DEST_SUFFIX).st_mtime_ns
    except FileNotFoundError:
        return os.lstat(staged).st_mtime_ns


def refuse_if_newer(final: str, made: int) -> None:
    """StageError when final was written after made: a rerun or another job
    wrote it, and an older copy must not replace it."""
    try:
        have = os.lstat(final).st_mtime_ns
    except FileNotFoundError:
        return
    if have > made:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(have / 1e9))
        mine = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(made / 1e9))
        raise StageError(f"{final} is newer ({when}) than the copy completed at {mine}: "
                         "not replaced (remove one of the two, then run this again)")


def copy_verified(staged: str, final: str, made: int | None = None) -> int:
    """Copy staged to `<final>.tessera-tmp`, verify, rename into place; the
    staged file is untouched. With made (nanoseconds), the copy carries that
    modification time and never replaces a final file newer than it.
    Returns the bytes copied."""
    tmp = final + TMP_SUFFIX
    try:
        with open(staged, "rb") as src, create_fresh(tmp) as dst:
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
        if made is not None:
            os.utime(tmp, ns=(made, made), follow_symlinks=False)
            refuse_if_newer(final, made)
        os.replace(tmp, final)
        return n
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def staged_size(staged: str) -> int:
    """Bytes of a staged file, or of the files of a staged log directory."""
    if is_log(staged):
        return sum(os.path.getsize(os.path.join(staged, n)) for n in os.listdir(staged))
    return os.path.getsize(staged)


def is_log(staged: str) -> bool:
    """A staged log is a directory (stage_format=log); a link is neither."""
    try:
        return stat.S_ISDIR(os.lstat(staged).st_mode)
    except FileNotFoundError:
        return False


def place(staged: str, final: str) -> int:
    """Put staged at final: a copy, or the conversion of a log (the
    converter makes the same check against a newer final file)."""
    if is_log(staged):
        return convert_log(staged, final)
    return copy_verified(staged, final, made_ns(staged))


def not_ours(path: str) -> str | None:
    """Why path cannot be trusted as Tessera's own: a link, or an entry of
    another user (who could name any final path in a marker); None if absent
    or ours."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if st.st_uid != os.geteuid():
        return f"belongs to uid {st.st_uid}, not to this user"
    return None


def recover_one(marker: str, log) -> bool:
    """Resolve one marker; True when nothing of it is left to do."""
    staged = marker[: -len(DEST_SUFFIX)]
    for p in (marker, staged):
        why = not_ours(p)
        if why:
            log(f"ERROR: {p} {why}: left alone")
            return False
    try:
        final, size, frames = read_marker(marker)
    except (ValueError, OSError) as e:
        # A torn marker can only be one whose file never finished closing
        # (the marker is written before the staged file takes its name).
        if not os.path.lexists(staged):
            os.unlink(marker)
            log(f"removed torn marker {marker} (its file never closed)")
            return True
        log(f"ERROR: {e}; {staged} kept")
        return False
    if os.path.lexists(staged):
        have = staged_size(staged)
        if have != size:
            log(f"ERROR: {staged} holds {have} bytes, its marker says {size}; kept")
            return False
        try:
            n = place(staged, final)
            manifest.append(final, frames)  # its frames, now that it is complete
        except (OSError, StageError, ConvertError) as e:
            log(f"ERROR: {staged} -> {final}: {e}; staged copy kept")
            return False
        clear_name(staged)
        os.unlink(marker)
        log(f"recovered {final} ({n} bytes) from {staged}")
        return True
    if os.path.lexists(staged + TMP_SUFFIX):
        clear_name(staged + TMP_SUFFIX)
        os.unlink(marker)
        log(f"removed {staged}{TMP_SUFFIX} and its marker (the file never finished closing)")
        return True
    if os.path.exists(final):
        os.unlink(marker)
        log(f"{final} already in place; removed marker {marker}")
        return True
    log(f"ERROR: {marker}: neither {staged} nor {final} exists")
    return False


def writer_alive(name: str) -> bool:
    """True when the process that named a staged file may still write it:
    staged names end in `-<pid of the writer's rank 0>-<sequence>`
    (tsr__stage_name), and a stage is a node's own fast tier."""
    parts = name.rsplit("-", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(stage_dir: str, log) -> None:
    """Temporaries without a marker are files a killed job never finished
    closing: nothing was promised for them. Those of a live writer stay."""
    for n in sorted(os.listdir(stage_dir)):
        if not n.endswith(TMP_SUFFIX):
            continue
        staged = os.path.join(stage_dir, n[: -len(TMP_SUFFIX)])
        if os.path.lexists(staged + DEST_SUFFIX):
            continue  # its marker's turn decides
        if writer_alive(n[: -len(TMP_SUFFIX)]):
            log(f"kept {staged}{TMP_SUFFIX} (its writer is still running)")
            continue
        clear_name(staged + TMP_SUFFIX)
        log(f"removed {staged}{TMP_SUFFIX} (the file never finished closing)")


def recover(stage_dir: str, log=print) -> int:
    """Resolve every marker in stage_dir, then remove orphan temporaries; the
    number of markers left unresolved."""
    markers = [os.path.join(stage_dir, n) for n in os.listdir(stage_dir)
               if n.endswith(DEST_SUFFIX)]
    markers.sort(key=lambda m: (os.lstat(m).st_mtime_ns, m))
    failed = sum(0 if recover_one(m, log) else 1 for m in markers)
    remove_orphans(stage_dir, log)
    log(f"stage recover {stage_dir}: {len(markers)} marker(s), "
        f"{len(markers) - failed} resolved, {failed} left")
    return failed
