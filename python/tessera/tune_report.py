"""What `tessera tune` shows and writes: progress bar, table, CSV/JSON, plot."""
from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import sys

from .tune_space import MIB, human_size

UNITS = {"wall_s": "s", "blocked_s": "s", "write_bw": "MiB/s"}


def fmt_value(metric: str, value) -> str:
    if value is None:
        return "-"
    if metric == "write_bw":
        return f"{human_size(value)}/s"
    return f"{value:.3f} s" if value < 100 else f"{value:.1f} s"


class Progress:
    """One-line bar on stderr (\\r-redrawn on a terminal, one line per run otherwise)."""

    def __init__(self, budget: int, metric: str, stream=None, quiet: bool = False):
        self.budget, self.metric = budget, metric
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.best = ""
        self._drawn = False

    def _bar(self, ev) -> str:
        used = len(ev.session.trials)
        width = 20
        fill = min(width, round(width * used / max(1, self.budget)))
        return f"[{'#' * fill}{'.' * (width - fill)}] {used}/{self.budget} trials"

    def _best(self, ev) -> str:
        ok = [t for t in ev.session.trials if t.values(ev.metric)]
        if not ok:
            return "best -"
        b = min(ok, key=lambda t: (ev.trial_cost(t), t.id))
        return f"best {fmt_value(ev.metric, b.median(ev.metric))} (#{b.id} {b.label})"

    def _emit(self, text: str) -> None:
        if self.quiet:
            return
        if self.tty:
            cols = max(40, shutil.get_terminal_size((120, 24)).columns - 1)
            self.stream.write("\r" + text[:cols].ljust(cols))
            self._drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def start(self, trial, final: bool, ev) -> None:
        if self.tty:
            what = "final" if final else "run"
            self._emit(f"{self._bar(ev)}  {self._best(ev)}  running {what} #{trial.id} "
                       f"{trial.label}")

    def done(self, trial, result, ev, final: bool) -> None:
        kind = "final" if final else "run"
        v = result.metrics.get(ev.metric) if result.status == "ok" else None
        if self.tty:
            self._emit(f"{self._bar(ev)}  {self._best(ev)}")
        else:
            note = fmt_value(ev.metric, v) if v is not None else \
                f"{result.status}: {result.error}"
            self._emit(f"{self._bar(ev)}  #{trial.id} {kind} {trial.label}: {note}  |  "
                       f"{self._best(ev)}")

    def note(self, msg: str) -> None:
        """A message that must not be overwritten by the bar (always shown)."""
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False
        self.stream.write(msg + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._drawn and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def ratio_to_default(ev, trial, default) -> str:
    d, c = ev.trial_cost(default), ev.trial_cost(trial)
    if c == float("inf") or d == float("inf") or c <= 0:
        return "-"
    return f"{d / c:.2f}x"


def table(ev, session) -> str:
    """Every trial: id, phase, status, runs, medians, ratio to the default, hints, why."""
    metric = ev.metric
    default = session.trials[0] if session.trials else None
    rows = [("#", "phase", "status", "runs", "median", "final", "vs default", "configuration",
             "why")]
    for t in session.trials:
        fin = t.median(metric, final=True)
        rows.append((str(t.id), t.phase, t.status(), f"{len(t.runs)}+{len(t.finals)}",
                     fmt_value(metric, t.median(metric)),
                     fmt_value(metric, fin) if fin is not None else "",
                     ratio_to_default(ev, t, default) if default else "-",
                     t.label, t.reason if t.status() == "ok" else t.error()[:80]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return "\n".join(lines)


def export_line(hints: str) -> str:
    """A line ready to paste into a batch script (single-quoted: globs stay literal)."""
    quoted = f"'{hints}'" if "'" not in hints else shlex.quote(hints)
    return f"export TESSERA_HINTS={quoted}"


def summary(result: dict, objective: str) -> str:
    """The verdict: winner, its ratio to the default, and the line to export."""
    metric = result["objective_metric"]
    w, d, r = result["winner"], result["default"], result["repeat"]
    lines = [
        f"Winner: #{w['id']} {w['label']}",
        f"  {objective}: {fmt_value(metric, w['median'])} median of {len(w['values'])} run(s); "
        f"default {fmt_value(metric, d['median'])} median of {len(d['values'])} run(s)",
    ]
    if result.get("ratio") is not None:
        lines.append(f"Ratio to default: {result['ratio']:.2f}x ({objective}, medians of "
                     f"{r} interleaved run(s) each, measured in this session)")
    if w["id"] == d["id"]:
        lines.append("The default configuration is the fastest; nothing to change.")
    if w["hints"]:
        lines.append(export_line(w["hints"]))
    else:
        lines.append("unset TESSERA_HINTS")
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
    metric = ev.metric
    by_id = {t.id: t for t in session.trials}
    strategies = sorted({t.strategy or "default" for t in session.trials})
    colours = {s: plt.cm.tab10(i % 10) for i, s in enumerate(strategies)}
    fig, ax = plt.subplots(figsize=(9, 4.5))
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
    if res.get("winner", {}).get("median") is not None:
        ax.axhline(res["winner"]["median"] / scale, color="green", ls=":", lw=1.2,
                   label="winner (final median)")
    if fails:
        lo = ax.get_ylim()[0]
        ax.scatter(fails, [lo] * len(fails), marker="x", color="black", label="failed / timeout")
    ax.set_xlabel("run (in order; diamonds: final interleaved runs)")
    ax.set_ylabel(f"{objective} ({UNITS.get(metric, '')})")
    title = f"tessera tune: {objective}"
    if res.get("ratio") is not None:
        title += f", winner {res['ratio']:.2f}x the default"
    ax.set_title(title)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


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
    w = (session.result or {}).get("winner")
    if w is not None:
        with open(os.path.join(out_dir, "winner.env"), "w") as fh:
            ratio = session.result.get("ratio")
            fh.write(f"# tessera tune winner (#{w['id']}): "
                     f"{'%.2fx' % ratio if ratio else 'no ratio'} the default ({objective})\n")
            fh.write(export_line(w["hints"]) + "\n" if w["hints"] else "unset TESSERA_HINTS\n")
    return notes
