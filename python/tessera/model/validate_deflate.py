"""`tessera model validate deflate`: the compression terms of the model
against tessera-bench runs on this machine.

Every strategy given runs at every process count writing NetCDF-4 without
and with `deflate=N`, interleaved over the repeats (the order reversed every
other repeat, so slow spells of a shared machine fall on both sides); each
configuration is shown by its median blocked time with the spread, next to
the model's prediction at the median load measured around its runs, and the
measured and predicted ratio compressed / uncompressed. The profile is used
as it is (no fit here): its deflate_bw comes from `calibrate --deflate`, a
serial run on one process, so every other row is a prediction.
"""
from __future__ import annotations

import statistics

from .calibrate import background, record_ranks, record_strategy
from .case import case_from_record
from .predict import predict
from .report import err_pct, table
from .runs import run_bench, runs_at

DEFAULT_STRATEGIES = "serial,aggregate:2,servers:1x1"
DEFAULT_NP = "2,4"


def formats(level: int) -> tuple:
    return ("format=netcdf4", f"format=netcdf4:deflate={level}")


def run(strategies: list, counts: list, opts: dict, level: int, repeat: int, log=print,
        save=None, **kw) -> list:
    """The runs, repeat by repeat (`save(records)` after each, so a run cut
    short by a time limit keeps the repeats it finished)."""
    plan = [(s, n, f) for n in counts for s in strategies for f in formats(level)
            if runs_at(s, n)]
    records = []
    for i in range(repeat):
        for s, n, f in (plan if i % 2 == 0 else plan[::-1]):
            rec = run_bench(s, n, opts, extra_hints=f, **kw)
            records.append(rec)
            log(f"  {s.label():<12} {n} procs {f:<26} blocked {rec['output_blocked_s']:.3f} s")
        if save:
            save(records)
    return records


def label(rec: dict) -> str:
    return record_strategy(rec).label()


def compare(records: list, profile, out=print) -> dict:
    """Median measured vs predicted per (strategy, processes, deflate)."""
    groups = {}
    for r in records:
        case = case_from_record(r)
        groups.setdefault((label(r), record_ranks(r), case.deflate), []).append(r)
    rows, points = [], []
    for (name, n, level), rs in sorted(groups.items()):
        times = [float(r["output_blocked_s"]) for r in rs]
        med = statistics.median(times)
        bg = statistics.median(background(r) for r in rs)
        p = predict(case_from_record(rs[0]), record_strategy(rs[0]), profile, n, background=bg)
        e = err_pct(p.blocked_s, med)
        points.append({"strategy": name, "ranks": n, "deflate": level, "measured": med,
                       "min": min(times), "max": max(times), "runs": len(times),
                       "background": bg, "predicted": p.blocked_s, "err_pct": e,
                       "drain_predicted": p.drain_s})
        rows.append([name, n, level, len(times), f"{bg:.1f}",
                     f"{med:.3f} ({min(times):.3f}-{max(times):.3f})", f"{p.blocked_s:.3f}",
                     f"{e:+.1f} %"])
    out(table(f"NetCDF-4 with and without deflate ({profile.cores} cores, profile "
              f"{profile.name}): output blocked time of tessera-bench, median of the runs vs "
              "predicted", ["strategy", "procs", "deflate", "runs", "other load",
                            "measured s (min-max)", "predicted s", "error"], rows, right_from=1))
    ratios = []
    by = {(p["strategy"], p["ranks"], p["deflate"]): p for p in points}
    for (name, n, level), p in sorted(by.items()):
        base = by.get((name, n, 0))
        if level == 0 or not base:
            continue
        m, q = p["measured"] / base["measured"], p["predicted"] / base["predicted"]
        ratios.append([name, n, f"{m:.2f}", f"{q:.2f}", f"{err_pct(q, m):+.1f} %"])
    out(table("compressed / uncompressed blocked time", ["strategy", "procs", "measured",
                                                         "predicted", "error"], ratios,
              right_from=1))
    within = [p for p in points if abs(p["err_pct"]) <= 30.0]
    out(f"within 30 %: {len(within)} of {len(points)} configurations; deflate_bw "
        f"{profile.values.get('deflate_bw', 0) / 1e6:.1f} MB/s")
    return {"points": points}
