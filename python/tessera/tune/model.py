"""`tessera tune --model PROFILE`: the cost model orders the tuner's search.

The model cannot replace the measurements (the machine is noisy, and some
knobs — cb_buffer_size, striping_unit, alignment, exchange, stride — are not
in it), but it can say which candidates to measure first, so the search meets
the winner in fewer trials:

- the strategy pass tries the strategies in order of predicted cost, each
  starting from the knob values the model predicts best (a coordinate descent
  on the model alone, moving only for a predicted gain of at least --min-gain);
- the coordinate search measures its queued moves in order of predicted cost
  (a stable sort: moves the model cannot tell apart keep the rules' order).

The case is the command's own tessera-bench options (--nx, --ny, --nz,
--steps, --output-every, --frames-per-file, --schema; the bench's defaults
otherwise) and the compute per step the default run measured (its wall time
less its blocked time). docs/model.md and docs/tuning.md describe it.
"""
from __future__ import annotations

import argparse
import math

from ..model.case import bench_case, hints_deflate
from ..model.deflate import NoDeflateRate
from ..model.predict import predict
from ..model.profile import load as load_profile
from ..model.strategy import Strategy
from .space import SpaceError

#: tessera-bench's defaults (apps/bench/options.c, defaults()).
BENCH_DEFAULTS = {"nx": 128, "ny": 128, "nz": 20, "steps": 20, "output_every": 5,
                  "frames_per_file": 1, "schema": None}


def bench_options(command: list) -> dict:
    """The case options of a tessera-bench command line (unknown words ignored)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for k, v in BENCH_DEFAULTS.items():
        p.add_argument("--" + k.replace("_", "-"), type=int if v is not None else str, default=v)
    p.add_argument("--hints", default=None)
    known, _ = p.parse_known_args([a for a in command if a])
    return vars(known)


def strategy_of(space, cfg) -> Strategy:
    """The model's view of a tuner configuration (knobs it has no term for are
    left out: they predict alike)."""
    if cfg.is_baseline():
        return Strategy.parse(cfg.baseline or "strategy=direct")
    return Strategy(name=cfg.strategy,
                    aggregators=int(cfg.get("aggregators", 0) or 0),
                    io_groups=int(cfg.get("io_groups", 1)),
                    io_tasks=int(cfg.get("io_tasks", 1)),
                    backend=cfg.get("backend") or "",
                    slab_bytes=int(cfg.get("slab_bytes", 64 << 20)),
                    buffer_bytes=int(cfg.get("buffer_bytes", 128 << 20)),
                    cb_nodes=int(cfg.get("cb_nodes") or -1))


class ModelOrder:
    """Predicted cost of tuner configurations, for ordering. `predictor`
    (space, cfg) -> seconds replaces the model (tests use a known function)."""

    def __init__(self, profile=None, command=(), objective: str = "wall", predictor=None):
        self.profile, self.command, self.objective = profile, list(command), objective
        self.predictor = predictor
        self.case, self.ranks = None, 1
        self.command_hints = ""
        self.cache = {}

    def bind(self, shape, default_run) -> None:
        """The case and process count, once the default run has shown them."""
        self.ranks = max(1, shape.ranks) + max(0, shape.server_ranks)
        if self.predictor is not None:
            return
        o = bench_options(self.command)
        self.command_hints = o["hints"] or ""
        case = bench_case(o["nx"], o["ny"], o["nz"], o["steps"], o["output_every"],
                          o["frames_per_file"], o["schema"])
        m = default_run.metrics if default_run else {}
        compute = max(0.0, m.get("wall_s", 0.0) - m.get("blocked_s", m.get("wall_s", 0.0)))
        if o["steps"] > 0 and compute > 0:
            case = case.with_(step_s=compute / o["steps"], step_ranks=max(1, shape.ranks))
        self.case = case

    def predicted(self, space, cfg) -> float:
        key = space.hints(cfg)
        if key not in self.cache:
            self.cache[key] = self._predict(space, cfg)
        return self.cache[key]

    def _predict(self, space, cfg) -> float:
        if self.predictor is not None:
            return float(self.predictor(space, cfg))
        if self.case is None:
            return math.inf
        # Compression comes with the trial's hints (--fixed format=netcdf4:deflate=1,
        # or the bench command's own --hints): the writers pay for it.
        level, shuffle = hints_deflate(":".join(filter(None, (self.command_hints,
                                                               space.hints(cfg)))))
        case = self.case.with_(deflate=level, shuffle=shuffle) if level else self.case
        try:
            p = predict(case, strategy_of(space, cfg), self.profile, self.ranks)
        except NoDeflateRate as exc:
            raise SpaceError(f"--model: {exc}") from None
        except (ValueError, ZeroDivisionError):
            return math.inf              # e.g. servers needing more processes than the run has
        return p.blocked_s if self.objective == "blocked" else p.wall_s

    def order(self, space, items: list, cfg_of=lambda x: x) -> list:
        """items sorted by predicted cost of cfg_of(item); ties keep their order."""
        return sorted(items, key=lambda x: self.predicted(space, cfg_of(x)))

    def best_start(self, space, cfg, min_gain: float):
        """cfg moved, knob by knob, to the values the model predicts best."""
        best, cost = cfg, self.predicted(space, cfg)
        improved, seen = True, {space.hints(cfg)}
        while improved:
            improved = False
            for knob in space.knobs_for(cfg.strategy):
                for value in space.knobs[knob].values:
                    cand = space.with_value(best, knob, value)
                    key = space.hints(cand)
                    if key in seen or not space.valid(cand):
                        continue
                    c = self.predicted(space, cand)
                    # A strict gain, so each move lowers the cost: the walk ends.
                    if c < cost and cost - c >= min_gain * abs(cost):
                        seen.add(key)
                        best, cost, improved = cand, c, True
        return best


def make_order(profile_name: str, command: list, objective: str) -> ModelOrder:
    """The ModelOrder for --model PROFILE (a profile name or JSON file)."""
    try:
        profile = load_profile(profile_name)
    except (OSError, ValueError, KeyError) as exc:
        raise SpaceError(f"--model {profile_name}: cannot load the profile ({exc})") from None
    return ModelOrder(profile, command, objective)


def trials_to_winner(session: dict, tol: float = 0.02):
    """How many trials a saved session (session.json) had measured when it
    first measured a configuration as good as the one it ended with (its
    finals' best, `result.candidate`): search median within `tol` (the
    tuner's --min-gain) of the candidate's, so knobs that make no difference
    do not count as a later find. None when nothing qualifies. The figure
    compared between a search ordered by the model and one that is not."""
    import statistics

    res = session.get("result") or {}
    metric, larger = res.get("objective_metric"), res.get("larger_is_better", False)
    cand = res.get("candidate") or {}

    def median(t):
        v = [r["metrics"][metric] for r in t.get("runs", [])
             if r.get("status") == "ok" and metric in r.get("metrics", {})]
        return statistics.median(v) if v else None

    trials = session.get("trials", [])
    best = next((median(t) for t in trials if t["key"] == cand.get("hints")), None)
    if best is None:
        return None
    for i, t in enumerate(trials, 1):
        m = median(t)
        if m is not None and (m >= best * (1 - tol) if larger else m <= best * (1 + tol)):
            return i
    return None
