"""`tessera demo`: run tessera-bench once per output strategy, at equal total
ranks, on a WRF-like case; verify every run's output (--check); print one
comparison table and draw it as a PNG. `make demo` runs this.

Then each strategy's plain counterpart (`tessera-bench --plain`, the same
files without Tessera; `tessera overhead` names the pairs) runs once, also
verified, and a second table prints the ratios Tessera / plain. One run a
side has no spread: `tessera overhead` repeats them for paired medians.

A strategy the library was built without (e.g. no PnetCDF: direct and
aggregate; servers before they exist) is reported as skipped, not failed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from . import overhead
from .launch import BENCH_EXIT_NOTBUILT, find_bench, mpiexec_command
from .plot import plot
from .results import ResultsError, case_text
from .table import format_table
from .textout import step

#: strategy -> hints, in the order the table shows them. Servers take one of
#: the ranks, so every strategy runs on the same number of processes.
STRATEGIES = {
    "serial": "strategy=serial",
    "direct": "strategy=direct",
    "aggregate": "strategy=aggregate:aggregators=2",
    "split": "strategy=split",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",
}

#: The demo case: WRF-like fields, sized to finish in a few minutes on 2 cores.
CASE = {"np": 4, "nx": 240, "ny": 240, "nz": 35, "steps": 60, "output_every": 10, "sweeps": 3}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera demo",
        description="Run tessera-bench for every built strategy at equal ranks, verify "
                    "each run's output, and compare them in a table and a chart.")
    a = p.add_argument
    a("--bench", help="tessera-bench executable (default: PATH, then build/apps/bench)")
    a("--out", default="out/demo", help="directory for results, logs and the chart (out/demo)")
    a("--strategies", default=",".join(STRATEGIES),
      help="comma-separated strategies to run (default: all; unbuilt ones are skipped)")
    a("--np", type=int, default=CASE["np"], help="MPI processes per run, I/O servers included (4)")
    for key in ("nx", "ny", "nz", "steps", "sweeps"):
        a(f"--{key}", type=int, default=CASE[key], help=f"bench --{key} ({CASE[key]})")
    a("--output-every", type=int, default=CASE["output_every"],
      help=f"bench --output-every ({CASE['output_every']})")
    a("--schema", help="bench --schema FILE.cdl (default: the WRF-like default fields)")
    a("--mpiexec", default="mpiexec", help="MPI launcher (mpiexec)")
    a("--timeout", type=float, default=900.0, help="seconds allowed per run (900)")
    a("--no-plain", action="store_true",
      help="skip the runs without Tessera and the table of ratios")
    a("--keep", action="store_true", help="keep the history files (removed after each "
                                          "verified run to save disk)")
    return p


def bench_args(args, name: str, out: Path) -> list[str]:
    argv = ["--nx", str(args.nx), "--ny", str(args.ny), "--nz", str(args.nz),
            "--steps", str(args.steps), "--output-every", str(args.output_every),
            "--sweeps", str(args.sweeps), "--check", "--quiet",
            "--out", str(out / f"{name}-files"), "--json", str(out / f"{name}.json")]
    if name.startswith("plain-"):
        argv += ["--plain", name[len("plain-"):]]
    else:
        argv += ["--hints", STRATEGIES[name]]
    if args.schema:
        argv += ["--schema", args.schema]
    return argv


def bench_message(stderr: str, stdout: str = "") -> str:
    """What the bench said about a failure: its own lines ("tessera-bench: ...",
    "check: FAILED: ..."), not the launcher's banners."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines()]
    own = [ln for ln in lines if ln.startswith(("tessera-bench:", "check: FAILED"))]
    if own:
        return own[0]
    rest = [ln for ln in lines if ln and not set(ln) <= set("-=")]
    return rest[-1] if rest else "no message"


def run_one(args, name: str, bench: str, out: Path, env: dict) -> dict:
    """One bench run; returns its record with demo_status and demo_message."""
    json_path = out / f"{name}.json"
    files = out / f"{name}-files"
    for stale in (json_path,):
        if stale.exists():
            stale.unlink()
    shutil.rmtree(files, ignore_errors=True)
    cmd = mpiexec_command(args.mpiexec, args.np) + [bench] + bench_args(args, name, out)
    rec = {"strategy": name, "hints": STRATEGIES.get(name, "")}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = -1, str(e.stdout or ""), f"timed out after {args.timeout:.0f} s"
    except OSError as e:
        rc, stdout, stderr = -1, "", f"cannot run {cmd[0]}: {e.strerror}"
    elapsed = time.monotonic() - t0
    (out / f"{name}.log").write_text(f"$ {' '.join(cmd)}\n{stdout}{stderr}", encoding="utf-8")
    if not args.keep:
        shutil.rmtree(files, ignore_errors=True)
    if rc == BENCH_EXIT_NOTBUILT or "TSR_ENOTBUILT" in stderr:
        rec.update(demo_status="not built",
                   demo_message=f"not built into this library ({bench_message(stderr)})")
        return rec
    if rc != 0:
        rec.update(demo_status="failed",
                   demo_message=f"exit {rc}: {bench_message(stderr, stdout)}")
        return rec
    try:
        with open(json_path, encoding="utf-8") as fh:
            rec.update(json.load(fh))
    except (OSError, json.JSONDecodeError) as e:
        rec.update(demo_status="failed", demo_message=f"no metrics in {json_path}: {e}")
        return rec
    rec["strategy"] = name  # the table names what was asked for
    if rec.get("check") != "passed":
        rec.update(demo_status="failed", demo_message=f"check {rec.get('check')}")
        return rec
    rec.update(demo_status="ok", demo_message="", demo_elapsed_s=round(elapsed, 3))
    return rec


def progress(rec: dict, elapsed: float) -> str:
    st = rec["demo_status"]
    if st == "ok":
        return (f"done in {elapsed:.1f} s: wall {rec['wall_s']:.2f} s, output blocked "
                f"{rec['output_blocked_s']:.3f} s, {rec['files']} files verified")
    if st == "not built":
        return "skipped: not built into this library"
    return f"FAILED: {rec['demo_message']}"


def plain_runs(args, bench: str, out: Path, env: dict, records: list, console) -> list:
    """The plain counterpart of every strategy that ran, once each."""
    methods = []
    for r in records:
        pair = overhead.PAIRS.get(r["strategy"])
        if r["demo_status"] == "ok" and pair and pair[1] not in methods:
            methods.append(pair[1])
    runs = []
    for i, method in enumerate(methods, 1):
        def one(name=f"plain-{method}"):
            t0 = time.monotonic()
            rec = run_one(args, name, bench, out, env)
            return rec, progress(rec, time.monotonic() - t0)
        runs.append(step(console, f"[plain {i}/{len(methods)}] {method:<9} running tessera-bench "
                                  f"--plain --check on {args.np} processes ...", one))
    return runs


def print_ratios(args, records: list, plain: list) -> None:
    """Tessera / plain per strategy, in overhead's table (one run a side)."""
    by_side = {}
    for r in records + plain:
        if r["demo_status"] == "ok":
            side = r["strategy"].replace("plain-", "plain:", 1)
            by_side[(args.np, side)] = [r]
    names = [r["strategy"] for r in records
             if r["strategy"] in overhead.PAIRS and (args.np, r["strategy"]) in by_side
             and (args.np, "plain:" + overhead.PAIRS[r["strategy"]][1]) in by_side]
    if not names:
        return
    print()
    print("Tessera / plain (the same files written without Tessera; one run each, no spread: "
          "`tessera overhead` repeats them)")
    print(overhead.table(overhead.summarise(by_side, names, [args.np]), os.cpu_count() or 1))
    print()


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown or not names:
        print(f"tessera demo: unknown strategy {', '.join(unknown) or '(none)'}; "
              f"choose from {', '.join(STRATEGIES)}", file=sys.stderr)
        return 2
    bench = find_bench(args.bench)
    if not bench:
        print("tessera demo: tessera-bench not found; build it with `make build` or pass "
              "--bench PATH", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    if env.pop("TESSERA_HINTS", None):
        print("tessera demo: ignoring TESSERA_HINTS so that each run uses its own strategy")
    cores = os.cpu_count() or 1
    print(f"tessera demo: WRF-like case {args.nx} x {args.ny} x {args.nz}, {args.steps} steps, "
          f"history every {args.output_every} steps ({args.steps // args.output_every + 1} "
          f"outputs), {args.np} MPI processes per strategy on {cores} cores")
    if args.np > cores:
        print(f"  ({args.np} processes share {cores} cores: compare strategies with each other, "
              f"not with other machines)")
    records = []
    console = Console(file=sys.stdout, highlight=False)
    for i, name in enumerate(names, 1):
        def one(name=name):
            t0 = time.monotonic()
            rec = run_one(args, name, bench, out, env)
            return rec, progress(rec, time.monotonic() - t0)
        records.append(step(console, f"[{i}/{len(names)}] {name:<9} running tessera-bench "
                                     f"--check on {args.np} processes ...", one))
    plain = [] if args.no_plain else plain_runs(args, bench, out, env, records, console)
    results = out / "results.json"
    results.write_text(json.dumps({"runs": records, "plain_runs": plain}, indent=2) + "\n",
                       encoding="utf-8")
    ran = [r for r in records if r["demo_status"] == "ok"]
    failed = [r for r in records + plain if r["demo_status"] == "failed"]
    print()
    case = case_text(records)
    if case:
        print(f"Output strategies compared: {case}, {args.np} processes each")
    print(format_table(records, legend=True))
    print()
    if ran:
        try:
            png = plot(records, str(out / "tessera-demo.png"))
            print(f"chart: {png}")
        except (ResultsError, ImportError, OSError) as e:
            print(f"tessera demo: no chart ({e})", file=sys.stderr)
    if plain:
        print_ratios(args, records, plain)
    print(f"results: {results} (logs: {out}/<strategy>.log)")
    if failed or not ran:
        print(f"tessera demo: {len(failed)} run(s) failed" if failed else
              "tessera demo: no strategy ran", file=sys.stderr)
        return 1
    verified = len(ran) + sum(r["demo_status"] == "ok" for r in plain)
    print(f"all {verified} runs verified: every value of every file matched")
    return 0
