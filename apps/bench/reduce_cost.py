#!/usr/bin/env python3
"""What reduce= costs the model: blocked output time of tessera-bench with
and without --reduce, per strategy, runs interleaved (with, without, next
strategy, ...) so that a slow spell of a shared machine hits both alike.
Prints a Markdown table of medians with the min-max spread (docs/reductions.md).

Usage: reduce_cost.py BENCH [--runs 5] [--np 2] [--out DIR]
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
    blocked = json.loads((out / "r.json").read_text())["output_blocked_s"]
    shutil.rmtree(out)
    return blocked


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--np", type=int, default=2, help="model ranks")
    ap.add_argument("--out", default=None, help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    top = Path(a.out or tempfile.mkdtemp(prefix="reduce-cost-"))
    times = {(s, r): [] for s in STRATEGIES for r in (False, True)}
    for i in range(a.runs):
        for s, (extra, hints) in STRATEGIES.items():
            for r in (False, True):
                times[(s, r)].append(run(a.bench, a.np + extra, hints, r, top / f"{s}-{r}-{i}"))
    print(f"| strategy | blocked s without | blocked s with reduce= | with / without |")
    print("| --- | --- | --- | --- |")
    for s in STRATEGIES:
        w, r = times[(s, False)], times[(s, True)]
        mw, mr = statistics.median(w), statistics.median(r)
        print(f"| {s} | {mw:.4f} ({min(w):.4f}-{max(w):.4f}) | {mr:.4f} ({min(r):.4f}-{max(r):.4f}) "
              f"| {mr / mw:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
