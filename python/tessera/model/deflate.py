"""Compression in the cost model: who compresses how many bytes of a frame.

A NetCDF-4 file with `deflate=N` (hints `format=netcdf4:deflate=N[:shuffle=0]`)
is compressed chunk by chunk by whoever owns the chunk when it is written,
and the default chunk is one horizontal level (docs/hints.md, `chunks=auto`).
So a writer compresses whole levels: with W writers sharing a variable of L
levels the busiest compresses ceil(L / W) of them, and a 2-D field (one
chunk) is compressed by one writer alone. That is CPU work on the writer,
priced by the profile's `deflate_bw` (input bytes per second of one core at
deflate level 1, beyond writing the same bytes uncompressed) and stretched
by CPU sharing like every other CPU term (amounts.Amounts.loaded).

One assumption, stated in docs/model.md: every level N >= 1 is priced at the
profile's rate (measured at the level `calibrate --deflate` was given, level
1 by default), and with or without shuffle. The calibration measures the
library's default, which shuffles before deflating (the transpose is in the
rate); `shuffle=0` deflates more slowly on model fields (1.3-1.45x on the
bench's, apps/bench/README.md "Formats"), which the model does not price.
"""
from __future__ import annotations

import math

from .amounts import Amounts
from .case import Case, Var, case_from_record, hints_deflate


class NoDeflateRate(ValueError):
    """The profile has no deflate_bw: a compressed case cannot be priced."""


def require(case: Case, profile) -> None:
    """Refuse a compressed case on a profile that does not know what
    compression costs, rather than price it as free."""
    if case.deflate > 0 and float(profile.values.get("deflate_bw", 0.0) or 0.0) <= 0:
        raise NoDeflateRate(
            f"profile {profile.name} has no deflate_bw (compression throughput per writer), so "
            f"a case with deflate={case.deflate} cannot be priced; measure it with "
            f"`tessera model calibrate --only-deflate --base {profile.name} --out FILE.json` "
            "on the machine (or add deflate_bw, in B/s, to the profile's values)")


def levels(v: Var) -> int:
    """Chunks of one frame of `v` with the default chunking: one per
    horizontal level (every dimension before the last two), one for a 2-D
    field or a variable of fewer dimensions."""
    return math.prod(v.shape[:-2]) if len(v.shape) > 2 else 1


def busiest_bytes(case: Case, writers: int, variables=None) -> float:
    """Bytes of one frame the busiest of `writers` compresses: ceil(L / W)
    whole levels of every variable (the same writer taken as busiest for all,
    an upper bound: HDF5 gives each chunk to one owner)."""
    w = max(1, writers)
    total = 0.0
    for v in case.vars if variables is None else variables:
        n = levels(v)
        total += -(-n // w) * (v.bytes / n)
    return total


def compress(case: Case, nbytes: float):
    """Amounts of compressing `nbytes` of input (no amounts when the case is
    uncompressed, so uncompressed predictions do not change)."""
    a = Amounts()
    if case.deflate > 0 and nbytes > 0:
        a.add("deflate_bw", nbytes)
    return a


def whole_levels(case: Case, writers: int):
    """Amounts of the busiest of `writers` that share every chunk of the frame."""
    return compress(case, busiest_bytes(case, writers) if case.deflate > 0 else 0.0)


def measure(records: list) -> float | None:
    """deflate_bw from serial runs on one process with and without
    compression (`format=netcdf4` and `format=netcdf4:deflate=N`, same case):
    the input bytes over the extra blocked time, the fastest run of each
    (on a shared machine, the one least disturbed). None without such a pair
    or when compression measured no slower."""
    best = {}
    for r in records:
        if not str(r.get("hints", "")).startswith("strategy=serial"):
            continue
        if int(r["ranks"]["model"]) + int(r["ranks"]["io"]) != 1:
            continue
        level, _ = hints_deflate(r.get("hints", ""))
        fmt = "netcdf4" in str(r.get("hints", ""))
        if not fmt:
            continue
        key = level > 0
        t = float(r["output_blocked_s"])
        if key not in best or t < best[key][0]:
            best[key] = (t, r)
    if True not in best or False not in best:
        return None
    extra = best[True][0] - best[False][0]
    if extra <= 0:
        return None
    case = case_from_record(best[True][1])
    return case.frame_bytes() * case.outputs / extra
