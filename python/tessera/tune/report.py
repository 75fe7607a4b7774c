"""What `tessera tune` shows and writes: progress bar, table, verdict, CSV/JSON, plot."""
from __future__ import annotations

import csv
import json
import os
import shlex
import sys
import time

from rich.console import Console

from ..textout import duration_text, progress_bar, table_text
from .space import MIB, human_size

UNITS = {"wall_s": "s", "blocked_s": "s", "write_bw": "MiB/s"}


def fmt_value(metric: str, value) -> str:
    if value is None:
        return "-"
    if metric == "write_bw":
        return f"{human_size(value)}/s"
    return f"{value:.3f} s" if value < 100 else f"{value:.1f} s"


class Progress:
    """Counts every run of the command, not only new trials: the default's
    repeats, confirmations of promising moves and the finals move it too.

    The total is fixed: the most runs the session can take (every trial of the
    budget confirmed, and the finals), so the bar never moves backwards; a
    search that confirms fewer moves ends below it. The time left is estimated
    from the mean run so far and the least runs still to come. On a terminal
    a rich live bar; otherwise one line per run (logs, CI)."""

    def __init__(self, budget: int, metric: str, stream=None, quiet: bool = False):
        self.budget, self.metric = budget, metric
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = None
        self.task = None
        self._t0 = time.monotonic()

    def _best(self, ev) -> str:
        ok = [t for t in ev.session.trials if t.values(ev.metric)]
        if not ok:
            return "best -"
        b = min(ok, key=lambda t: (ev.trial_cost(t), t.id))
        return f"best {fmt_value(ev.metric, b.median(ev.metric))} (#{b.id} {b.label})"

    def _trials(self, ev) -> str:
        return f"trial {len(ev.session.trials)}/{self.budget}"

    def _left(self, ev) -> str:
        """Time left for the runs still expected at least (the search may add
        confirmations), from the mean run so far."""
        done = ev.runs_done()
        if not done or self._t0 is None:
            return ""
        mean, left = (time.monotonic() - self._t0) / done, ev.runs_expected() - done
        return f", about {duration_text(mean * left)} left at least" if left > 0 else ""

    def _live(self):
        if self.bar is None:
            self.bar = progress_bar(Console(file=self.stream, highlight=False), "runs at most")
            self.task = self.bar.add_task("tune", total=None, note="")
            self.bar.start()
        return self.bar

    def start(self, trial, final: bool, ev) -> None:
        if self.quiet or not self.tty:
            return
        what = "final" if final else "run"
        self._live().update(self.task, completed=ev.runs_done(), total=ev.runs_at_most(),
                            note=f"{self._trials(ev)}  {self._best(ev)}  running {what} "
                                 f"#{trial.id} {trial.label}")

    def done(self, trial, result, ev, final: bool) -> None:
        if self.quiet:
            return
        done, total = ev.runs_done(), ev.runs_at_most()
        if self.tty:
            self._live().update(self.task, completed=done, total=total,
                                note=f"{self._trials(ev)}  {self._best(ev)}")
            return
        kind = "final" if final else "run"
        v = result.metrics.get(ev.metric) if result.status == "ok" else None
        note = fmt_value(ev.metric, v) if v is not None else f"{result.status}: {result.error}"
        self.stream.write(f"run {done} of at most {total}{self._left(ev)}  {self._trials(ev)}  #{trial.id} {kind} "
                          f"{trial.label}: {note}  |  {self._best(ev)}\n")
        self.stream.flush()

    def note(self, msg: str) -> None:
        """A message that must not be overwritten by the bar (always shown)."""
        if self.bar is not None:
            self.bar.console.print(msg, markup=False, highlight=False)
        else:
            self.stream.write(msg + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def ratio_to_default(ev, trial, default) -> str:
    d, c = ev.trial_cost(default), ev.trial_cost(trial)
    if c == float("inf") or d == float("inf") or c <= 0:
        return "-"
    return f"{d / c:.2f}x"


def range_text(metric: str, values: list) -> str:
    """min-max of two or more runs ("" for fewer: one run has no spread)."""
    if len(values) < 2:
        return ""
    return f"{fmt_value(metric, min(values))} - {fmt_value(metric, max(values))}"


def table(ev, session) -> str:
    """Every trial: runs, median and range of its search runs and of its final
    runs, ratio to the default, hints, and why the search tried it."""
    metric = ev.metric
    default = session.trials[0] if session.trials else None
    headers = ["#", "phase", "status", "runs", "median", "range", "final median",
               "final range", "vs default", "configuration", "why"]
    rows = []
    for t in session.trials:
        fin = t.median(metric, final=True)
        rows.append([str(t.id), t.phase, t.status(), f"{len(t.runs)}+{len(t.finals)}",
                     fmt_value(metric, t.median(metric)), range_text(metric, t.values(metric)),
                     fmt_value(metric, fin) if fin is not None else "",
                     range_text(metric, t.values(metric, final=True)),
                     ratio_to_default(ev, t, default) if default else "-",
                     t.label, t.reason if t.status() == "ok" else t.error()[:80]])
    return table_text(headers, rows, right={"#", "runs", "median", "final median",
                                            "vs default"})


def export_line(hints: str) -> str:
    """A line ready to paste into a batch script (single-quoted: globs stay literal)."""
    quoted = f"'{hints}'" if "'" not in hints else shlex.quote(hints)
    return f"export TESSERA_HINTS={quoted}"


def describe(metric: str, s: dict) -> str:
    """Median and spread of one side of the comparison."""
    if not s.get("n"):
        return "no successful run"
    text = f"median {fmt_value(metric, s['median'])}"
    if s["n"] >= 2:
        text += f", range {fmt_value(metric, s['min'])} - {fmt_value(metric, s['max'])}"
    if "q1" in s:
        text += f", IQR {fmt_value(metric, s['q1'])} - {fmt_value(metric, s['q3'])}"
    return text + f" ({s['n']} run{'s' if s['n'] != 1 else ''})"


NO_WINNER = "no configuration is measurably better than the default"


def summary(result: dict, objective: str) -> str:
    """The verdict: both sides with their spread, the ratio with its interval,
    and either the winner's export line or why nothing is exported."""
    metric = result["objective_metric"]
    d, c, r = result["default"], result["candidate"], result["repeat"]
    lines = [f"Default  #{d['id']} {d['label']}: {describe(metric, d)}"]
    if c["id"] != d["id"]:
        lines.append(f"Best     #{c['id']} {c['label']}: {describe(metric, c)}")
    ratio, ci = result.get("ratio"), result.get("ratio_interval")
    if ratio is not None:
        text = f"Ratio to default: {ratio:.2f}x"
        if ci:
            text += (f", interval {ci[0]:.2f}x - {ci[1]:.2f}x ({objective}; "
                     f"{100 * result['interval_level']:.1f} % bootstrap interval of the ratio "
                     f"of medians, {100 * result['confidence']:.0f} % over the "
                     f"{result['comparisons']} finalist(s) compared; {r} interleaved runs "
                     f"each, measured in this session)")
        else:
            text += f" ({objective}; too few successful runs to give an interval)"
        lines.append(text)
    verdict = result.get("verdict")
    if verdict == "winner":
        w = result["winner"]
        lines.append(f"Winner: #{w['id']} {w['label']} (the whole interval is above 1.0x)")
        lines.append(export_line(w["hints"]) if w["hints"] else "unset TESSERA_HINTS")
    elif verdict == "default":
        lines.append("The default configuration is the fastest; nothing to change or export.")
    else:
        lines.append(f"Verdict: {NO_WINNER} (the interval includes 1.0x); keep the "
                     "default, nothing exported. More --repeat narrows the interval.")
    return "\n".join(lines)


def write_csv(path: str, ev, session) -> None:
    """One row per run, in the order the runs happened."""
    metric = ev.metric
    fields = ["seq", "trial", "kind", "index", "phase", "strategy", "hints", "status", "rc",
              "objective", "wall_s", "blocked_s", "write_bw", "bytes", "elapsed_s", "source",
              "reason", "error"]
    by_id = {t.id: t for t in session.trials}
    counters = {}
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for seq, (tid, kind) in enumerate(session.log, 1):
            t = by_id[tid]
            i = counters.get((tid, kind), 0)
            counters[(tid, kind)] = i + 1
            runs = t.finals if kind == "final" else t.runs
            if i >= len(runs):
                continue
            r = runs[i]
            w.writerow({"seq": seq, "trial": tid, "kind": kind, "index": i + 1,
                        "phase": t.phase, "strategy": t.strategy or "(default)",
                        "hints": t.key, "status": r.status, "rc": r.rc,
                        "objective": r.metrics.get(metric) if r.status == "ok" else "",
                        "wall_s": r.metrics.get("wall_s", ""),
                        "blocked_s": r.metrics.get("blocked_s", ""),
                        "write_bw": r.metrics.get("write_bw", ""),
                        "bytes": r.metrics.get("bytes", ""),
                        "elapsed_s": f"{r.elapsed_s:.4f}", "source": r.source,
                        "reason": t.reason, "error": r.error})


def write_json(path: str, ev, session) -> None:
    metric = ev.metric
    trials = []
    for t in session.trials:
        d = t.to_dict()
        d["median"] = t.median(metric)
        d["final_median"] = t.median(metric, final=True)
        d["status"] = t.status()
        trials.append(d)
    with open(path, "w") as fh:
        json.dump({"meta": session.meta, "objective_metric": metric, "trials": trials,
                   "result": session.result}, fh, indent=1)


def write_plot(path: str, ev, session, objective: str) -> str | None:
    """Objective of every run in order, best-so-far line, default and winner levels.
    Returns an error text when matplotlib is unavailable (never fatal)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:  # noqa: BLE001 - plotting is optional
        return f"no plot: {exc}"
    fig = tune_figure(ev, session, objective)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return None


def tune_figure(ev, session, objective: str):
    """The matplotlib figure of a session (Agg backend)."""
    import matplotlib.pyplot as plt

    metric = ev.metric
    by_id = {t.id: t for t in session.trials}
    strategies = sorted({t.strategy or "default" for t in session.trials})
    colours = {s: plt.cm.tab10(i % 10) for i, s in enumerate(strategies)}
    fig, ax = plt.subplots(figsize=(10.5, 4.5))
    counters, best, best_x, best_y, fails = {}, None, [], [], []
    plotted = set()
    for seq, (tid, kind) in enumerate(session.log, 1):
        t = by_id[tid]
        i = counters.get((tid, kind), 0)
        counters[(tid, kind)] = i + 1
        runs = t.finals if kind == "final" else t.runs
        if i >= len(runs):
            continue
        r = runs[i]
        v = r.metrics.get(metric) if r.status == "ok" else None
        if v is not None and metric == "write_bw":
            v = v / MIB  # MiB/s reads better than 1e8 B/s
        s = t.strategy or "default"
        if v is None:
            fails.append(seq)
            continue
        label = s if s not in plotted else None
        plotted.add(s)
        ax.scatter([seq], [v], color=colours[s], label=label,
                   marker="o" if kind == "run" else "D",
                   facecolors="none" if kind == "final" else colours[s])
        if kind == "run" and (best is None or ev.cost(v) < ev.cost(best)):
            best = v
        if best is not None:
            best_x.append(seq)
            best_y.append(best)
    if best_x:
        ax.step(best_x, best_y, where="post", color="black", lw=1, label="best so far")
    res = session.result or {}
    scale = MIB if metric == "write_bw" else 1.0
    if res.get("default", {}).get("median") is not None:
        ax.axhline(res["default"]["median"] / scale, color="grey", ls="--", lw=1,
                   label="default (final median)")
    cand = res.get("candidate") or {}
    if cand.get("median") is not None and cand.get("id") != res.get("default", {}).get("id"):
        label = "winner" if res.get("verdict") == "winner" else "best, not measurably better"
        ax.axhline(cand["median"] / scale, color="green", ls=":", lw=1.2,
                   label=f"{label} (final median)")
    if fails:
        lo = ax.get_ylim()[0]
        ax.scatter(fails, [lo] * len(fails), marker="x", color="black", label="failed / timeout")
    ax.set_xlabel("run (in order; diamonds: final interleaved runs)")
    ax.set_ylabel(f"{objective} ({UNITS.get(metric, '')})")
    title = f"tessera tune: {objective}"
    ci = res.get("ratio_interval")
    if res.get("verdict") == "winner" and ci:
        title += (f", winner {res['ratio']:.2f}x the default "
                  f"(interval {ci[0]:.2f}x - {ci[1]:.2f}x)")
    elif res.get("verdict") in ("no_winner", "default"):
        title += ", no configuration measurably better than the default"
    ax.set_title(title, fontsize=10)
    # Outside the axes, so that it never hides a run.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def write_outputs(out_dir: str, ev, session, objective: str, plot: bool = True) -> list:
    """trials.csv, trials.json, tune.png and winner.env in out_dir; returns notes."""
    notes = []
    write_csv(os.path.join(out_dir, "trials.csv"), ev, session)
    write_json(os.path.join(out_dir, "trials.json"), ev, session)
    if plot and session.log:
        try:
            err = write_plot(os.path.join(out_dir, "tune.png"), ev, session, objective)
        except Exception as exc:  # noqa: BLE001 - a plot never costs the results
            err = f"no plot: {exc!r}"
        if err:
            notes.append(err)
    # winner.env only for a measurable winner: a file to source must never
    # carry a configuration the measurements do not support.
    env = os.path.join(out_dir, "winner.env")
    w = (session.result or {}).get("winner")
    if w is not None:
        with open(env, "w") as fh:
            ratio, ci = session.result.get("ratio"), session.result.get("ratio_interval")
            fh.write(f"# tessera tune winner (#{w['id']}): {ratio:.2f}x the default "
                     f"({objective}), interval {ci[0]:.2f}x - {ci[1]:.2f}x\n")
            fh.write(export_line(w["hints"]) + "\n" if w["hints"] else "unset TESSERA_HINTS\n")
    elif os.path.exists(env):
        os.remove(env)   # a resumed session whose verdict changed
    return notes
