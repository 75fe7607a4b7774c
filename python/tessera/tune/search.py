"""The search of `tessera tune`.

1. The default configuration, --repeat runs: the baseline, the run's shape
   (ranks, file sizes) and the trial timeout come from it.
2. Strategy pass: each strategy with library defaults, one run each; a
   strategy whose run fails (e.g. TSR_ENOTBUILT) is dropped.
3. Successive halving over the best --keep strategies, each searched by a
   rule-guided coordinate descent: the slices of budget are equal per round, the
   worse half of the strategies is dropped after each round, and the survivors
   get the rest. A move is kept only if it beats the incumbent by --min-gain,
   confirmed by the median of --repeat runs, so noise does not walk the search.
4. Finals: the best --finalists configurations and the default, --repeat runs
   each (at least 3), interleaved round by round so that both sides of the
   reported ratio were measured side by side in this session. The best median
   is the candidate; it is named the winner only when the bootstrap interval
   of its ratio to the default lies wholly above 1.0 (stats), otherwise
   the verdict is that no configuration is measurably better than the default.

With --model (model.ModelOrder) the strategy pass runs the strategies in
order of predicted cost, each from its predicted-best knobs, and the coordinate
search measures its queued moves predicted best first.

Everything here is deterministic given the figures the runs return; that is
what lets --resume replay a saved session (session).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .rules import diagnose
from .session import BudgetExhausted, Evaluator, Trial
from .stats import CONFIDENCE, MIN_RUNS, decide, spread
from .space import Config, RunShape


class TuneError(RuntimeError):
    """The session cannot go on (e.g. the default run fails)."""


@dataclass
class SearchOptions:
    repeat: int = 3
    keep: int = 2
    finalists: int = 3
    min_gain: float = 0.02
    trial_timeout: float | None = None
    ranks: int = 0              # fallback when the run writes no statistics record
    server_ranks: int = 0
    model: object = None        # model.ModelOrder (--model): predicted best first


def guess_ranks(command: list) -> int:
    """Rank count from `mpiexec -n N` style arguments (0 when not found)."""
    for i, arg in enumerate(command[:-1]):
        if arg in ("-n", "-np", "--np", "-c", "--n") and re.fullmatch(r"\d+", command[i + 1]):
            return int(command[i + 1])
    return 0


def first_ok(trial: Trial):
    for r in trial.runs:
        if r.status == "ok":
            return r
    return None


class CoordinateSearch:
    """Rule-guided coordinate descent over the knobs of one strategy."""

    def __init__(self, ev: Evaluator, space, start: Config, start_trial: Trial,
                 opts: SearchOptions):
        self.ev, self.space, self.opts = ev, space, opts
        self.strategy = start.strategy
        self.incumbent, self.inc_trial = start, start_trial
        self.queue = None
        self.last_move = None   # (knob, direction) of the last accepted move
        self.done = False
        ev.ensure_runs(start_trial, opts.repeat)

    def cost(self) -> float:
        return self.ev.trial_cost(self.inc_trial)

    def _build_queue(self) -> None:
        knobs = self.space.knobs_for(self.strategy)
        run = first_ok(self.inc_trial)
        moves = []
        if self.last_move:
            moves.append((*self.last_move, "continue the last improving move"))
        for a in diagnose(run.stats if run else {}, self.strategy):
            if a.knob in knobs:
                moves.append((a.knob, a.direction, a.reason))
        # Then every knob both ways, so the search is complete when rules are silent.
        for k in knobs:
            if self.space.knobs[k].ordered:
                moves += [(k, +1, "coordinate step"), (k, -1, "coordinate step")]
            else:
                moves.append((k, 0, "coordinate step"))
        queue, seen = [], set()
        for knob, direction, reason in moves:
            dirs = (+1, -1) if direction == 0 and self.space.knobs[knob].ordered else (direction,)
            for d in dirs:
                for value in self.space.neighbours(self.incumbent, knob, d):
                    cfg = self.space.with_value(self.incumbent, knob, value)
                    key = self.space.hints(cfg)
                    if key in seen or cfg == self.incumbent or not self.space.valid(cfg):
                        continue
                    seen.add(key)
                    arrow = "up" if d > 0 else "down" if d < 0 else "->"
                    why = f"{reason}: {knob} {arrow} {self.space.knobs[knob].fmt(value)}"
                    queue.append((cfg, why, (knob, d)))
        if self.opts.model is not None:
            queue = self.opts.model.order(self.space, queue, cfg_of=lambda q: q[0])
        self.queue = queue

    def _better(self, trial: Trial) -> bool:
        return self.ev.trial_cost(trial) < self.cost() * (1.0 - self.opts.min_gain)

    def _accept(self, cfg: Config, trial: Trial, move) -> None:
        self.incumbent, self.inc_trial, self.last_move = cfg, trial, move
        self.queue = None

    def step(self) -> bool:
        """Measure one new configuration; False once nothing new is left to try."""
        while not self.done:
            if self.queue is None:
                self._build_queue()
            if not self.queue:
                self.done = True
                break
            cfg, reason, move = self.queue.pop(0)
            known = self.ev.known(cfg)
            if known is not None:
                # Measured already (another strategy's path or the pass): free to compare.
                if not known.failed() and known.runs and self._better(known):
                    self.ev.ensure_runs(known, self.opts.repeat)
                    if self._better(known):
                        self._accept(cfg, known, move)
                continue
            trial = self.ev.trial(cfg, f"search {self.strategy}", reason)
            self.ev.run(trial)
            if not trial.failed() and self._better(trial):
                # Confirm with the incumbent's repeat count before moving.
                self.ev.ensure_runs(trial, self.opts.repeat)
                if self._better(trial):
                    self._accept(cfg, trial, move)
            return True
        return False


class Tuner:
    """Runs the four phases; returns the result record (see docs/tuning.md)."""

    def __init__(self, ev: Evaluator, make_space, command: list, opts: SearchOptions,
                 say=print):
        self.ev, self.make_space, self.command = ev, make_space, command
        self.opts, self.say = opts, say
        self.default = None
        self.searchers = []

    # -- phases ------------------------------------------------------------------
    def run_default(self) -> Trial:
        ev = self.ev
        ev.timeout = self.opts.trial_timeout
        t = ev.trial(ev.space.baseline_config(), "default", "baseline")
        ev.ensure_runs(t, self.opts.repeat)
        if t.failed():
            raise TuneError(f"the default configuration fails ({t.status()}): {t.error()}")
        if self.opts.trial_timeout is None:
            # Trials far slower than the default are not worth waiting for.
            slowest = max(r.elapsed_s for r in t.runs if r.status == "ok")
            ev.timeout = max(60.0, 10.0 * slowest)
        run = first_ok(t)
        st = run.stats
        ranks = st.get("model_ranks") or self.opts.ranks or guess_ranks(self.command) or 1
        if not st:
            self.say("warning: the default run wrote no statistics record; is TESSERA_STATS_FILE "
                     f"reaching the program? ranges assume {ranks} ranks")
        shape = RunShape(ranks=ranks, file_bytes=st.get("file_bytes", 0),
                         total_bytes=st.get("bytes", 0), stripe_size=st.get("stripe_size", 0),
                         server_ranks=self.opts.server_ranks,
                         var_bytes=st.get("var_bytes", 0),
                         small_file_bytes=st.get("small_file_bytes", 0))
        ev.space = self.make_space(shape)
        self.default = t
        if self.opts.model is not None:
            self.opts.model.bind(shape, run)
        return t

    def strategy_pass(self) -> list:
        """One run per strategy; returns [(cost, strategy, start config, trial)] best first."""
        ev, space = self.ev, self.ev.space
        default_strategy = (first_ok(self.default).stats or {}).get("strategy")
        ranked = []
        model = self.opts.model
        order = model.order(space, list(space.strategies), space.start_config) if model \
            else space.strategies
        if model:
            self.say("model order: " + " < ".join(order))
        for s in order:
            cfg = space.start_config(s)
            if model:
                cfg = model.best_start(space, cfg, self.opts.min_gain)
            if s == default_strategy and not space.baseline and cfg.settings == ():
                # The default already ran this strategy with library defaults.
                ranked.append((ev.trial_cost(self.default), s, cfg, self.default))
                continue
            if not space.valid(cfg):
                continue
            try:
                t = ev.trial(cfg, "strategies", "strategy pass")
            except BudgetExhausted:
                break
            if not t.runs:
                ev.run(t)
            if t.failed():
                self.say(f"strategy {s} dropped: {t.status()}: {t.error()}")
                continue
            ranked.append((ev.trial_cost(t), s, cfg, t))
        ranked.sort(key=lambda x: x[0])
        return ranked

    def halving(self, ranked: list) -> None:
        """Successive halving over strategies, coordinate search inside each."""
        ev, opts = self.ev, self.opts
        pending = list(ranked)
        searchers = []
        for _ in range(min(opts.keep, len(pending))):
            _, _, cfg, t = pending.pop(0)
            searchers.append(CoordinateSearch(ev, ev.space, cfg, t, opts))
        self.searchers = searchers
        rounds_left = math.ceil(math.log2(len(searchers))) + 1 if searchers else 1
        while ev.budget_left() > 0:
            active = [s for s in searchers if not s.done]
            if not active:
                if not pending:
                    break
                # Every kept strategy converged with budget left: search the next one.
                _, _, cfg, t = pending.pop(0)
                searchers.append(CoordinateSearch(ev, ev.space, cfg, t, opts))
                rounds_left = 1
                continue
            share = max(1, ev.budget_left() // (rounds_left * len(active)))
            for s in sorted(active, key=lambda s: s.cost()):
                for _ in range(share):
                    if ev.budget_left() <= 0 or not s.step():
                        break
            if rounds_left > 1:
                active = sorted((s for s in searchers if not s.done), key=lambda s: s.cost())
                for s in active[math.ceil(len(active) / 2):]:
                    s.done = True  # dropped: its best trial can still reach the finals
                rounds_left -= 1

    def final_runs(self) -> int:
        """Runs of each configuration in the finals: --repeat, but never fewer
        than it takes to see a spread."""
        return max(self.opts.repeat, MIN_RUNS)

    def finals(self) -> dict:
        """Interleaved runs of the finalists and the default; the verdict."""
        ev, opts = self.ev, self.opts
        ok = [t for t in ev.session.trials
              if t is not self.default and not t.failed() and t.runs]
        ok.sort(key=lambda t: (ev.trial_cost(t), t.id))
        field = [self.default] + ok[:max(1, opts.finalists)]
        rounds = self.final_runs()
        ev.plan_finals(len(field) * rounds, begun=True)
        for rnd in range(rounds):
            # Rotate the order each round so no configuration always runs first
            # (cold page cache) or right after the same neighbour.
            k = rnd % len(field)
            for t in field[k:] + field[:k]:
                if len(t.finals) <= rnd:
                    ev.run(t, final=True)
        scored = [t for t in field if t.values(ev.metric, final=True)]
        if not scored:
            raise TuneError("every run of the finals failed")
        best = min(ev.trial_cost(t, final=True) for t in scored)
        # Among finalists within --min-gain of the best (a tie, given the noise),
        # prefer the fewest explicit hints: knobs that made no measurable
        # difference are not worth carrying into a batch script.
        tied = [t for t in scored
                if ev.trial_cost(t, final=True) <= best * (1.0 + opts.min_gain)]
        candidate = min(tied, key=lambda t: (len(t.settings) if t.strategy else -1,
                                             ev.trial_cost(t, final=True), t.id))
        costs = lambda t: [ev.cost(v) for v in t.values(ev.metric, final=True)]  # noqa: E731
        v = decide(costs(self.default), costs(candidate), comparisons=len(field) - 1)
        if candidate is self.default:
            verdict = "default"
        elif v.measurable:
            verdict = "winner"
        else:
            verdict = "no_winner"
        return {
            "objective_metric": ev.metric,
            "larger_is_better": ev.larger_better,
            "repeat": rounds,
            "verdict": verdict,
            # The best finalist, measurably better or not; "winner" only when it is.
            "candidate": self._summary(candidate),
            "winner": self._summary(candidate) if verdict == "winner" else None,
            "default": self._summary(self.default),
            "finalists": [t.id for t in field],
            "ratio": v.ratio,
            "ratio_interval": [v.lo, v.hi] if v.estimable else None,
            "confidence": CONFIDENCE,
            "interval_level": v.level,
            "comparisons": v.comparisons,
            "trials": len(ev.session.trials),
            "runs": sum(len(t.runs) + len(t.finals) for t in ev.session.trials),
        }

    def _summary(self, t: Trial) -> dict:
        m = self.ev.metric
        vals = t.values(m, final=True)
        return {"id": t.id, "hints": t.key, "label": t.label, "values": vals, **spread(vals)}

    def run(self) -> dict:
        ev = self.ev
        ev.plan_default(self.opts.repeat)
        ev.plan_finals((1 + self.opts.finalists) * self.final_runs())
        self.run_default()
        ranked = self.strategy_pass()
        if ranked:
            try:
                self.halving(ranked)
            except BudgetExhausted:
                pass
        return self.finals()
