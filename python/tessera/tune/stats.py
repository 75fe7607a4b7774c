"""How sure `tessera tune` is: spread of repeated runs and the interval of a ratio.

A claim "configuration X is R times faster than the default" is only as good
as the runs behind it. The finals measure the default and each finalist with
the same number of interleaved runs; from those runs:

- each side is summarised by its median and its spread (min, max, and the
  interquartile range);
- the ratio of medians (default cost / winner cost, so > 1 means the winner
  is better whatever the objective) gets a percentile bootstrap interval:
  both samples are resampled with replacement, many times, and the ratio of
  the resampled medians is taken each time;
- the interval's level is corrected for the number of finalists compared with
  the default (Bonferroni): picking the best of k noisy candidates otherwise
  finds a "winner" in pure noise far more often than the nominal 5 %.

A winner is named only when the whole interval lies above 1.0. The resampling
is seeded from the measured values, so a resumed session (which replays the
same values) reaches the same verdict.
"""
from __future__ import annotations

import hashlib
import math
import random
import statistics
from dataclasses import dataclass

#: Family-wise confidence of the verdict.
CONFIDENCE = 0.95
#: Bootstrap resamples; percentiles at 0.1 % resolution need a few thousand.
RESAMPLES = 4000
#: Fewest runs per side that give a spread at all.
MIN_RUNS = 3


def spread(values: list) -> dict:
    """Median and spread of one configuration's runs (empty dict without runs)."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return {}
    out = {"n": len(vals), "median": statistics.median(vals), "min": vals[0], "max": vals[-1]}
    if len(vals) >= 2:
        q = statistics.quantiles(vals, n=4, method="inclusive")
        out["q1"], out["q3"] = q[0], q[2]
    return out


def _seed(*samples) -> int:
    text = "|".join(",".join(f"{v:.17g}" for v in s) for s in samples)
    return int(hashlib.sha256(text.encode()).hexdigest()[:16], 16)


def _percentile(sorted_vals: list, p: float) -> float:
    """Linear-interpolated percentile, p in [0, 1]."""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    x = p * (len(sorted_vals) - 1)
    lo = math.floor(x)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (x - lo)


def ratio_interval(default_costs: list, winner_costs: list, level: float,
                   resamples: int = RESAMPLES) -> tuple:
    """Percentile-bootstrap interval of median(default) / median(winner).

    Costs are "smaller is better" (seconds, or 1/bandwidth). Returns (lo, hi);
    (nan, nan) when either side has fewer than MIN_RUNS finite positive costs.
    """
    d = [c for c in default_costs if c is not None and math.isfinite(c) and c > 0]
    w = [c for c in winner_costs if c is not None and math.isfinite(c) and c > 0]
    if len(d) < MIN_RUNS or len(w) < MIN_RUNS:
        return (math.nan, math.nan)
    rng = random.Random(_seed(d, w))
    ratios = []
    for _ in range(resamples):
        md = statistics.median(rng.choices(d, k=len(d)))
        mw = statistics.median(rng.choices(w, k=len(w)))
        ratios.append(md / mw)
    ratios.sort()
    tail = (1.0 - level) / 2.0
    return (_percentile(ratios, tail), _percentile(ratios, 1.0 - tail))


@dataclass
class Verdict:
    """The answer of the finals."""
    ratio: float | None        # median(default cost) / median(candidate cost)
    lo: float                  # interval of the ratio (nan when not estimable)
    hi: float
    level: float               # confidence of this one interval (after correction)
    comparisons: int           # finalists compared with the default
    measurable: bool           # the whole interval lies above 1.0

    @property
    def estimable(self) -> bool:
        return not (math.isnan(self.lo) or math.isnan(self.hi))


def decide(default_costs: list, candidate_costs: list, comparisons: int,
           confidence: float = CONFIDENCE) -> Verdict:
    """Is the candidate measurably better than the default?"""
    comparisons = max(1, comparisons)
    level = 1.0 - (1.0 - confidence) / comparisons
    d = [c for c in default_costs if c is not None and math.isfinite(c)]
    w = [c for c in candidate_costs if c is not None and math.isfinite(c)]
    ratio = None
    if d and w and statistics.median(w) > 0:
        ratio = statistics.median(d) / statistics.median(w)
    lo, hi = ratio_interval(d, w, level)
    measurable = ratio is not None and not math.isnan(lo) and lo > 1.0
    return Verdict(ratio, lo, hi, level, comparisons, measurable)
