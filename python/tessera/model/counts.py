"""What the library's statistics must show for one frame, by the model's
geometry: writers, write requests (TSR_WRITES) and rearranged bytes.

These are exact counts, not timings, so a test can run tessera-bench with
TESSERA_STATS_FILE and hold the model's picture of each strategy's data
movement (the slabs, the tiles, who owns what) to the C code's: if a
strategy changes how it moves data, the test fails before the model's
predictions silently drift.
"""
from __future__ import annotations

import math

from .case import Case, Var, boxes, piece_rows, process_grid, slab_count, tile_range
from .strategy import Strategy, aggregator_count


def tile_box(var: Var, rank: int, px: int, py: int) -> tuple:
    """((y0, y1), (x0, x1)) of rank's tile of var (row-major rank order)."""
    ys, yc = tile_range(var.shape[-2], py, rank // px, var.ystag)
    xs, xc = tile_range(var.shape[-1], px, rank % px, var.xstag)
    return (ys, ys + yc), (xs, xs + xc)


def _count_in(h: int, period: int, a: int, b: int) -> int:
    """How many r in [0, h) have r % period in [a, b)."""
    return (h // period) * (b - a) + min(max(h % period - a, 0), b - a)


def overlap(var: Var, npieces: int, p: int, rank: int, px: int, py: int) -> int:
    """Elements of piece p of var that lie in rank's tile."""
    nd = len(var.shape)
    k, lo, hi, _ = piece_rows(var, npieces, p)
    (y0, y1), (x0, x1) = tile_box(var, rank, px, py)
    ny, nx = var.shape[-2], var.shape[-1]
    if k <= nd - 2:                    # whole (y, x) planes
        return (hi - lo) * math.prod(var.shape[k:nd - 2]) * (y1 - y0) * (x1 - x0)
    if k == nd - 1:                    # rows of x
        return (_count_in(hi, ny, y0, y1) - _count_in(lo, ny, y0, y1)) * (x1 - x0)
    return sum(1 for i in range(lo, hi)   # single points (only for absurd piece counts)
               if x0 <= i % nx < x1 and y0 <= (i // nx) % ny < y1)


def library_counts(case: Case, strat: Strategy, ranks: int) -> dict:
    """{'writers', 'writes', 'rearranged_bytes'} of one frame, as the
    statistics record of a file with one frame reports them."""
    px, py = process_grid(case, ranks)
    dec, rep = case.decomposed(), case.replicated()
    if strat.name == "serial":
        writes = sum(boxes(v, slab_count(v.shape, max(1, strat.slab_bytes // v.esize)))
                      for v in dec)
        moved = sum(v.bytes - overlap(v, 1, 0, 0, px, py) * v.esize for v in dec)
        return {"writers": 1, "writes": writes + len(rep), "rearranged_bytes": moved}
    if strat.name == "aggregate":
        n = aggregator_count(strat, ranks)
        writers = [i * ranks // n for i in range(n)]
        writes, moved = len(rep), 0
        for v in dec:
            writes += boxes(v, n)
            kept = sum(overlap(v, n, p, writers[p], px, py) for p in range(n))
            moved += v.bytes - kept * v.esize
        return {"writers": n, "writes": writes, "rearranged_bytes": moved}
    if strat.name == "direct":
        nonempty = sum(1 for v in dec for r in range(ranks)
                       if all(b > a for a, b in tile_box(v, r, px, py)))
        return {"writers": ranks, "writes": nonempty + len(rep), "rearranged_bytes": 0}
    if strat.name == "split":
        return {"writers": ranks, "writes": ranks * len(case.vars), "rearranged_bytes": 0}
    raise ValueError(f"no library counts for {strat.name}")
