"""ExPBB-style rules: read a run's statistics and say which knobs to try first.

The rules do not decide anything on their own; they order the coordinate
search so that the moves most likely to help are measured first, which matters
when the budget is a few dozen trials. Every move they suggest is still tried
and kept only if it measures faster.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..strategies import reserves_servers
from .space import MIB, SMALL_FILE_RATIO, human_size

#: Requests below this size are "small" for a parallel file system.
SMALL_REQUEST = MIB

#: Share of the model's blocked time in small files above which hybrid
#: placement is tried first (ExPBB: a 22 KB namelist took most of the time).
SMALL_FILES_SHARE = 0.5


@dataclass(frozen=True)
class Advice:
    knob: str
    direction: int   # +1 larger value, -1 smaller value, 0 any other value
    reason: str


def diagnose(stats: dict, strategy: str | None) -> list:
    """Advice for the next moves from one run's statistics summary
    (runner.summarize_stats). Empty when the run wrote no record."""
    if not stats:
        return []
    # Hybrid placement first: when it applies, it is the ExPBB case.
    out = _hybrid(stats)
    writes = stats.get("writes", 0)
    if writes > 0:
        mean_req = stats.get("bytes_written", 0) / writes
        small_share = stats.get("small_writes", 0) / writes
        if mean_req < SMALL_REQUEST or small_share > 0.5:
            why = f"small requests (mean {human_size(mean_req)}, {small_share:.0%} < 1 MiB)"
            # Larger collective buffers and rank buffers merge requests; fewer
            # aggregators give each writer a larger contiguous region.
            out += [Advice("cb_buffer_size", +1, why), Advice("buffer_bytes", +1, why),
                    Advice("slab_bytes", +1, why), Advice("alignment", +1, why),
                    Advice("aggregators", -1, why), Advice("cb_nodes", -1, why)]
        misaligned = stats.get("not_aligned", 0) / writes
        if misaligned > 0.5:
            why = f"{misaligned:.0%} of requests not aligned to the stripe"
            out += [Advice("alignment", +1, why), Advice("striping_unit", 0, why)]
    ranks = stats.get("model_ranks", 0)
    writers = stats.get("writers", 0)
    wmax, wmean = stats.get("writer_max", 0.0), stats.get("writer_mean", 0.0)
    blocked = stats.get("blocked_max", 0.0)
    busy_one = (writers == 1 and ranks > 1) or (wmean > 0 and wmax > 2.0 * wmean)
    if busy_one and wmax > 0.3 * blocked:
        why = (f"one busy writer ({writers} writer(s), longest {wmax:.2f} s vs mean "
               f"{wmean:.2f} s)")
        out += [Advice("aggregators", +1, why), Advice("cb_nodes", +1, why),
                Advice("io_tasks", +1, why), Advice("io_groups", +1, why)]
    if blocked > 0 and blocked > 1.5 * wmax:
        why = f"model blocked {blocked:.2f} s, writers busy only {wmax:.2f} s"
        if reserves_servers(strategy):
            # Servers still busy with earlier frames: add a group or buffer more.
            out += [Advice("io_groups", +1, why), Advice("buffer_bytes", +1, why),
                    Advice("io_tasks", +1, why)]
        else:
            out += [Advice("buffer_bytes", +1, why), Advice("aggregators", +1, why)]
    return out


def _hybrid(stats: dict) -> list:
    """Small files dominating the blocked time: place them on the final file
    system and stage the large ones (`stage_min_bytes` above the small files;
    with_value turns the stage on with it). Whether the small files suffer from
    the stage or the large ones gain from it, both point to the same move."""
    blocked = stats.get("blocked_max", 0.0)
    small = stats.get("small_blocked", 0.0)
    if stats.get("small_files", 0) < 1 or stats.get("small_files", 0) >= stats.get("files", 0):
        return []
    if blocked <= 0 or small <= SMALL_FILES_SHARE * blocked:
        return []
    why = (f"small files dominate the time ({stats['small_files']} file(s) of at most "
           f"{human_size(stats.get('small_file_bytes', 0))}, at least {SMALL_FILE_RATIO}x "
           f"smaller than the largest, {small / blocked:.0%} of the blocked time)")
    return [Advice("stage_min_bytes", +1, why)]
