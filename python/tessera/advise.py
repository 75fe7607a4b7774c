"""`tessera advise`: recommend a strategy and its knobs for a case on a
machine profile, from the cost model alone (no runs).

Candidates are compared at the same number of processes, servers included,
by predicted wall time: a server rank is a rank that no longer computes, so
servers must hide more output than the compute they take away. Candidates
whose Tessera memory on a rank passes --mem-limit are left out. The answer is
the best candidate, its predicted blocked time and memory, and the best one
of a different strategy as the alternative.
"""
from __future__ import annotations

import argparse
import sys

from . import model_profile
from .cli_args import at_least, error_text
from .model import add_case_args, case_of, deflate_text, human
from .model_deflate import NoDeflateRate, require
from .model_predict import predict
from .model_report import table
from .model_strategy import Strategy


def powers(limit: int) -> list:
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def candidates(procs: int, buffers=(32 << 20, 128 << 20, 512 << 20)) -> list:
    """The knob settings worth predicting at `procs` processes."""
    out = [Strategy("serial"), Strategy("direct"), Strategy("split")]
    out += [Strategy("aggregate", aggregators=n) for n in powers(procs) if n < procs or n == 1]
    for g in powers(8):
        for t in powers(8):
            if g * t * 2 > procs:             # keep at least half the ranks computing
                continue
            for b in buffers:
                out.append(Strategy("servers", io_groups=g, io_tasks=t, buffer_bytes=b))
    return out


def knobs(s: Strategy, case=None) -> str:
    h = s.hints()
    if s.name == "servers":
        h += f":buffer_bytes={s.buffer_bytes >> 20}m"
    if case is not None and case.deflate > 0:
        h += f":format=netcdf4:deflate={case.deflate}" + ("" if case.shuffle else ":shuffle=0")
    return h


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
        if mem_limit and max(p.mem_writer, p.mem_rank, s.buffer_bytes if s.name == "servers"
                             else 0) > mem_limit:
            continue
        preds.append((s, p))
    # Equal time (to 0.1 %): the smaller memory first.
    preds.sort(key=lambda sp: (round(sp[1].wall_s, 3 - int(f"{sp[1].wall_s:e}".split("e")[1])),
                               sp[1].blocked_s, max(sp[1].mem_writer, sp[1].mem_rank,
                                                     sp[0].buffer_bytes if sp[0].name == "servers"
                                                     else 0)))
    return preds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tessera advise", description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="here", help="profile name or JSON file")
    ap.add_argument("--procs", type=at_least(1), required=True,
                    help="processes in all (servers included)")
    ap.add_argument("--mem-limit", default="0", help="most memory Tessera may hold on one "
                                                     "rank, e.g. 512m (0: no limit)")
    ap.add_argument("--top", type=at_least(1), default=8, help="rows of the ranking to print")
    ap.add_argument("--background", type=float, default=0.0,
                    help="other busy processes sharing the machine's cores (0)")
    ap.add_argument("--strategies", default="",
                    help="only these strategies, comma-separated (e.g. aggregate,servers for "
                         "one shared file; default: all)")
    add_case_args(ap)
    args = ap.parse_args(argv)
    try:
        prof = model_profile.load(args.profile)
    except (OSError, ValueError) as e:
        print(f"tessera advise: {error_text(e)}", file=sys.stderr)
        return 2
    try:
        limit = Strategy.parse(f"strategy=serial:slab_bytes={args.mem_limit}").slab_bytes \
            if args.mem_limit not in ("0", "") else 0
    except ValueError:
        print(f"tessera advise: --mem-limit: expected a size such as 512m (k, m or g), got "
              f"'{args.mem_limit}'", file=sys.stderr)
        return 2
    case = case_of(args)
    try:
        require(case, prof)
    except NoDeflateRate as e:
        print(f"tessera advise: {e}", file=sys.stderr)
        return 2
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
    names = tuple(n for n in args.strategies.split(",") if n)
    unknown = set(names) - {"serial", "direct", "split", "aggregate", "servers"}
    if unknown:
        print(f"tessera advise: unknown strategy {sorted(unknown)[0]} in --strategies "
              "(serial, direct, split, aggregate, servers)", file=sys.stderr)
        return 2
    ranked = advise(case, prof, args.procs, limit, args.background, names)
    if not ranked:
        print("tessera advise: no candidate fits the memory limit", file=sys.stderr)
        return 1
    best_s, best = ranked[0]
    alt = next(((s, p) for s, p in ranked if s.name != best_s.name), None)
    rows = [[knobs(s, case), f"{p.wall_s:.4g}", f"{p.blocked_s:.4g}", f"{p.hidden_s:.4g}",
             human(p.mem_writer), human(p.mem_rank)] for s, p in ranked[:args.top]]
    print(f"case: {args.nx} x {args.ny} x {args.nz}, {case.outputs} outputs of "
          f"{case.frame_bytes() / 1e6:.1f} MB{deflate_text(case)}, {args.procs} processes; "
          f"profile {prof.name}")
    print(table("predicted, best first", ["hints", "wall s", "blocked s", "hidden s",
                                          "mem writer", "mem rank"], rows, 1))
    print(f"recommended: TESSERA_HINTS={knobs(best_s, case)}  (blocked {best.blocked_s:.4g} s, "
          f"wall {best.wall_s:.4g} s, {human(max(best.mem_writer, best.mem_rank))} per rank)")
    if alt:
        s, p = alt
        print(f"alternative: TESSERA_HINTS={knobs(s, case)}  (blocked {p.blocked_s:.4g} s, "
              f"wall {p.wall_s:.4g} s, {human(max(p.mem_writer, p.mem_rank))} per rank)")
    return 0
