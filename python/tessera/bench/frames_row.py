"""The demo's row for what output does beyond storing: the best strategy
writes the demo's history once more with `checksum=crc32` (per-frame sums,
docs/verify.md) and `reduce=` (T2 max and min, T mean over every output of
the run, docs/reductions.md). Then every history file is verified
(`tessera verify`) and every derived value is compared with NumPy over the
history frames, computed as docs/reductions.md defines it. The row puts its
blocked output time next to the same strategy's own run: one run each, no
spread (`tessera overhead --with-hints` repeats them for paired medians).
"""
from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np

from .. import verify

#: The statistics of the row: WRF's wrfxtrm has T2's extremes; T's mean is
#: the climate run's daily mean, over the run's outputs here.
STATS = (("T2", "max"), ("T2", "min"), ("T", "mean"))


def hints(best_hints: str, outputs: int) -> str:
    """The history files only (`wrfout*`): the restart files, which hold T2
    and T too, would otherwise be a stream of their own."""
    spec = "+".join(f"{v}/{op}@{outputs}" for v, op in STATS)
    return f"{best_hints},wrfout*:checksum=crc32:reduce={spec}"


def expected(stack: np.ndarray, op: str) -> np.ndarray:
    """docs/reductions.md's statistic: extremes exact, the mean as the double
    sum in frame order divided by the frames, cast once at the end."""
    if op == "max":
        return stack.max(axis=0)
    if op == "min":
        return stack.min(axis=0)
    total = stack[0].astype(np.float64)
    for s in stack[1:]:
        total = total + s.astype(np.float64)
    return (total / len(stack)).astype(stack.dtype)


def check(files: Path) -> tuple[bool, str]:
    """Every history file's sums and every derived value; (ok, what was checked)."""
    history = sorted(files.glob("wrfout_d01_*"))
    derived = sorted(files.glob("wrfxtrm_d01_*"))
    if not history or len(derived) != 1:
        return False, f"{len(history)} history and {len(derived)} derived files in {files}"
    problems = []
    for path in history:
        verify.verify_file(str(path), problems.append)
    bad = [p for p in problems if ": ok," not in p]
    if bad:
        return False, bad[0]
    frames = {}
    for path in history:
        with netCDF4.Dataset(path) as ds:
            ds.set_auto_maskandscale(False)
            for var in {v for v, _ in STATS}:
                frames.setdefault(var, []).append(ds.variables[var][0])
    with netCDF4.Dataset(derived[0]) as ds:
        ds.set_auto_maskandscale(False)
        for var, op in STATS:
            got = ds.variables[f"{var}{op.upper()}"][0]
            if not np.array_equal(got, expected(np.stack(frames[var]), op)):
                return False, f"{derived[0].name}: {var}{op.upper()} differs from NumPy's"
    return True, (f"every sum of the {len(history)} history file(s) verified; "
                  f"{', '.join(f'{v}{op.upper()}' for v, op in STATS)} equal NumPy's over "
                  f"their {len(history)} frame(s)")


def row_text(best: dict, rec: dict) -> str:
    """The row's two lines: blocked time with and without, and the check."""
    if rec["demo_status"] != "ok":
        return f"checksum=crc32 + reduce= ({best['strategy']}): {rec['demo_message']}"
    ratio = rec["output_blocked_s"] / best["output_blocked_s"] if best.get("output_blocked_s") else 0
    return (f"Verifiable frames and time statistics ({best['strategy']}, checksum=crc32 and "
            f"reduce= T2 max/min, T mean): output blocked {rec['output_blocked_s']:.3f} s against "
            f"{best['output_blocked_s']:.3f} s without, {ratio:.2f}x (one run each, no spread: "
            f"`tessera overhead --with-hints` repeats them)\n  {rec['frames_check']}")
