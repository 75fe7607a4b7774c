"""`tessera model calibrate|predict|validate`: the output cost model.

  calibrate  run short tessera-bench jobs (or read their --json records) and
             fit this machine's profile
  predict    blocked time, write time, what servers hide and memory per
             writer, for a case and strategies across process counts
  validate   the model against the published studies (irma, note2002) or
             against bench runs on this machine (here)

docs/model.md describes the equations and the profile format.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from ..cli_args import at_least, error_text, whole
from ..stats.records import read_records
from ..strategies import NAMES, ROWS, STRATEGIES
from . import profile as model_profile
from . import validate as mv
from . import validate_deflate as vd
from .calibrate import CALIBRATION, calibrate, calibrate_from_stats
from .case import bench_case
from .deflate import measure
from .deflate import require as require_deflate
from .predict import predict
from .report import lines_chart, table
from .runs import RunError, load_records, run_bench, run_matrix, save_records
from .strategy import Strategy

#: The strategies the model prices (docs/model.md), as `strategy=` names them.
STRATEGY_NAMES = NAMES
#: Hint keys the model reads as whole numbers, and their least value.
WHOLE_KEYS = {"aggregators": 1, "io_groups": 1, "io_tasks": 1, "cb_nodes": 1}


def parse_strategy(text: str) -> Strategy:
    """`serial`, `aggregate:4` (aggregators), `servers:2x1` (groups x tasks),
    or a hint string `strategy=...:key=value`; ValueError with one sentence
    for a strategy the model does not know or a knob it cannot read."""
    text = text.strip()
    if "=" in text:
        kv = {}
        for tok in text.split(":"):
            if "=" in tok:
                k, v = tok.split("=", 1)
                kv[k.strip()] = v.strip()
        name = kv.get("strategy", "direct")
        if name not in STRATEGY_NAMES:
            raise ValueError(f"unknown strategy '{name}' in '{text}' "
                             f"(strategy= takes {', '.join(STRATEGY_NAMES)})")
        for key, low in WHOLE_KEYS.items():
            if key in kv:
                whole(kv[key], f"{key} in '{text}'", low)
        try:
            return Strategy.parse(text)
        except (ValueError, KeyError):
            raise ValueError(f"'{text}': slab_bytes and buffer_bytes take sizes such as 64m "
                             "(k, m or g)") from None
    name, colon, arg = text.partition(":")
    knobs = STRATEGIES[name].short_knobs(arg if colon else None, text) \
        if name in STRATEGIES else None
    if knobs is not None:
        return Strategy(name, **knobs)
    # The short forms without an argument first, each group in the table's order.
    forms = sorted(ROWS, key=lambda r: bool(r.short_syntax))
    raise ValueError(f"unknown strategy '{text}' ("
                     f"{', '.join(r.short_syntax or r.name for r in forms)}, or strategy=...)")


def int_list(text: str, flag: str = "--np") -> list:
    """Process counts such as "1,2" or "1-6"; ValueError naming the flag and the text."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not part.strip():
            continue
        if not m or int(m.group(1)) < 1 or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise ValueError(f"{flag}: expected process counts such as 1,2 or 1-6, got '{text}'")
        out += list(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return out


def at_least_real(low: float):
    """An argparse type: a number >= low."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number >= {low:g}, got '{text}'") \
                from None
        if not value >= low:
            raise argparse.ArgumentTypeError(f"expected a number >= {low:g}, got {text}")
        return value
    parse.__name__ = f"number >= {low:g}"
    return parse


def add_case_args(p):
    a = p.add_argument
    a("--nx", type=at_least(1), default=240)
    a("--ny", type=at_least(1), default=240)
    a("--nz", type=at_least(1), default=35)
    a("--steps", type=at_least(0), default=60)
    a("--output-every", type=at_least(1), default=10)
    a("--frames-per-file", type=at_least(1), default=1)
    a("--schema", help="CDL header of the fields (default: tessera-bench's WRF-like set)")
    a("--step-s", type=at_least_real(0.0), default=0.0, help="compute seconds per step at --step-ranks")
    a("--step-ranks", type=at_least(1), default=1)
    a("--step-exp", type=float, default=1.0,
      help="compute per step scales as (step_ranks/P)**step_exp (1: perfect strong scaling)")
    a("--deflate", type=int, default=0, choices=range(10), metavar="N",
      help="NetCDF-4 zlib level of the files (hints format=netcdf4:deflate=N; 0: none)")
    a("--no-shuffle", dest="shuffle", action="store_false",
      help="with --deflate: the files say shuffle=0 (the library shuffles with a compressor "
           "by default; priced at the same rate, docs/model.md)")


def case_of(args):
    return bench_case(args.nx, args.ny, args.nz, args.steps, args.output_every,
                      args.frames_per_file, args.schema, step_s=args.step_s,
                      step_ranks=args.step_ranks, step_exp=args.step_exp,
                      deflate=args.deflate, shuffle=args.shuffle)


def deflate_text(case) -> str:
    if case.deflate <= 0:
        return ""
    return f", NetCDF-4 deflate={case.deflate}" + ("" if case.shuffle else " without shuffle")


def bench_opts(args) -> dict:
    """The bench's case options of a calibrate or validate command line."""
    return {"nx": args.nx, "ny": args.ny, "nz": args.nz, "steps": args.steps,
            "output_every": args.output_every, "schema": args.schema}


def given_records(args) -> list:
    """The runs of every --records file, in order (none: run them)."""
    records = []
    for f in args.records or []:
        records += load_records(f)
    return records


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return str(n)


def cmd_predict(args) -> int:
    prof = model_profile.load(args.profile)
    case = case_of(args)
    require_deflate(case, prof)
    strategies = [parse_strategy(s) for s in args.strategies.split(",")]
    ranks = int_list(args.ranks, "--ranks")
    rows, series, skipped = [], {}, []
    for s in strategies:
        for n in ranks:
            try:
                p = predict(case, s, prof, n)
            except ValueError as e:
                skipped.append(str(e))
                continue
            rows.append([s.label(), n, p.model_ranks, f"{p.per_output_s:.4g}", f"{p.blocked_s:.4g}",
                         f"{p.write_s:.4g}", f"{p.hidden_s:.4g}", f"{p.drain_s:.4g}",
                         f"{100 * p.io_fraction:.1f} %", human(p.mem_writer), human(p.mem_rank)])
            xs, ys = series.setdefault(s.label(), ([], []))
            xs.append(n)
            ys.append(p.blocked_s)
    if not rows:
        raise ValueError(f"nothing to predict: {skipped[0]} (--ranks {args.ranks})")
    for why in dict.fromkeys(skipped):
        print(f"tessera model: note: left out: {why}", file=sys.stderr)
    print(f"case: {args.nx} x {args.ny} x {args.nz}, {case.outputs} outputs of "
          f"{case.frame_bytes() / 1e6:.1f} MB in {case.files} files{deflate_text(case)}; "
          f"profile {prof.name}")
    print(table("predicted output cost",
                ["strategy", "procs", "model", "blocked/output s", "blocked s", "write s",
                 "hidden s", "drain s", "I/O share", "mem writer", "mem rank"], rows, 1))
    if args.png:
        print("chart:", lines_chart(args.png, f"predicted blocked time ({prof.name})",
                                    "processes", "output blocked time (s)", series,
                                    logx=args.logx, logy=args.logx))
    return 0


def run_with_stats(command: list, hints: list) -> list:
    """Run the user's own command (launcher included) once per hint string
    with TESSERA_HINTS and TESSERA_STATS_FILE set; its statistics records."""
    import subprocess
    import tempfile

    out = []
    for h in hints:
        with tempfile.TemporaryDirectory(prefix="tsr-model-") as tmp:
            sf = os.path.join(tmp, "stats.jsonl")
            env = dict(os.environ, TESSERA_HINTS=h, TESSERA_STATS_FILE=sf)
            p = subprocess.run(command, env=env, capture_output=True, text=True)
            if p.returncode != 0 or not os.path.exists(sf):
                raise RunError(f"{' '.join(command)} with TESSERA_HINTS={h}: exit {p.returncode}")
            out += read_records(sf)[0]
            print(f"  {h}: {len(out)} records so far")
    return out


def cmd_calibrate(args) -> int:
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if args.stats:
        if not command:
            print("tessera model calibrate: --stats needs -- COMMAND", file=sys.stderr)
            return 2
        try:
            recs = run_with_stats(command, args.stats_hints.split(","))
        except RunError as e:
            print(f"tessera model calibrate: {e}", file=sys.stderr)
            return 1
        prof = calibrate_from_stats(recs, model_profile.load(args.base), name=args.name)
        print(model_profile.describe(prof))
        print("profile:", model_profile.save(prof, args.out))
        return 0
    if args.only_deflate:
        return calibrate_deflate(args, command)
    records = given_records(args)
    if not args.records:
        strategies = [Strategy.parse(h) for h in CALIBRATION]
        opts = bench_opts(args)
        print(f"calibrating: {len(strategies)} strategies x {args.np} processes x "
              f"{args.repeat} repeats")
        try:
            for _ in range(args.repeat):
                records += run_matrix(strategies, int_list(args.np), opts, log=print,
                                      bench=args.bench, command=command or None)
        except RunError as e:
            print(f"tessera model calibrate: {e}", file=sys.stderr)
            return 1
        if args.deflate:
            records += deflate_runs(args, command)
        if args.save_runs:
            print("runs:", save_records(records, args.save_runs))
    prof = calibrate(records, name=args.name, cores=args.cores or os.cpu_count() or 1)
    print(model_profile.describe(prof))
    print("profile:", model_profile.save(prof, args.out))
    return 0


def deflate_runs(args, command) -> list:
    """Serial on one process writing NetCDF-4 without and with deflate=N,
    alternated, --repeat times: the pair deflate.measure needs."""
    opts = bench_opts(args)
    level = args.deflate or 1
    out = []
    for i in range(args.repeat):
        for extra in ("format=netcdf4", f"format=netcdf4:deflate={level}")[::1 - 2 * (i % 2)]:
            rec = run_bench(Strategy("serial"), 1, opts, bench=args.bench,
                            command=command or None, extra_hints=extra)
            print(f"  serial 1 rank {extra}: blocked {rec['output_blocked_s']:.3f} s")
            out.append(rec)
    return out


def calibrate_deflate(args, command) -> int:
    """--only-deflate: measure deflate_bw alone and add it to --base's values
    (the other parameters stay as they are)."""
    prof = model_profile.load(args.base)
    records = given_records(args)
    try:
        records = records or deflate_runs(args, command)
    except RunError as e:
        print(f"tessera model calibrate: {e}", file=sys.stderr)
        return 1
    if args.save_runs:
        print("runs:", save_records(records, args.save_runs))
    rate = measure(records)
    if not rate:
        print("tessera model calibrate: no serial pair with and without deflate in which "
              "compression took longer", file=sys.stderr)
        return 1
    prof.values["deflate_bw"] = rate
    print(f"deflate_bw = {rate / 1e6:.1f} MB/s (input bytes per second of one writer, "
          f"fastest runs)")
    print("profile:", model_profile.save(prof, args.out))
    return 0


def cmd_validate(args) -> int:
    if args.what == "irma":
        res = mv.irma(png=args.png)
        if args.save_profile:
            print("profile:", model_profile.save(res["profile"], args.save_profile))
    elif args.what == "note2002":
        mv.note2002(png=args.png)
    elif args.what == "deflate":
        return validate_deflate(args)
    else:
        records = given_records(args)
        if not records:
            strategies = [parse_strategy(s) for s in (args.strategies or HERE_STRATEGIES)
                          .split(",")]
            opts = bench_opts(args)
            for _ in range(args.repeat):
                records += run_matrix(strategies, int_list(args.np or "1-6"), opts, log=print)
                if args.save_runs:
                    # After every repeat, so a run stopped by a time limit keeps the
                    # repeats it finished (rerun with --records to get the table).
                    save_records(records, args.save_runs)
            if args.save_runs:
                print("runs:", args.save_runs)
        if args.calib_ranks == "ends":
            counts = sorted({int(r["ranks"]["model"]) + int(r["ranks"]["io"]) for r in records})
            calib = (counts[0], counts[-1])
        else:
            calib = tuple(int_list(args.calib_ranks))
        res = mv.here(records, calib_ranks=calib, cores=args.cores, png=args.png)
        if args.save_profile:
            res["profile"].description = ("the 2-core development machine (Open MPI, page "
                                          "cache), calibrated with tessera-bench runs")
            print("profile:", model_profile.save(res["profile"], args.save_profile))
        if args.record:
            print("recorded:", mv.record_fixture(records, res, calib, args.record))
    return 0


HERE_STRATEGIES = "serial,direct,aggregate:2,split,servers:1x1"


def validate_deflate(args) -> int:
    """validate deflate: run (or read) NetCDF-4 runs with and without
    compression and print them against the profile's predictions."""
    prof = model_profile.load(args.profile)
    records = given_records(args)
    if not records:
        opts = bench_opts(args)
        strategies = [parse_strategy(s) for s in (args.strategies or vd.DEFAULT_STRATEGIES)
                      .split(",")]
        save = (lambda recs: save_records(recs, args.save_runs)) if args.save_runs else None
        try:
            records = vd.run(strategies, int_list(args.np or vd.DEFAULT_NP), opts,
                             args.deflate or 1, args.repeat, save=save)
        except RunError as e:
            print(f"tessera model validate: {e}", file=sys.stderr)
            return 1
        if args.save_runs:
            print("runs:", args.save_runs)
    require_deflate(case_of(args).with_(deflate=1), prof)
    vd.compare(records, prof)
    return 0


def parser():
    p = argparse.ArgumentParser(prog="tessera model", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    pr = sub.add_parser("predict", help="predict output cost across process counts")
    pr.add_argument("--profile", default="here", help="profile name or JSON file")
    pr.add_argument("--strategies", default="serial,direct,aggregate,split,servers:1x1")
    pr.add_argument("--ranks", default="2,4,8,16,32,64")
    pr.add_argument("--png", help="chart of blocked time per strategy")
    pr.add_argument("--logx", action="store_true", help="log axes in the chart")
    add_case_args(pr)

    ca = sub.add_parser("calibrate", help="fit this machine's profile from bench runs")
    ca.add_argument("--np", default="1,2", help="process counts to run (1,2)")
    ca.add_argument("--repeat", type=int, default=3, help="runs per configuration; the "
                                                          "fastest counts (3)")
    ca.add_argument("--records", nargs="*", help="use these saved runs instead of running")
    ca.add_argument("--save-runs", help="keep the runs' records (JSON)")
    ca.add_argument("--bench", help="tessera-bench executable")
    ca.add_argument("--cores", type=int, default=0, help="cores of the machine (default: all)")
    ca.add_argument("--name", default="here")
    ca.add_argument("--out", default=os.path.join(model_profile.PROFILE_DIR, "here.json"))
    ca.add_argument("--stats", action="store_true",
                    help="run -- COMMAND (the user's own model, launcher included) under "
                         "TESSERA_STATS_FILE and refit the file-system parameters of --base")
    ca.add_argument("--stats-hints", default="strategy=serial,strategy=aggregate:aggregators=2,"
                                             "strategy=direct",
                    help="--stats: TESSERA_HINTS for each run, comma-separated groups")
    ca.add_argument("--base", default="here", help="--stats, --only-deflate: profile to start "
                                                   "from")
    ca.add_argument("--only-deflate", action="store_true",
                    help="measure deflate_bw alone (serial, 1 process, NetCDF-4 with and "
                         "without --deflate N, default 1) and add it to --base")
    ca.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- COMMAND: a program taking tessera-bench's options to run instead "
                         "(or, with --stats, any program)")
    add_case_args(ca)
    ca.set_defaults(nx=200, ny=200, nz=30, steps=6, output_every=2)

    va = sub.add_parser("validate", help="the model against published studies or runs here")
    va.add_argument("what", choices=("irma", "note2002", "here", "deflate"))
    va.add_argument("--profile", default="here", help="deflate: the profile to predict with")
    va.add_argument("--png")
    va.add_argument("--save-profile", help="irma, here: write the fitted profile here")
    va.add_argument("--records", nargs="*", help="here: saved runs instead of running")
    va.add_argument("--save-runs")
    va.add_argument("--np", help="here: process counts (1-6); deflate: (2,4)")
    va.add_argument("--repeat", type=int, default=3)
    va.add_argument("--calib-ranks", default="ends",
                    help="here: calibrate on the runs with these process counts (default "
                         "'ends': the fewest and the most, as for Irma); the others are "
                         "predicted")
    va.add_argument("--strategies", help=f"here: ({HERE_STRATEGIES}); deflate: "
                                         "(serial,aggregate:2,servers:1x1)")
    va.add_argument("--cores", type=int, default=0,
                    help="here: cores of the machine the runs were taken on (default: this one's)")
    va.add_argument("--record", metavar="DIR",
                    help="here: write the fastest runs and the predictions as a test fixture "
                         "(tests/python/fixtures/model)")
    add_case_args(va)
    va.set_defaults(nx=200, ny=200, nz=30, steps=6, output_every=2)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return {"predict": cmd_predict, "calibrate": cmd_calibrate,
                "validate": cmd_validate}[args.cmd](args)
    except (OSError, ValueError) as e:
        print(f"tessera model: {error_text(e)}", file=sys.stderr)
        return 2
