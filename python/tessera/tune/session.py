"""What a tuning session has measured: trials, runs, the budget, resume.

A *trial* is one configuration (one TESSERA_HINTS string); it has one or more
*runs* of the command. `--budget N` bounds the number of trials (the default
configuration counts as one); repeats of the incumbent and of the finalists are
extra runs of trials already counted.

Resume works by replay: the search is deterministic given the figures it
receives, so a resumed session runs the same search from the start and answers
every run the saved session already holds from the file instead of running the
command. It continues with real runs exactly where the interruption happened.
"""
from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import dataclass, field

from .runner import OBJECTIVES, RunResult

SESSION_VERSION = 1


class BudgetExhausted(Exception):
    """No trials left in --budget."""


def objective_value(result: RunResult, metric: str):
    if result.status != "ok":
        return None
    return result.metrics.get(metric)


@dataclass
class Trial:
    id: int
    key: str                 # the TESSERA_HINTS text: one trial per distinct text
    label: str               # short form for tables
    strategy: str | None     # None for the default configuration
    settings: list           # [[knob, value], ...]
    phase: str               # default | strategies | search | <strategy> search
    reason: str = ""         # why the search tried it (rule or coordinate step)
    runs: list = field(default_factory=list)     # search runs (RunResult)
    finals: list = field(default_factory=list)   # final comparison runs (RunResult)

    def values(self, metric: str, final: bool = False) -> list:
        runs = self.finals if final else self.runs
        return [v for v in (objective_value(r, metric) for r in runs) if v is not None]

    def median(self, metric: str, final: bool = False):
        vals = self.values(metric, final)
        return statistics.median(vals) if vals else None

    def failed(self) -> bool:
        """Every run so far failed: the configuration is dropped from the search."""
        return bool(self.runs) and all(r.status != "ok" for r in self.runs)

    def status(self) -> str:
        if not self.runs:
            return "pending"
        if self.failed():
            return self.runs[-1].status
        return "ok"

    def error(self) -> str:
        for r in reversed(self.runs + self.finals):
            if r.error:
                return r.error
        return ""

    def to_dict(self) -> dict:
        return {"id": self.id, "key": self.key, "label": self.label,
                "strategy": self.strategy, "settings": self.settings, "phase": self.phase,
                "reason": self.reason, "runs": [r.to_dict() for r in self.runs],
                "finals": [r.to_dict() for r in self.finals]}

    @classmethod
    def from_dict(cls, d: dict) -> "Trial":
        t = cls(d["id"], d["key"], d.get("label", d["key"]), d.get("strategy"),
                d.get("settings", []), d.get("phase", ""), d.get("reason", ""))
        t.runs = [RunResult.from_dict(r) for r in d.get("runs", [])]
        t.finals = [RunResult.from_dict(r) for r in d.get("finals", [])]
        return t


class Session:
    """Trials in the order they were first tried, saved after every run."""

    def __init__(self, path: str, meta: dict):
        self.path = path
        self.meta = meta
        self.trials: list = []
        self.by_key: dict = {}
        self.log: list = []       # [(trial id, kind), ...] every run in order, for plots
        self.result: dict = {}
        self.interrupted = False

    def add(self, trial: Trial) -> None:
        self.trials.append(trial)
        self.by_key[trial.key] = trial

    def save(self) -> None:
        data = {"tessera_tune_session": SESSION_VERSION, "meta": self.meta,
                "trials": [t.to_dict() for t in self.trials], "log": self.log,
                "result": self.result, "interrupted": self.interrupted,
                "saved": time.strftime("%Y-%m-%dT%H:%M:%S")}
        tmp = f"{self.path}.tmp"
        with open(tmp, "w") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, self.path)  # atomic: a kill mid-save never loses the old file

    @classmethod
    def load(cls, path: str) -> "Session":
        with open(path) as fh:
            data = json.load(fh)
        if data.get("tessera_tune_session") != SESSION_VERSION:
            raise ValueError(f"{path}: not a tessera tune session file (version "
                             f"{data.get('tessera_tune_session')!r})")
        s = cls(path, data.get("meta", {}))
        for td in data.get("trials", []):
            s.add(Trial.from_dict(td))
        s.log = [tuple(x) for x in data.get("log", [])]
        s.result = data.get("result", {})
        s.interrupted = bool(data.get("interrupted"))
        return s


class Evaluator:
    """Creates trials within the budget and runs them (or replays saved runs)."""

    def __init__(self, session: Session, runner, space, objective: str, budget: int,
                 replay: Session | None = None, progress=None):
        self.session = session
        self.runner = runner
        self.space = space
        self.metric, self.larger_better = OBJECTIVES[objective]
        self.budget = budget
        self.progress = progress
        self.timeout = None
        # Saved runs by (hints, kind) -> list of results, consumed in order.
        self._replay = {}
        if replay is not None:
            for t in replay.trials:
                self._replay[(t.key, "run")] = list(t.runs)
                self._replay[(t.key, "final")] = list(t.finals)
        self.replayed = 0
        # What the progress display expects: runs of the default, of the finals,
        # and whether the finals (which create no new trials) have begun.
        self._default_runs = 1
        self._final_runs = 0
        self._in_finals = False

    # -- progress ---------------------------------------------------------------
    def plan_default(self, runs: int) -> None:
        self._default_runs = runs

    def plan_finals(self, runs: int, begun: bool = False) -> None:
        """Final runs expected; `begun` once the finals start (no new trials)."""
        self._final_runs = runs
        self._in_finals = begun

    def runs_done(self) -> int:
        return len(self.session.log)

    def runs_at_most(self) -> int:
        """The most runs the session can take, fixed once the search has planned
        the default and the finals: every trial of the budget confirmed with
        --repeat runs (no trial gets more), and the finals. The progress bar
        counts towards it; a search that confirms fewer moves ends below it."""
        return self.budget * self._default_runs + self._final_runs

    def runs_expected(self) -> int:
        """Runs done plus the least still to come: one per trial left in the
        budget, the default's repeats, the finals. Grows when a promising trial
        is confirmed with repeats; equals runs_done() when the session ends."""
        trials = self.session.trials
        finals_done = sum(len(t.finals) for t in trials)
        left = 0
        if not self._in_finals:
            left += max(0, self.budget - len(trials))   # the default's first run included
            if trials:
                left += max(0, self._default_runs - len(trials[0].runs))
            else:
                left += max(0, self._default_runs - 1)
        left += max(0, self._final_runs - finals_done)
        return self.runs_done() + left

    # -- objective ------------------------------------------------------------
    def cost(self, value):
        """Smaller is better whatever the objective (1/bandwidth for write_bw)."""
        if value is None:
            return float("inf")
        if self.larger_better:
            return 1.0 / value if value > 0 else float("inf")
        return value

    def trial_cost(self, trial: Trial, final: bool = False) -> float:
        return self.cost(trial.median(self.metric, final))

    # -- trials ------------------------------------------------------------------
    def budget_left(self) -> int:
        return self.budget - len(self.session.trials)

    def known(self, cfg) -> Trial | None:
        return self.session.by_key.get(self.space.hints(cfg))

    def trial(self, cfg, phase: str, reason: str = "") -> Trial:
        """The trial of a configuration; a new one costs one unit of budget."""
        key = self.space.hints(cfg)
        t = self.session.by_key.get(key)
        if t is not None:
            return t
        if self.budget_left() <= 0:
            raise BudgetExhausted()
        t = Trial(len(self.session.trials) + 1, key, self.space.label(cfg), cfg.strategy,
                  [[n, v] for n, v in cfg.settings], phase, reason)
        self.session.add(t)
        return t

    def run(self, trial: Trial, final: bool = False) -> RunResult:
        """One more run of a trial: from the saved session if it has one, else real."""
        kind = "final" if final else "run"
        saved = self._replay.get((trial.key, kind))
        if saved:
            result = saved.pop(0)
            self.replayed += 1
        else:
            if self.progress:
                self.progress.start(trial, final, self)
            n = len(trial.finals if final else trial.runs)
            tag = f"t{trial.id:03d}{'f' if final else 'r'}{n + 1}"
            result = self.runner.run(trial.key, tag, self.timeout)
        (trial.finals if final else trial.runs).append(result)
        self.session.log.append((trial.id, kind))
        self.session.save()
        if self.progress:
            self.progress.done(trial, result, self, final)
        return result

    def ensure_runs(self, trial: Trial, n: int) -> None:
        """Top a trial up to n search runs (stops early if its runs keep failing)."""
        while len(trial.runs) < n and not trial.failed():
            self.run(trial)
