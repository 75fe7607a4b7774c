"""`tessera model validate irma|note2002|here`: the model against the
published studies and against runs on this machine (docs/model.md, closing
section, shows the output of each)."""
from __future__ import annotations

import os

from . import published as pub
from .calibrate import background, calibrate, fastest, record_ranks, record_strategy
from .case import bench_case, case_from_record, process_grid, tile_bytes_max
from .fit import fit
from .predict import predict, run_amounts
from .profile import load as load_profile
from .report import err_pct, lines_chart, table
from .strategy import Strategy

HERE = os.path.dirname(os.path.abspath(__file__))
#: The checkout root is three folders up: python/tessera/model/.
SCHEMA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "apps", "bench", "schemas",
                      "wrfout_d01.cdl")

#: Published points the Irma profile is fitted to: both ends of the two
#: parallel methods' scaling and serial NetCDF at the smallest count. The
#: other ten output times (and all walls) are predictions.
IRMA_FIT = (("serial", 324), ("direct", 324), ("direct", 4608), ("aggregate", 324),
            ("aggregate", 4608))
#: What the fit may change; the rest is the hardware's data sheet (irma-base).
IRMA_FREE = ("write_bw", "fs_bw", "match_s", "req_s")
GOAL_PCT = 30.0
#: The Lustre stripe count of the study's striped PnetCDF runs ("with stripe 12").
IRMA_STRIPES = 12


def irma_refit_without(method: str, schema: str = SCHEMA) -> dict:
    """The Irma fit with none of `method`'s points: every output time it
    does not fit, predicted (the check that serial NetCDF's column follows
    from the parallel methods' file-system figures alone)."""
    points = tuple(p for p in IRMA_FIT if p[0] != method)
    case, prof = irma_profile(schema, points)
    free = []
    for m in pub.IRMA_OUTPUT:
        for c in pub.IRMA_CORES:
            if (m, c) in points:
                continue
            p = predict(case, pub.irma_strategy(m, c), prof, c)
            free.append({"method": m, "cores": c, "predicted": p.blocked_s,
                         "err_pct": err_pct(p.blocked_s, pub.IRMA_OUTPUT[m][c])})
    return {"fit": points, "points": free, "profile": prof,
            "within": sum(abs(p["err_pct"]) <= GOAL_PCT for p in free)}


def irma_profile(schema: str = SCHEMA, fit_points=IRMA_FIT):
    case = pub.irma_case(schema)
    base = load_profile("irma-base")
    rows = [run_amounts(case, pub.irma_strategy(m, c), base, c).vector() for m, c in fit_points]
    prof = fit(rows, [pub.IRMA_OUTPUT[m][c] for m, c in fit_points], base, IRMA_FREE)
    prof.name = "irma"
    prof.description = ("Hurricane Irma WRF case machine (Xeon Gold 6154, Omni-Path, Lustre "
                        "stripe 12), fitted to published output times")
    # The study's striped PnetCDF files: stripe count 12 (no cost term; advise names it).
    prof.stripe_count = prof.stripe_count or IRMA_STRIPES
    prof.fitted = [f"{pub.IRMA_METHOD[m]} output at {c} cores" for m, c in fit_points]
    return case, prof


def irma(schema: str = SCHEMA, png: str | None = None, out=print) -> dict:
    """Predict every published Irma output and wall time; returns the rows."""
    case, prof = irma_profile(schema)
    rows, res = [], {"points": [], "winners": []}
    fitted = set(IRMA_FIT)
    series, measured = {}, {}
    for m in pub.IRMA_OUTPUT:
        xs, ys = [], []
        for c in pub.IRMA_CORES:
            p = predict(case.with_(other_s=pub.irma_other_s(c)), pub.irma_strategy(m, c), prof, c)
            o, w = pub.IRMA_OUTPUT[m][c], pub.IRMA_WALL[m][c]
            e, ew = err_pct(p.blocked_s, o), err_pct(p.wall_s, w)
            res["points"].append({"method": m, "cores": c, "published": o, "predicted": p.blocked_s,
                                  "err_pct": e, "fitted": (m, c) in fitted,
                                  "wall_published": w, "wall_predicted": p.wall_s})
            rows.append([pub.IRMA_METHOD[m], c, f"{o:.1f}", f"{p.blocked_s:.1f}", f"{e:+.1f} %",
                         "fitted" if (m, c) in fitted else "", w, f"{p.wall_s:.0f}",
                         f"{ew:+.1f} %"])
            xs.append(c)
            ys.append(p.blocked_s)
        series[pub.IRMA_METHOD[m]] = (xs, ys)
        measured[pub.IRMA_METHOD[m]] = (list(pub.IRMA_CORES),
                                        [pub.IRMA_OUTPUT[m][c] for c in pub.IRMA_CORES])
    out(table("Irma (003): total output time and wall time, published vs predicted",
              ["method", "cores", "output s", "predicted", "error", "", "wall s", "predicted",
               "error"], rows, right_from=1))
    free = [p for p in res["points"] if not p["fitted"]]
    within = [p for p in free if abs(p["err_pct"]) <= GOAL_PCT]
    wrows = []
    for c in pub.IRMA_CORES:
        pw = min(pub.IRMA_OUTPUT, key=lambda m: next(p["predicted"] for p in res["points"]
                                                    if p["method"] == m and p["cores"] == c))
        mw = min(pub.IRMA_OUTPUT, key=lambda m: pub.IRMA_OUTPUT[m][c])
        res["winners"].append({"cores": c, "published": mw, "predicted": pw})
        wrows.append([c, pub.IRMA_METHOD[mw], pub.IRMA_METHOD[pw], "yes" if mw == pw else "NO"])
    out(table("fastest output per core count", ["cores", "published", "predicted", "same"],
              wrows, right_from=4))
    extra = []
    for m, o in pub.IRMA_9216.items():
        p = predict(case, pub.irma_strategy(m, 9216), prof, 9216)
        extra.append(f"{pub.IRMA_METHOD[m]} {p.blocked_s:.0f} s vs {o:.0f} s "
                     f"({err_pct(p.blocked_s, o):+.0f} %)")
    out("outside the compared range, 9216 cores: " + "; ".join(extra))
    out(f"not fitted: {len(within)} of {len(free)} output times within {GOAL_PCT:.0f} %; "
        f"fastest method right at {sum(w['published'] == w['predicted'] for w in res['winners'])}"
        f" of {len(pub.IRMA_CORES)} core counts")
    left = "serial"                 # the study's method the refit leaves out
    alt = irma_refit_without(left, schema)
    col = [p for p in alt["points"] if p["method"] == left]
    out(f"fitted without {pub.IRMA_METHOD[left]} (the other {len(alt['fit'])} points): "
        f"{alt['within']} of {len(alt['points'])} output times within {GOAL_PCT:.0f} %; "
        f"{pub.IRMA_METHOD[left]} predicted {min(p['predicted'] for p in col):.0f}.."
        f"{max(p['predicted'] for p in col):.0f} s: "
        + ", ".join(f"{p['err_pct']:+.0f} % at {p['cores']}" for p in col) + " cores")
    res["without_serial"] = alt
    out("fitted to: " + "; ".join(prof.fitted))
    out("profile: " + ", ".join(f"{k}={v:.3g}" for k, v in prof.values.items()))
    res["profile"] = prof
    if png:
        lines_chart(png, "Hurricane Irma WRF output time: model (lines) vs published (circles)",
                    "cores", "total output time (s)", series, measured, logx=True, logy=True,
                    measured_word="published")
        out(f"chart: {png}")
    return res


# --- the 2002 note ---------------------------------------------------------------

def note_case():
    """About 14 MB of WRF-like fields per output (tessera-bench's default set
    on 112 x 90 x 35), every 36 steps, 48 simulated hours; 1x speed is 79
    simulated hours per hour on 12 ranks."""
    c = bench_case(112, 90, 35, steps=36 * 48, output_every=36, name="wrf-2002")
    return c.with_(step_s=3600.0 / pub.NOTE_SIM_HOURS_PER_HOUR / 36, step_ranks=pub.NOTE_RANKS,
                   step_exp=0.0)


def note_strategies(case) -> dict:
    # WRF 2002 quilting hands a frame off with blocking sends: one frame in flight.
    tile = tile_bytes_max(case, *process_grid(case, pub.NOTE_RANKS))
    return {"netcdf (0)": (Strategy("serial"), 0),
            "netcdf (1)": (Strategy("servers", backend="netcdf", buffer_bytes=tile,
                                    blocking=True), 1),
            "netcdf (4)": (Strategy("servers", io_tasks=4, backend="netcdf",
                                    buffer_bytes=tile, blocking=True), 4)}


def note2002(png: str | None = None, out=print) -> dict:
    case = note_case()
    prof = load_profile("ibm-sp-2002")
    speeds = [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 25, 30, 40, 50]
    series, res = {}, {}
    rows = []
    for label, (strat, servers) in note_strategies(case).items():
        shares = []
        for s in speeds:
            c = case.with_(step_s=case.step_s / s)
            p = predict(c, strat, prof, pub.NOTE_RANKS + servers)
            shares.append(100.0 * p.io_fraction)
        series[label] = (speeds, shares)
        res[label] = dict(zip(speeds, shares))
        rows.append([label] + [f"{x:.1f}" for x in shares])
    out(f"2002 note (001): {case.frame_bytes() / 1e6:.1f} MB per output, 12 compute ranks; "
        "output share of the run (%) against computational speed-up")
    out(table("", ["method"] + [f"{s}x" for s in speeds], rows))
    out("the note: " + "; ".join(pub.NOTE_CLAIMS))
    if png:
        lines_chart(png, "WRF 2002 note: output share vs computational speed (model)",
                    "computational speed-up over the 12-rank run", "output share of run time (%)",
                    series, logx=False)
        out(f"chart: {png}")
    return res


# --- this machine ------------------------------------------------------------------

def here(records: list, calib_ranks=(1, 2), cores: int = 0, png: str | None = None,
         out=print) -> dict:
    """Calibrate on the runs with calib_ranks processes, predict the others. Each configuration is shown by its fastest run, predicted at
    the CPU contention measured around that run (other busy processes on the
    machine, runs.background) and for an idle machine."""
    cores = cores or os.cpu_count() or 1
    cal = [r for r in records if record_ranks(r) in calib_ranks]
    prof = calibrate(cal, cores=cores)
    rows, points, series, measured = [], [], {}, {}
    for r in sorted(fastest(records), key=lambda r: (record_strategy(r).label(),
                                                      record_ranks(r))):
        strat, n = record_strategy(r), record_ranks(r)
        bg = background(r)
        case = case_from_record(r)
        p = predict(case, strat, prof, n, background=bg)
        idle = predict(case, strat, prof, n)
        m = float(r["output_blocked_s"])
        e = err_pct(p.blocked_s, m)
        fitted = n in calib_ranks
        same = [float(x["output_blocked_s"]) for x in records
                if record_strategy(x) == strat and record_ranks(x) == n]
        reps = f"{len(same)} ({max(same) / min(same):.1f}x)" if len(same) > 1 else "1"
        points.append({"strategy": strat.label(), "ranks": n, "measured": m, "background": bg,
                       "predicted": p.blocked_s, "err_pct": e, "fitted": fitted,
                       "predicted_idle": idle.blocked_s})
        rows.append([strat.label(), n, reps, f"{bg:.1f}", f"{m:.3f}", f"{p.blocked_s:.3f}",
                     f"{e:+.1f} %", f"{idle.blocked_s:.3f}", "calibration" if fitted else ""])
        xs, ys = series.setdefault(strat.label(), ([], []))
        xs.append(n)
        ys.append(p.blocked_s)
        mx, my = measured.setdefault(strat.label(), ([], []))
        mx.append(n)
        my.append(m)
    out(table(f"this machine ({cores} cores): output blocked time of tessera-bench, fastest "
              "run vs predicted", ["strategy", "procs", "runs (max/min)", "other load", "measured s",
                                   "predicted s", "error", "idle machine s", ""], rows,
              right_from=1))
    out("other load: busy processes of other jobs measured around the run; predicted at that "
        "load; 'idle machine': the same with no other load")
    free = [p for p in points if not p["fitted"]]
    ok = [p for p in free if abs(p["err_pct"]) <= GOAL_PCT]
    out(f"not used for calibration: {len(ok)} of {len(free)} within {GOAL_PCT:.0f} %")
    orows, right = [], 0
    counts = sorted({p["ranks"] for p in points})
    for n in counts:
        at = [p for p in points if p["ranks"] == n]
        if len(at) < 2:
            continue
        m = [p["strategy"] for p in sorted(at, key=lambda p: p["measured"])]
        q = [p["strategy"] for p in sorted(at, key=lambda p: p["predicted"])]
        right += m[0] == q[0]
        orows.append([n, " < ".join(m), " < ".join(q), "yes" if m[0] == q[0] else "no"])
    out(table("order of the strategies by blocked time", ["procs", "measured", "predicted",
                                                          "same fastest"], orows, right_from=4))
    out(f"fastest strategy right at {right} of {len(orows)} process counts")
    out("profile: " + ", ".join(f"{k}={v:.3g}" for k, v in prof.values.items()))
    if png:
        lines_chart(png, "this machine: output blocked time, model vs tessera-bench",
                    "processes", "blocked time (s)", series, measured)
        out(f"chart: {png}")
    return {"profile": prof, "points": points}


def record_fixture(records: list, res: dict, calib_ranks: tuple, directory: str) -> str:
    """The fastest run of each configuration and what `here` predicted for
    it, as tests/python/test_model_recorded.py reads them."""
    import json

    os.makedirs(directory, exist_ok=True)
    keep = ("tessera_bench", "strategy", "hints", "hints_model", "ranks", "px", "py", "nx",
            "ny", "nz", "steps", "output_every", "sweeps", "frames", "files", "frames_per_file",
            "schema", "variables", "decomposed_variables", "wall_s", "compute_s",
            "output_blocked_s", "output_total_s", "drain_s", "bytes", "writer_s", "library",
            "model_background")
    runs = [{k: r[k] for k in keep if k in r} for r in fastest(records)]
    with open(os.path.join(directory, "runs.json"), "w", encoding="utf-8") as fh:
        json.dump({"runs": runs}, fh, indent=1)
        fh.write("\n")
    pts = res["points"]
    expected = {"cores": res["profile"].cores, "calib_ranks": list(calib_ranks),
                "predicted": {f"{p['strategy']}@{p['ranks']}": round(p["predicted"], 6)
                              for p in pts},
                "within_goal": sorted(f"{p['strategy']}@{p['ranks']}" for p in pts
                                      if not p["fitted"] and abs(p["err_pct"]) <= GOAL_PCT)}
    path = os.path.join(directory, "expected.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(expected, fh, indent=1)
        fh.write("\n")
    return path
