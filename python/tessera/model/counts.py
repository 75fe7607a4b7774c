"""What the library's statistics must show for one frame, by the model's
geometry: writers, write requests (TSR_WRITES) and rearranged bytes.

These are exact counts, not timings, so a test can run tessera-bench with
TESSERA_STATS_FILE and hold the model's picture of each strategy's data
movement (the slabs, the tiles, who owns what) to the C code's: if a
strategy changes how it moves data, the test fails before the model's
predictions silently drift.
"""
from __future__ import annotations

from .case import Case, process_grid
from .strategy import Strategy


def library_counts(case: Case, strat: Strategy, ranks: int) -> dict:
    """{'writers', 'writes', 'rearranged_bytes'} of one frame, as the
    statistics record of a file with one frame reports them (each
    strategy's row counts its own)."""
    px, py = process_grid(case, ranks)
    return strat.row().counts(case, strat, ranks, px, py)
