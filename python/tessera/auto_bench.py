"""`tessera auto-bench`: strategy=auto against the fixed configurations it
chooses from and the default, run side by side on one case (docs/auto.md).

The first auto run's statistics name the candidates it tried (its records'
`auto.choice`), `--also` adds fixed ones (a candidate auto left out); then
every configuration (auto, the default, each candidate
with fixed hints) runs once per repetition, in the same order every time,
so that a slow spell of the machine falls on all of them alike. A run's
figure is the bench's `output_blocked_s`: the slowest rank's time blocked in
output over the whole run. Printed: the median with min-max over the
repetitions, the ratio to the best fixed configuration and to the default,
and the choices of auto's last run file by file (switches marked).

Exit status: 0 when every run succeeded, 1 otherwise, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from .bench.case import CASE
from .bench.launch import add_case_options, add_launch_options, bench_env, bench_or_say, run_bench
from .stats.records import read_records

DEFAULT = "(default)"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera auto-bench",
        description="Time strategy=auto against each fixed candidate and the default, interleaved.")
    a = p.add_argument
    a("--np", type=int, default=CASE["np"], help=f"MPI processes ({CASE['np']})")
    case = dict(CASE, steps=24, output_every=1)
    add_case_options(a, case)
    a("--schema", help="a CDL header for the bench (e.g. apps/bench/schemas/wrfout_d01.cdl)")
    a("--compute-change", metavar="STEP:SWEEPS", help="bench --compute-change")
    a("--also", action="append", default=[], metavar="HINTS",
      help="a fixed configuration to time as well (repeatable), e.g. a candidate auto left "
           "out: the best fixed configuration is then the best of these too")
    a("--reps", type=int, default=3, help="repetitions of every configuration (3)")
    a("--out", default="", help="directory for the runs (default: a temporary one)")
    a("--bench", help="tessera-bench to run")
    add_launch_options(a, 600.0)
    return p


def bench_argv(args, out: Path) -> list:
    argv = ["--nx", str(args.nx), "--ny", str(args.ny), "--nz", str(args.nz),
            "--steps", str(args.steps), "--output-every", str(args.output_every),
            "--sweeps", str(args.sweeps), "--nocolons", "--quiet", "--out", str(out),
            "--json", str(out / "metrics.json")]
    if args.schema:
        argv += ["--schema", args.schema]
    if args.compute_change:
        argv += ["--compute-change", args.compute_change]
    return argv


def one_run(args, bench: str, hints: str, out: Path, env: dict) -> tuple:
    """(blocked seconds or None, statistics records) of one run."""
    out.mkdir(parents=True, exist_ok=True)
    stats = out / "stats.jsonl"
    stats.unlink(missing_ok=True)
    e = dict(env, TESSERA_STATS_FILE=str(stats))
    argv = bench_argv(args, out) + (["--hints", hints] if hints != DEFAULT else [])
    rc, _, stderr, _ = run_bench(args.mpiexec, args.np, bench, argv, e, out.parent / "log.txt",
                                 args.timeout)
    if rc != 0:
        print(f"tessera auto-bench: {hints}: failed: {stderr.strip()[-300:]}", file=sys.stderr)
        return None, []
    with open(out / "metrics.json", encoding="utf-8") as fh:
        blocked = json.load(fh)["output_blocked_s"]
    records, _ = read_records(str(stats)) if stats.exists() else ([], 0)
    drop_outputs(out, keep=("metrics.json", stats.name))
    return blocked, records


def drop_outputs(out: Path, keep: tuple) -> None:
    """Remove a finished run's history files, keeping its records: 21 runs of
    the WRF schema case write about 40 GB, which no disk should have to hold
    for figures that are in the records."""
    for p in out.iterdir():
        if p.name in keep:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def summary(times: dict) -> list:
    """Rows: config, median, min, max, ratio to the best fixed, ratio to the default."""
    med = {k: statistics.median(v) for k, v in times.items() if v}
    fixed = [k for k in med if k not in ("strategy=auto", DEFAULT)]
    best = min((med[k] for k in fixed), default=0.0)
    rows = []
    for k, v in times.items():
        if not v:
            rows.append((k, None, None, None, None, None))
            continue
        rows.append((k, med[k], min(v), max(v), med[k] / best if best else None,
                     med[k] / med[DEFAULT] if med.get(DEFAULT) else None))
    return rows


def choices_text(records: list) -> str:
    out = []
    for r in records:
        a = r.get("auto")
        if isinstance(a, dict):
            mark = "  [switch]" if a.get("switched") else ""
            out.append(f"  {a.get('index'):>3} {a.get('choice')}  {a.get('measured_s', 0):.4f} s"
                       f"  compute {a.get('compute_s', 0):.3f} s{mark}  ({a.get('why', '')})")
    return "\n".join(out)


def main(argv=None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    bench = bench_or_say("auto-bench", args.bench)
    if not bench:
        return 2
    env, _ = bench_env()
    root = Path(args.out or tempfile.mkdtemp(prefix="tessera-auto-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    first, records = one_run(args, bench, "strategy=auto", root / "auto-0", env)
    if first is None:
        return 1
    cands = list(dict.fromkeys(r["auto"]["choice"] for r in records if "auto" in r))
    configs = list(dict.fromkeys(["strategy=auto", DEFAULT] + cands + args.also))
    times = {c: [] for c in configs}
    times["strategy=auto"].append(first)
    last_auto, failed = records, 0
    for rep in range(args.reps):
        for i, c in enumerate(configs):
            if rep == 0 and c == "strategy=auto":
                continue  # the first auto run above is repetition 0's
            t, recs = one_run(args, bench, c, root / f"c{i}-{rep}", env)
            if t is None:
                failed += 1
                continue
            times[c].append(t)
            if c == "strategy=auto":
                last_auto = recs
    print(f"tessera auto-bench: {args.np} ranks, {args.nx}x{args.ny}x{args.nz}"
          f"{', schema ' + args.schema if args.schema else ''}, {args.steps} steps, output every "
          f"{args.output_every}, sweeps {args.sweeps}"
          f"{', compute change ' + args.compute_change if args.compute_change else ''}; "
          f"{args.reps} interleaved repetitions; total blocked s (max over ranks)")
    print(f"{'configuration':42} {'median':>8} {'min-max':>17} {'/best fixed':>11} {'/default':>9}")
    for k, m, lo, hi, rb, rd in summary(times):
        if m is None:
            print(f"{k:42} {'failed':>8}")
            continue
        print(f"{k:42} {m:8.3f} {lo:8.3f}-{hi:<8.3f} {rb:11.2f} {rd:9.2f}")
    print("auto's last run, file by file:")
    print(choices_text(last_auto))
    print(f"records of the runs in {root} (their history files are removed)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
