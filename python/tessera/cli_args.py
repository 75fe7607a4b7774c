"""Command-line values and failures in one sentence, for every `tessera`
command: argparse types that name the bound a value missed, and the text of
an exception as a reader wants it ("/nope: No such file or directory", not
"[Errno 2] No such file or directory: '/nope'")."""
from __future__ import annotations

import argparse
import json
import re


def whole(text: str, what: str, low: int = 1) -> int:
    """A whole number >= low, or ValueError naming `what`."""
    if not re.fullmatch(r"\s*[+-]?\d+\s*", text or "") or int(text) < low:
        raise ValueError(f"{what}: expected a whole number >= {low}, got '{text}'")
    return int(text)


def at_least(low: int):
    """An argparse type: a whole number >= low ("expected a whole number >= 1,
    got 0" after argparse's "argument --np:")."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got '{text}'") \
                from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value}")
        return value
    parse.__name__ = f"whole number >= {low}"
    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0 ("expected seconds > 0, got 'x'")."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got '{text}'") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text}")
    return value


def error_text(exc: BaseException) -> str:
    """One sentence for an exception: the file and the system's reason for an
    OSError, the place for bad JSON, the message otherwise."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg}, line {exc.lineno})"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
