"""Output paths of the `tessera` commands, checked before any work starts.

`demo`, `overhead` and `formats` run MPI jobs for minutes before they write
their results, and `stats --png` prints its table first: an output path they
cannot write must be refused at once, with one sentence naming it, not after
the runs with a traceback. Every message reads `tessera CMD: cannot write
PATH: <reason>` and the commands exit 2, as for other bad arguments.

The checks ask the file system (create the directory, stat the parent) rather
than only compare permission bits, which root ignores; a write that still
fails later (a full disk) is reported the same way by `write_text`.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


class OutputPathError(Exception):
    """An output that cannot be written; the message names the path."""


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _fail(path, e: OSError):
    raise OutputPathError(f"cannot write {path}: {_reason(e)}") from None


def _writable_dir(path) -> None:
    """Refuse a directory that exists but cannot take new files (read-only
    file system, or no permission for a user other than root)."""
    if not os.access(path, os.W_OK | os.X_OK):
        _fail(path, PermissionError(13, "Permission denied"))


def output_dir(path) -> Path:
    """Create directory @p path (and its parents) if needed; OutputPathError
    when it cannot be made or written into."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _fail(path, e)
    _writable_dir(p)
    return p


def output_file(path) -> Path:
    """Check that file @p path can be written: its directory exists and takes
    files, and the path is not a directory. Creates nothing."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        st = os.stat(parent)
    except OSError as e:
        _fail(path, e)
    if not stat.S_ISDIR(st.st_mode):
        _fail(path, NotADirectoryError(20, f"{parent} is not a directory"))
    _writable_dir(parent)
    if p.is_dir():
        _fail(path, IsADirectoryError(21, "Is a directory"))
    if p.exists() and not os.access(p, os.W_OK):
        _fail(path, PermissionError(13, "Permission denied"))
    return p


def write_text(path, text: str) -> None:
    """Path.write_text, with a failure as OutputPathError."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        _fail(path, e)


def refuse(command: str, err: OutputPathError) -> int:
    """Print the one sentence on stderr; the exit status of a bad argument."""
    print(f"tessera {command}: {err}", file=sys.stderr)
    return 2
