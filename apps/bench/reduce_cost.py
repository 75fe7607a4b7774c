#!/usr/bin/env python3
"""What reduce= costs the model: blocked output time of tessera-bench with
and without --reduce, per strategy, runs interleaved (with, without, next
strategy, ...) so that a slow spell of a shared machine hits both alike.
Prints a Markdown table of medians with the min-max spread (docs/reductions.md):
the whole blocked time, and the part before the final drain (output_blocked_s
less drain_s: tsr_finalize waits there for what the I/O servers still write,
the last derived file included).

Usage: reduce_cost.py BENCH [--runs 5] [--np 2] [--strategies serial,...] [--out DIR]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = ["--nx", "160", "--ny", "120", "--nz", "10", "--steps", "5", "--output-every", "1",
        "--quiet"]
SPEC = "T2/max@3+T2/min@3+T/mean@3+T/std@3+U/mean@3+V/mean@3"
STRATEGIES = {  # name -> (extra processes, hints)
    "serial": (0, "strategy=serial"),
    "direct": (0, "strategy=direct"),
    "aggregate": (0, "strategy=aggregate,aggregators=1"),
    "servers": (1, "strategy=servers,io_tasks=1"),
}


def run(bench, np_, hints, reduce, out):
    out.mkdir(parents=True)
    cmd = ["mpiexec", "-n", str(np_), bench] + CASE + ["--hints", hints, "--out", str(out),
                                                      "--json", str(out / "r.json")]
    if reduce:
        cmd += ["--reduce", SPEC]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300)
    m = json.loads((out / "r.json").read_text())
    shutil.rmtree(out)
    return m["output_blocked_s"], m["output_blocked_s"] - m["drain_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--np", type=int, default=2, help="model ranks")
    ap.add_argument("--strategies", default=",".join(STRATEGIES),
                    help=f"comma-separated, of {', '.join(STRATEGIES)}")
    ap.add_argument("--out", default=None, help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    names = a.strategies.split(",")
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        ap.error(f"--strategies: unknown {', '.join(unknown)} (known: {', '.join(STRATEGIES)})")
    top = Path(a.out or tempfile.mkdtemp(prefix="reduce-cost-"))
    times = {(s, r): [] for s in names for r in (False, True)}
    for i in range(a.runs):
        for s in names:
            extra, hints = STRATEGIES[s]
            for r in (False, True):
                times[(s, r)].append(run(a.bench, a.np + extra, hints, r, top / f"{s}-{r}-{i}"))
    for k, what in ((0, "blocked s"), (1, "blocked s before the final drain")):
        print(f"| strategy | {what} without | {what} with reduce= | with / without |")
        print("| --- | --- | --- | --- |")
        for s in names:
            w = [t[k] for t in times[(s, False)]]
            r = [t[k] for t in times[(s, True)]]
            mw, mr = statistics.median(w), statistics.median(r)
            print(f"| {s} | {mw:.4f} ({min(w):.4f}-{max(w):.4f}) | {mr:.4f} ({min(r):.4f}-"
                  f"{max(r):.4f}) | {mr / mw:.2f} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
