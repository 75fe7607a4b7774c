"""`tessera advise`: recommend a strategy and its knobs for a case on a
machine profile, from the cost model alone (no runs).

Candidates are compared at the same number of processes, servers included,
by predicted wall time: a server rank is a rank that no longer computes, so
servers must hide more output than the compute they take away. Candidates
whose Tessera memory on a rank passes --mem-limit are left out. The answer is
the best candidate and the best one of a different strategy as the
alternative, each with its predicted times, the knob values whose predicted
wall time is within FLAT_PCT of it (the optimum is flat: a range, not one
count), its memory on the writers (or servers) and on the other ranks, and
what WRF calls it (io_form_history, &namelist_quilt, nproc_x x nproc_y);
then what the prediction leaves out or cannot be trusted for (input and
setup, an unbounded file system, striping).
"""
from __future__ import annotations

import argparse
import sys
import textwrap

from .model import profile as model_profile
from .cli_args import at_least, error_text
from .model.command import STRATEGY_NAMES, add_case_args, at_least_real, case_of, deflate_text, human
from .model.deflate import NoDeflateRate, require
from .model.predict import predict
from .model.report import table
from .model.strategy import Strategy, grid
from .strategies import in_order, reserves_servers, row
from .strategy.row import span  # noqa: F401 (advise.span: the flat ranges' text)

#: Candidates of one strategy whose predicted wall time is within this share
#: of its best are reported as a range ("aggregators 4-16 within 3 %").
FLAT_PCT = 3.0


def candidates(procs: int, buffers=(32 << 20, 128 << 20, 512 << 20)) -> list:
    """The knob settings worth predicting at `procs` processes, each row's
    in its advise_order."""
    return [Strategy(r.name, **k) for r in in_order("advise_order")
            for k in r.candidates(procs, buffers)]


def knobs(s: Strategy, case=None) -> str:
    h = s.hints()
    if reserves_servers(s.name):
        h += f":buffer_bytes={s.buffer_bytes >> 20}m"
    if case is not None and case.deflate > 0:
        h += f":format=netcdf4:deflate={case.deflate}" + ("" if case.shuffle else ":shuffle=0")
    return h


def memory_of(s: Strategy, p) -> float:
    """The most Tessera holds on one rank of candidate s (the --mem-limit test)."""
    return max(p.mem_writer, p.mem_rank, s.buffer_bytes if reserves_servers(s.name) else 0)


def advise(case, profile, procs: int, mem_limit: float = 0.0, background: float = 0.0,
           names=()) -> list:
    """Predictions for every candidate that fits in memory, best first.
    A compressed case on a profile without deflate_bw raises NoDeflateRate."""
    require(case, profile)
    preds = []
    for s in candidates(procs):
        if names and s.name not in names:
            continue
        try:
            p = predict(case, s, profile, procs, background=background)
        except ValueError:
            continue
        if mem_limit and memory_of(s, p) > mem_limit:
            continue
        preds.append((s, p))
    # Equal time (to 0.1 %): the smaller memory first.
    preds.sort(key=lambda sp: (round(sp[1].wall_s, 3 - int(f"{sp[1].wall_s:e}".split("e")[1])),
                               sp[1].blocked_s, memory_of(*sp)))
    return preds


# --- what WRF calls it ---------------------------------------------------------

def netcdf4(case) -> bool:
    return case.deflate > 0


def wrf_short(s: Strategy, case) -> str:
    """The WRF setting of a candidate in a few words (the table's column)."""
    return s.row().wrf_short(s, case)


def wrf_setting(s: Strategy, case, procs: int) -> str:
    """What a WRF user sets for the same data movement, the reverse of
    tessera-bench's namelist mapping (apps/bench/namelist.c,
    bench_namelist_hints): io_form_history, and for servers WRF's quilting
    with the model grid the servers leave."""
    model, px, py = grid(case, s, procs)
    return s.row().wrf_setting(s, case, procs, model, px, py)


# --- where the optimum is flat ----------------------------------------------------

def flat_range(ranked: list, name: str, pct: float = FLAT_PCT) -> str:
    """The knob values of strategy `name` whose predicted wall time is within
    pct % of its best candidate's ("" when the strategy has no knob here)."""
    same = [(s, p) for s, p in ranked if s.name == name]
    if len(same) < 2:
        return ""
    top = min(p.wall_s for _, p in same)
    near = [s for s, p in same if p.wall_s <= top * (1.0 + pct / 100.0)]
    return row(name).flat_text(same, near, pct)


def close_strategies(ranked: list, best, pct: float = FLAT_PCT) -> list:
    """The best candidate of every other strategy within pct % of `best`."""
    out, seen = [], {best[0].name}
    for s, p in ranked:
        if s.name not in seen and p.wall_s <= best[1].wall_s * (1.0 + pct / 100.0):
            out.append(s.label())
        seen.add(s.name)
    return out


# --- whose memory ------------------------------------------------------------------

def memory_text(s: Strategy, p, case, procs: int) -> str:
    return s.row().memory_text(s, human(p.mem_writer), human(p.mem_rank),
                               grid(case, s, procs)[0])


def describe(label: str, sp: tuple, ranked: list, case, procs: int, close=()) -> list:
    s, p = sp
    flat = flat_range(ranked, s.name)
    lines = [f"{label}: TESSERA_HINTS={knobs(s, case)}",
             f"  predicted: wall {p.wall_s:.4g} s, blocked {p.blocked_s:.4g} s"
             + (f", hidden behind compute {p.hidden_s:.4g} s" if p.hidden_s > 0 else "")
             + (f"; {flat} of its wall time" if flat else ""),
             *([f"  also within {FLAT_PCT:g} % of its wall time: {', '.join(close)}"]
               if close else []),
             f"  memory: {memory_text(s, p, case, procs)}",
             f"  WRF: {wrf_setting(s, case, procs)}"]
    return lines


# --- what the prediction leaves out ---------------------------------------------------

def shared_writers(s: Strategy, case, procs: int) -> int:
    """Ranks writing one shared file at once (0: one writer per file)."""
    return s.row().shared_writers(s, grid(case, s, procs)[0])


def notes(prof, case, best: tuple, procs: int) -> list:
    out = []
    if case.step_time(1) > 0:
        out.append("wall time is the model's compute (--step-s) plus its blocked output; "
                   "reading input and setup are left out, so a real run takes longer")
    else:
        out.append("wall time is the blocked output alone (no --step-s: no compute); reading "
                   "input and setup are left out")
    if float(prof.values.get("fs_bw", 0) or 0) <= 0:
        out.append(f"profile {prof.name} leaves the file system's bandwidth unbounded (fs_bw "
                   "= 0 or absent): more writers never saturate it in the model, so the "
                   "writer counts (aggregators, io_tasks) are not to be trusted; measure the "
                   "file system you write to (tessera model calibrate --stats, docs/model.md)")
    s = best[0]
    n = shared_writers(s, case, procs)
    if prof.stripe_count > 1 and n > 1:
        k = min(prof.stripe_count, n)
        out.append(f"striping: {n} ranks write one shared file and profile {prof.name}'s file "
                   f"system stripes over up to {prof.stripe_count} storage targets: add "
                   f":striping_factor={k} to the hints (MPI-IO passes it to Lustre at create; "
                   f"or lfs setstripe -c {k} on the output folder; tessera tune searches "
                   "striping_unit). The model has no striping term, so the times above do not "
                   "count it: unstriped, the Irma study's PnetCDF runs took 1.1x to 2.6x the "
                   "wall time of its stripe-12 runs")
    elif prof.stripe_count > 1:
        out.append(f"striping: one writer per file here, so striping "
                   f"({prof.stripe_count} storage targets) helps little")
    if netcdf4(case):
        out.append("WRF equivalents name the data movement; whether stock WRF compresses them "
                   "depends on its NetCDF build. In WRF with Tessera (io_form_history = 8, "
                   "docs/wrf.md) the hints set format and deflate exactly")
    return out


def wrapped(line: str, width: int = 100) -> str:
    """A long line of the answer wrapped, continued under its own text."""
    if "TESSERA_HINTS=" in line:
        return line                 # one line to copy, however long
    lead = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.fill(line, width, subsequent_indent=lead + "  ", break_on_hyphens=False,
                         break_long_words=False)


def refuse(text: str) -> int:
    print(f"tessera advise: {text}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tessera advise", description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="here", help="profile name or JSON file")
    ap.add_argument("--procs", type=at_least(1), required=True,
                    help="processes in all (servers included)")
    ap.add_argument("--mem-limit", default="0", help="most memory Tessera may hold on one "
                                                     "rank, e.g. 512m (0: no limit)")
    ap.add_argument("--top", type=at_least(1), default=8, help="rows of the ranking to print")
    ap.add_argument("--background", type=at_least_real(0.0), default=0.0,
                    help="other busy processes sharing the machine's cores (0)")
    ap.add_argument("--strategies", default="",
                    help="only these strategies, comma-separated (e.g. aggregate,servers for "
                         "one shared file; default: all)")
    add_case_args(ap)
    args = ap.parse_args(argv)
    names = tuple(n.strip() for n in args.strategies.split(",") if n.strip())
    unknown = [n for n in names if n not in STRATEGY_NAMES]
    if unknown:
        return refuse(f"unknown strategy {unknown[0]} in --strategies "
                      f"({', '.join(STRATEGY_NAMES)})")
    try:
        prof = model_profile.load(args.profile)
    except (OSError, ValueError) as e:
        return refuse(error_text(e))
    try:
        limit = Strategy.parse(f"strategy=serial:slab_bytes={args.mem_limit}").slab_bytes \
            if args.mem_limit not in ("0", "") else 0
    except ValueError:
        return refuse(f"--mem-limit: expected a size such as 512m (k, m or g), got "
                      f"'{args.mem_limit}'")
    case = case_of(args)
    try:
        require(case, prof)
    except NoDeflateRate as e:
        return refuse(str(e))
    if prof.cores and args.procs > prof.cores:
        # The profile's CPU terms describe its machine: more processes than its
        # cores are predicted as sharing them, which a cluster would not do.
        print(f"tessera advise: note: profile {prof.name} describes a machine of {prof.cores} "
              f"cores, so {args.procs} processes are predicted as sharing them; for a cluster, "
              f"measure its own profile (tessera model calibrate, docs/model.md) and pass "
              f"--profile FILE", file=sys.stderr)
    if case.step_time(1) <= 0:
        print("tessera advise: note: no --step-s given, so servers cannot hide anything "
              "behind compute", file=sys.stderr)
    ranked = advise(case, prof, args.procs, limit, args.background, names)
    if not ranked:
        if limit and advise(case, prof, args.procs, 0, args.background, names):
            print(f"tessera advise: no candidate fits --mem-limit {args.mem_limit}",
                  file=sys.stderr)
        else:
            many = "es" if args.procs != 1 else ""
            print(f"tessera advise: no candidate of {', '.join(names) or 'any strategy'} runs "
                  f"on {args.procs} process{many} (servers keep at least half the processes "
                  "computing)", file=sys.stderr)
        return 1
    best = ranked[0]
    alt = next(((s, p) for s, p in ranked if s.name != best[0].name), None)
    rows = [[knobs(s, case), wrf_short(s, case), f"{p.wall_s:.4g}", f"{p.blocked_s:.4g}",
             f"{p.hidden_s:.4g}", human(p.mem_writer), human(p.mem_rank)]
            for s, p in ranked[:args.top]]
    print(f"case: {args.nx} x {args.ny} x {args.nz}, {case.outputs} outputs of "
          f"{case.frame_bytes() / 1e6:.1f} MB{deflate_text(case)}, {args.procs} processes; "
          f"profile {prof.name}")
    print(table("predicted, best first", ["hints", "WRF", "wall s", "blocked s", "hidden s",
                                          "mem writer/server", "mem other rank"], rows, 2))
    out = describe("recommended", best, ranked, case, args.procs, close_strategies(ranked, best))
    if alt:
        out += describe("alternative", alt, ranked, case, args.procs)
    out.append("notes:")
    out += [f"  - {n}" for n in notes(prof, case, best, args.procs)]
    print("\n".join(wrapped(line) for line in out))
    return 0
