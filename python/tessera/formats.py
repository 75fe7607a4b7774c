"""`tessera formats`: what compression and GRIB2 cost, per strategy, at one
process count: the issue's figures for the formats models ship.

Every repeat runs each (strategy, format) pair once on the demo's case
(NetCDF-4 with and without deflate=1 for each strategy, CDF-2 for serial;
Zarr v3 stores with no codec, gzip level 1 (NetCDF-4's deflate=1 compressor)
and zstd level 1 for each strategy, unless --no-zarr or not built)
(history only), in reversed order on every other repeat so that a slow spell
of the machine hits every side, and measures the history files' size on disk.
The table shows, per pair, the median blocked output time and its spread
(min-max), MB/s and the files' size; then the ratios, each the median of the
ratios of the same repeat with their spread:

- size of NetCDF-4 deflate=1 / size of CDF-2 (serial's files),
- blocked time with deflate=1 / the same strategy's uncompressed NetCDF-4,
- serial compressed / aggregate compressed, next to aggregate's writer count,
- Zarr's sizes and blocked times next to NetCDF-4's with the same compressor.

Below them, "what the targets need" (formats_bounds.py): the same run's
medians put into a model of compression as CPU work split over the ranks
that do it (one writer's compression cost C, the writers aggregate would
need, why serial / aggregate >= W does not depend on C, the measured parallel
efficiency, and what the servers need), each with a verdict.

`--aggregators N` and `--io-tasks T` set aggregate's writers and the server
group's tasks (a group of T tasks writes NetCDF-4 collectively, each task
compressing its share). deflate=1 shuffles first (the
library's default with a compressor, as WRF's NetCDF-4 history does);
`--no-shuffle` adds serial writing deflate=1:shuffle=0, and the ratios of
the default's size and blocked time to it.

The issue's targets are printed next to them (aggregate compressed <= 2x its
uncompressed; serial compressed slower than aggregate compressed by at least
the writer count; servers compressed within 1.2x of servers uncompressed).
CPU-bound targets need a core per rank: with fewer cores than processes the
table says so.

The runs write the bench's model fields (no --check, whose pattern of
integers compresses about 15x and would say little about sizes); the tests
verify the formats' bytes. The demo (`make demo`) reuses `run_format` for its
row per format, with --check.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from .bench.case import CASE, STRATEGIES as DEMO_STRATEGIES
from .bench.launch import (CASE_KEYS, add_case_options, add_launch_options, bench_env, bench_or_say,
                     bench_outcome, run_bench)
from .formats_bounds import Medians, as_dict, rows as bound_rows
from .outpath import OutputPathError, output_dir, refuse, write_text
from .textout import Countdown, make_table, render

#: format name -> hints it adds to a strategy's.
FORMATS = {
    "cdf2": "format=cdf2",
    "netcdf4": "format=netcdf4",
    # deflate=1 shuffles: the library's default with a compressor, as WRF's.
    "netcdf4-deflate1": "format=netcdf4:deflate=1",
    "netcdf4-deflate1-noshuffle": "format=netcdf4:deflate=1:shuffle=0",
    # Zarr v3 stores (docs/zarr.md): no codec, NetCDF-4's compressor at its
    # level (gzip is deflate; Zarr has no shuffle, so deflate=1:shuffle=0 is
    # the like-for-like NetCDF-4), and zstd at level 1.
    "zarr": "format=zarr",
    "zarr-gzip1": "format=zarr:deflate=1",
    "zarr-zstd1": "format=zarr:zstd=1",
}

#: The Zarr formats, run for each strategy after NetCDF-4's (--no-zarr: none).
ZARR = ("zarr", "zarr-gzip1", "zarr-zstd1")

#: The issue's three strategies, with the demo's hints (servers take a rank).
STRATEGIES = {s: DEMO_STRATEGIES[s] for s in ("serial", "aggregate", "servers")}
#: The demo's writer and task counts, the defaults of --aggregators/--io-tasks.
AGGREGATORS = int(STRATEGIES["aggregate"].split("aggregators=")[1])
IO_TASKS = int(STRATEGIES["servers"].split("io_tasks=")[1])


def strategies(aggregators: int, io_tasks: int) -> dict:
    """The three strategies' hints with these writer and task counts."""
    return {"serial": STRATEGIES["serial"],
            "aggregate": f"strategy=aggregate:aggregators={aggregators}",
            "servers": f"strategy=servers:io_groups=1:io_tasks={io_tasks}"}


def history_bytes(files: Path) -> int:
    """Bytes of the history files a run wrote (wrfout_*; split's per-rank
    pieces included; a Zarr store: the bytes of every file in it)."""
    total = 0
    for p in files.glob("wrfout*"):
        if p.is_dir() and not p.is_symlink():
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        elif p.is_file():
            total += p.stat().st_size
    return total


def bench_argv(case: dict, hints: str, files: Path, json_path: Path, check: bool) -> list:
    argv = ["--nx", str(case["nx"]), "--ny", str(case["ny"]), "--nz", str(case["nz"]),
            "--sweeps", str(case["sweeps"]), "--steps", str(case["steps"]),
            "--output-every", str(case["output_every"]), "--nocolons", "--quiet",
            "--hints", hints, "--out", str(files), "--json", str(json_path)]
    return argv + (["--check"] if check else [])


#: Formats the bench's --check cannot read back (it reads with NetCDF-C).
UNCHECKED = ("grib2", "zarr")


def run_format(mpiexec: str, np: int, bench: str, case: dict, hints: str, out: Path, name: str,
               env: dict, timeout: float, check: bool = True, keep: bool = False) -> dict:
    """One history-only run with `hints`: the bench record plus demo_status,
    demo_message and file_bytes (the history files on disk). GRIB2 and Zarr
    are not read back by the bench's --check (NetCDF), so they run without."""
    files, json_path, log = out / f"{name}-files", out / f"{name}.json", out / f"{name}.log"
    shutil.rmtree(files, ignore_errors=True)
    json_path.unlink(missing_ok=True)
    check = check and not any(f"format={f}" in hints for f in UNCHECKED)
    rc, stdout, stderr, _ = run_bench(mpiexec, np, bench,
                                      bench_argv(case, hints, files, json_path, check),
                                      env, log, timeout)
    st, msg, metrics = bench_outcome(rc, stdout, stderr, json_path, check)
    rec = {"name": name, "hints": hints}
    rec.update(metrics)
    rec.update(demo_status=st, demo_message=msg)
    if metrics:  # the run finished (its check may have failed): its files are there
        rec["file_bytes"] = history_bytes(files)
    rec["name"] = name
    if not keep:
        shutil.rmtree(files, ignore_errors=True)
    return rec


def spread(values: list) -> dict | None:
    """Median and min-max of the values, or None when there are none."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def spread_text(s: dict | None, fmt: str = "{:.2f}") -> str:
    if not s:
        return "-"
    return (f"{fmt.format(s['median'])} ({fmt.format(s['min'])}-{fmt.format(s['max'])})")


def paired(runs: dict, a: tuple, b: tuple, key: str) -> dict | None:
    """Median and spread of run a / run b of the same repeat (field `key`)."""
    ra, rb = runs.get(a, []), runs.get(b, [])
    vals = [x[key] / y[key] for x, y in zip(ra, rb)
            if x and y and x.get(key) and y.get(key)]
    return spread(vals)


def ratios(runs: dict, writers: int) -> list:
    """(what, median and spread, target) rows of the issue's figures."""
    out = [("size NetCDF-4 deflate=1 / CDF-2 (serial's files)",
            paired(runs, ("serial", "netcdf4-deflate1"), ("serial", "cdf2"), "file_bytes"),
            "smaller than 1")]
    targets = {"serial": "-", "aggregate": "<= 2", "servers": "<= 1.2"}
    for s in ("serial", "aggregate", "servers"):
        out.append((f"{s}: blocked deflate=1 / uncompressed NetCDF-4",
                    paired(runs, (s, "netcdf4-deflate1"), (s, "netcdf4"), "output_blocked_s"),
                    targets[s]))
    out.append(("blocked serial deflate=1 / aggregate deflate=1",
                paired(runs, ("serial", "netcdf4-deflate1"), ("aggregate", "netcdf4-deflate1"),
                       "output_blocked_s"), f">= {writers} (aggregate's writers)"))
    if runs.get(("serial", "netcdf4-deflate1-noshuffle")):
        sh, de = ("serial", "netcdf4-deflate1"), ("serial", "netcdf4-deflate1-noshuffle")
        out.append(("size deflate=1 (shuffled) / deflate=1 shuffle=0 (serial's files)",
                    paired(runs, sh, de, "file_bytes"), "-"))
        out.append(("serial: blocked deflate=1 (shuffled) / deflate=1 shuffle=0",
                    paired(runs, sh, de, "output_blocked_s"), "-"))
    if any(x for p, rs in runs.items() if p[1] in ZARR for x in rs):
        out.append(("size Zarr / CDF-2 (serial's files)",
                    paired(runs, ("serial", "zarr"), ("serial", "cdf2"), "file_bytes"), "-"))
        out.append(("size Zarr gzip=1 / NetCDF-4 deflate=1 (serial's files)",
                    paired(runs, ("serial", "zarr-gzip1"), ("serial", "netcdf4-deflate1"),
                           "file_bytes"), "-"))
        for s in ("serial", "aggregate", "servers"):
            out.append((f"{s}: blocked Zarr / NetCDF-4",
                        paired(runs, (s, "zarr"), (s, "netcdf4"), "output_blocked_s"), "-"))
            out.append((f"{s}: blocked Zarr gzip=1 / NetCDF-4 deflate=1",
                        paired(runs, (s, "zarr-gzip1"), (s, "netcdf4-deflate1"),
                               "output_blocked_s"), "-"))
    return out


def medians(runs: dict, writers: int, io_tasks: int, case: dict) -> Medians:
    """The inputs of "what the targets need": median blocked seconds per pair,
    and the model's compute between two outputs in the servers' uncompressed
    runs (compute_s covers every step)."""
    def med(pair, key="output_blocked_s"):
        vals = [x[key] for x in runs.get(pair, []) if x and x.get(key) is not None]
        return statistics.median(vals) if vals else None
    compute = med(("servers", "netcdf4"), "compute_s")
    frames = next((x["frames"] for rs in runs.values() for x in rs if x and x.get("frames")),
                  case["steps"] // case["output_every"] + 1)
    return Medians(serial_u=med(("serial", "netcdf4")),
                   serial_c=med(("serial", "netcdf4-deflate1")),
                   aggregate_u=med(("aggregate", "netcdf4")),
                   aggregate_c=med(("aggregate", "netcdf4-deflate1")),
                   servers_u=med(("servers", "netcdf4")),
                   servers_c=med(("servers", "netcdf4-deflate1")),
                   writers=writers, io_tasks=io_tasks, frames=frames,
                   interval_s=(compute * case["output_every"] / case["steps"]
                               if compute is not None else None))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera formats",
        description="Time serial, aggregate and servers writing CDF-2, NetCDF-4 and NetCDF-4 "
                    "with deflate=1 on the demo's case, repeated and interleaved; print sizes, "
                    "medians with spread and the paired ratios.")
    a = p.add_argument
    a("--bench", help="tessera-bench executable (default: PATH, then build/apps/bench)")
    a("--out", default="out/formats", help="directory for results and logs (out/formats)")
    a("--np", type=int, default=CASE["np"], help="MPI processes per run (4)")
    a("--repeat", type=int, default=3, help="repeats of every run (3)")
    a("--aggregators", type=int, default=AGGREGATORS,
      help=f"aggregate's writers (the demo's {AGGREGATORS})")
    a("--io-tasks", type=int, default=IO_TASKS,
      help=f"tasks of the server group, which compress in parallel ({IO_TASKS})")
    a("--no-shuffle", action="store_true",
      help="add serial with deflate=1:shuffle=0 (deflate=1 shuffles by default, as WRF)")
    a("--no-zarr", action="store_true",
      help="leave out the Zarr stores (no codec, gzip=1, zstd=1; skipped when not built)")
    add_case_options(a, CASE)
    add_launch_options(a, 600.0)
    a("--check", action="store_true",
      help="write the bench's check pattern and read every value back in every repeat "
           "(it compresses far better than the default fields: sizes then say little)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.repeat < 1 or args.np < 2:
        print("tessera formats: --repeat >= 1 and --np >= 2 (servers take a rank)",
              file=sys.stderr)
        return 2
    if not 1 <= args.aggregators <= args.np or not 1 <= args.io_tasks < args.np:
        print(f"tessera formats: --aggregators {args.aggregators} must be 1..{args.np} and "
              f"--io-tasks {args.io_tasks} 1..{args.np - 1} (the model keeps a rank)",
              file=sys.stderr)
        return 2
    hints = strategies(args.aggregators, args.io_tasks)
    try:  # before the runs, which take minutes
        out = output_dir(args.out)
    except OutputPathError as e:
        return refuse("formats", e)
    bench = bench_or_say("formats", args.bench)
    if not bench:
        return 2
    env, _ = bench_env()  # every run names its own strategy and format
    case = {k: getattr(args, k) for k in CASE_KEYS}
    cores = os.cpu_count() or 1
    # CDF-2 for the size ratio only: serial's files are the reference.
    pairs = [("serial", "cdf2")] + [(s, f) for s in hints
                                    for f in ("netcdf4", "netcdf4-deflate1")
                                    + (() if args.no_zarr else ZARR)]
    if args.no_shuffle:  # one writer's compression is what shuffle changes
        pairs.insert(3, ("serial", "netcdf4-deflate1-noshuffle"))
    runs: dict = {p: [] for p in pairs}
    failed = []
    t0 = time.monotonic()
    count = Countdown(args.repeat * len(pairs))
    for r in range(args.repeat):
        for s, f in (pairs if r % 2 == 0 else list(reversed(pairs))):
            t_run = time.monotonic()
            rec = run_format(args.mpiexec, args.np, bench, case,
                             f"{hints[s]}:{FORMATS[f]}", out, f"{s}-{f}", env, args.timeout,
                             check=args.check)
            if rec["demo_status"] == "ok":
                runs[(s, f)].append(rec)
            elif rec["demo_status"] == "not built" and f in ZARR:
                runs[(s, f)].append(None)  # a library without Zarr (or zstd): no row
            else:
                failed.append(rec)
                runs[(s, f)].append(None)  # keeps the repeats paired
            count.finish(time.monotonic() - t_run)
            print(f"[{count.done}/{count.total}] {s:<9} {f:<17} {rec['demo_status']}"
                  + (f": {rec['output_blocked_s']:.3f} s blocked, {rec['file_bytes'] / 1e6:.1f} MB"
                     if rec["demo_status"] == "ok" else f": {rec['demo_message']}")
                  + f" (repeat {r + 1}/{args.repeat}{count.left()})", flush=True)
    pairs = [p for p in pairs if any(runs[p]) or p[1] not in ZARR or
             any(x.get("name") == f"{p[0]}-{p[1]}" for x in failed)]
    med = medians(runs, args.aggregators, args.io_tasks, case)
    try:
        write_text(out / "results.json", json.dumps(
            {"case": case, "np": args.np, "aggregators": args.aggregators,
             "io_tasks": args.io_tasks, "targets": as_dict(med),
             "runs": [dict(r, strategy=s, format=f) for (s, f), rs in runs.items()
                      for r in rs if r]}, indent=2) + "\n")
    except OutputPathError as e:
        return refuse("formats", e)
    print()
    print(f"Formats, demo case {case['nx']} x {case['ny']} x {case['nz']}, {case['steps']} steps, "
          f"history every {case['output_every']}: {args.np} processes on {cores} cores, "
          f"{args.repeat} repeats (median (min-max)), {time.monotonic() - t0:.0f} s; "
          f"aggregate {args.aggregators} writers, servers 1 group of {args.io_tasks} task(s)")
    if args.np > cores:
        print(f"  ({args.np} processes share {cores} cores: compression is CPU work, so "
              f"its ratios here understate what a core per rank gives)")
    body = []
    for s, f in pairs:
        ok = [x for x in runs[(s, f)] if x]
        blocked = spread([x["output_blocked_s"] for x in ok])
        mbs = spread([x["effective_bw"] / 1e6 for x in ok])
        size = statistics.median([x["file_bytes"] for x in ok]) / 1e6 if ok else None
        body.append([s, f, spread_text(blocked, "{:.3f}"), spread_text(mbs, "{:.0f}"),
                     f"{size:.1f}" if size is not None else "-"])
    print(render(make_table(["strategy", "format", "blocked s", "MB/s", "files MB"], body,
                            right={"blocked s", "MB/s", "files MB"})))
    print()
    rows = [[what, spread_text(s), target] for what, s, target in ratios(runs, args.aggregators)]
    print(render(make_table(["ratio", "median (min-max)", "target"], rows,
                            right={"median (min-max)"})))
    print()
    print("What the targets need (medians above; compression split evenly over the ranks "
          "that compress, a core each" + (f"; not so here: {args.np} processes on {cores} "
                                           "cores, so the verdicts hold for these figures, "
                                           "not for a core per rank):" if args.np > cores
                                           else "):"))
    print(render(make_table(["target", "needs", "this run", "verdict"],
                            [list(r) for r in bound_rows(med)])))
    print(f"results: {out / 'results.json'} (logs: {out}/<strategy>-<format>.log)")
    if failed:
        print(f"tessera formats: {len(failed)} run(s) failed", file=sys.stderr)
        return 1
    return 0
