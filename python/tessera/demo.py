"""`tessera demo`: run tessera-bench once per output strategy, at equal total
ranks, on a WRF-like case; verify every run's output (--check); print one
comparison table and draw it as a PNG. `make demo` runs this.

Each strategy's run also does what a WRF run does besides history: it starts
from a wrfinput_d01 (written once, before the strategies, with strategy=serial)
and writes a restart file halfway and at the end; a second, short run resumes
from the halfway one. The second table has the WRF I/O studies' three rows,
Input, Output and Restart (written / read back), time per strategy.

Serial, aggregate and split then run once more staged (`--stage-dir`, into
/dev/shm by default, final files on disk; no resumed run): a table puts each
next to its in-place run with two different figures, the model's blocked
time and the time until the files are final (stage_table.py).

Then the fastest strategy (least blocked output time) writes one history
output in each format models ship: classic CDF-2, NetCDF-4 with deflate=1 and
GRIB2; a table puts the files' size next to the MB/s (`tessera formats`
repeats such runs for medians and the compression ratios).

Then the best strategy that writes whole files (not split) writes the history once
more with checksum=crc32 and reduce= (T2 max/min, T mean over the run's
outputs): every file's sums verified and every statistic compared with
NumPy's (bench/frames_row.py).

Then each strategy's plain counterpart (`tessera-bench --plain`, the same
files without Tessera; `tessera overhead` names the pairs) runs once, also
verified, and a last table prints the ratios Tessera / plain. One run a
side has no spread: `tessera overhead` repeats them for paired medians.

A strategy the library was built without (e.g. no PnetCDF: direct and
aggregate; servers before they exist) is reported as skipped, not failed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console

from . import formats, overhead
from .cli_args import at_least
from .bench.launch import (add_case_options, add_launch_options, bench_env, bench_message,
                     bench_or_say, run_bench)
from .bench.launch import bench_outcome as outcome
from .outpath import OutputPathError, output_dir, refuse, write_text
from .plot import plot
from .bench import frames_row
from .bench.case import CASE, STRATEGIES
from .bench.results import ResultsError, case_text
from .bench.stage_table import STAGED, format_stage_table
from .strategies import row, with_property
from .table import format_rows, format_table
from .textout import Countdown, make_table, render


#: format row -> hints added to the best strategy's (one history output each).
#: Zarr's gzip at deflate=1 is NetCDF-4's compressor at the same level.
FORMAT_ROWS = {
    "classic CDF-2": "format=cdf2",
    "NetCDF-4 deflate=1": "format=netcdf4:deflate=1",
    "GRIB2": "format=grib2",
    "Zarr": "format=zarr",
    "Zarr gzip=1": "format=zarr:deflate=1",
}

#: Formats whose writers hold whole chunks (docs/zarr.md): direct and split
#: cannot write them, so their rows take the best of these strategies.
WHOLE_CHUNK_STRATEGIES = with_property("whole_chunks")


def format_run_name(hints: str) -> str:
    """`format-<format>[-<codec><level>]`: the files, log and metrics of a row."""
    parts = hints.split(":")
    return "-".join(["format-" + parts[0].split("=", 1)[1]]
                    + [p.replace("=", "") for p in parts[1:]])

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
    a("--np", type=at_least(1), default=CASE["np"],
      help="MPI processes per run, I/O servers included (4)")
    add_case_options(a, CASE)
    a("--schema", help="bench --schema FILE.cdl (default: the WRF-like default fields)")
    add_launch_options(a, 900.0)
    a("--stage-dir", default="/dev/shm/tessera-demo-stage",
      help="fast tier for the staged rows (/dev/shm/tessera-demo-stage; made, removed after)")
    a("--no-stage", action="store_true", help="skip the staged rows")
    a("--no-plain", action="store_true",
      help="skip the runs without Tessera and the table of ratios")
    a("--no-formats", action="store_true",
      help="skip the best strategy's row per format (CDF-2, NetCDF-4 deflate=1, GRIB2, "
           "Zarr with and without gzip=1)")
    a("--keep", action="store_true", help="keep the history, restart and input files "
                                          "(removed after each verified run to save disk)")
    return p


def case_args(args) -> list[str]:
    """The options that make the case: every run of the demo shares them (a
    restart or input file fits only a run of the same domain and schema).
    --nocolons: the file names carry no ':', which ROMIO would take for a file
    system prefix (the bench then reads them with serial NetCDF, not the
    strategy's backend)."""
    argv = ["--nx", str(args.nx), "--ny", str(args.ny), "--nz", str(args.nz),
            "--sweeps", str(args.sweeps), "--nocolons", "--quiet"]
    if args.schema:
        argv += ["--schema", args.schema]
    return argv


def restart_every(args) -> int:
    """Restart files halfway and at the end of the run."""
    return max(1, args.steps // 2)


def bench_args(args, name: str, out: Path, input_file: Path | None = None,
               label: str | None = None) -> list[str]:
    """`label` names the run's files, log and metrics (default: the strategy)."""
    label = label or name
    argv = case_args(args) + [
        "--steps", str(args.steps), "--output-every", str(args.output_every),
        "--restart-every", str(restart_every(args)), "--hints", STRATEGIES[name], "--check",
        "--out", str(out / f"{label}-files"), "--json", str(out / f"{label}.json")]
    if input_file:
        argv += ["--input", str(input_file)]
    return argv


def resume_args(args, name: str, out: Path, restart: Path) -> list[str]:
    """The run resumed from `restart`: the same case, its own files."""
    return case_args(args) + [
        "--steps", str(args.steps), "--output-every", str(args.output_every),
        "--hints", STRATEGIES[name], "--check", "--restart", str(restart),
        "--out", str(out / f"{name}-resumed"), "--json", str(out / f"{name}-resumed.json")]


def input_args(args, out: Path) -> list[str]:
    """Step 0 only: the initial state as <out>/input/wrfinput_d01."""
    return case_args(args) + ["--steps", "0", "--output-every", "1", "--write-input",
                              "--hints", "strategy=serial", "--out", str(out / "input")]


def launch(args, bench: str, argv: list[str], env: dict, log: Path) -> tuple[int, str, str, float]:
    """One bench run of the demo (its launcher, process count and timeout)."""
    return run_bench(args.mpiexec, args.np, bench, argv, env, log, args.timeout)


def single_run(args, label: str, bench: str, argv: list[str], out: Path, env: dict,
               **fields) -> dict:
    """One verified run writing `<label>-files` and `<label>.json` in `out`:
    its record (metrics, then `fields`) with demo_status and demo_message;
    the files are removed unless --keep."""
    files, log = out / f"{label}-files", out / f"{label}.log"
    for stale in (out / f"{label}.json", log):
        stale.unlink(missing_ok=True)
    shutil.rmtree(files, ignore_errors=True)
    rc, stdout, stderr, elapsed = launch(args, bench, argv, env, log)
    st, msg, metrics = outcome(rc, stdout, stderr, out / f"{label}.json")
    rec = dict(metrics, **fields, demo_status=st, demo_message=msg)
    if not args.keep:
        shutil.rmtree(files, ignore_errors=True)
    if st == "ok":
        rec["demo_elapsed_s"] = round(elapsed, 3)
    return rec


def write_input(args, bench: str, out: Path, env: dict) -> tuple[Path | None, str]:
    """The wrfinput_d01 every strategy's run starts from, or None and why not."""
    shutil.rmtree(out / "input", ignore_errors=True)
    log = out / "input.log"
    log.unlink(missing_ok=True)
    rc, stdout, stderr, _ = launch(args, bench, input_args(args, out), env, log)
    path = out / "input" / "wrfinput_d01"
    if rc != 0 or not path.is_file():
        return None, f"exit {rc}: {bench_message(stderr, stdout)} (log: {log})"
    return path, ""


def run_one(args, name: str, bench: str, out: Path, env: dict,
            input_file: Path | None = None) -> dict:
    """One strategy: the run from `input_file` that writes history and restart
    files, then the run resumed from its first restart file. Returns the first
    run's record with demo_status and demo_message, and the resumed run's
    restart_read_s / restart_read_bytes."""
    files, resumed = out / f"{name}-files", out / f"{name}-resumed"
    log = out / f"{name}.log"
    for stale in (out / f"{name}.json", out / f"{name}-resumed.json", log):
        stale.unlink(missing_ok=True)
    for d in (files, resumed):
        shutil.rmtree(d, ignore_errors=True)
    rec = {"strategy": name, "hints": STRATEGIES[name]}
    rc, stdout, stderr, elapsed = launch(args, bench, bench_args(args, name, out, input_file),
                                         env, log)
    st, msg, metrics = outcome(rc, stdout, stderr, out / f"{name}.json")
    rec.update(metrics)
    rec["strategy"] = name  # the table names what was asked for
    if st == "ok":
        # The restart file written halfway (names sort by date).
        rst = sorted(files.glob("wrfrst_d01_*"))
        if not rst:
            st, msg = "failed", f"no restart file in {files}"
        else:
            rc, stdout, stderr, more = launch(args, bench, resume_args(args, name, out, rst[0]),
                                              env, log)
            elapsed += more
            st, msg, res = outcome(rc, stdout, stderr, out / f"{name}-resumed.json")
            if st != "ok":
                msg = f"resumed from {rst[0].name}: {msg}"
            rec.update(restart_read_s=res.get("input_s"), restart_read_bytes=res.get("input_bytes"),
                       resumed_from_step=res.get("start_step"))
    if not args.keep:
        for d in (files, resumed):
            shutil.rmtree(d, ignore_errors=True)
    rec.update(demo_status=st, demo_message=msg)
    if st == "ok":
        rec["demo_elapsed_s"] = round(elapsed, 3)
    return rec


def run_staged(args, name: str, bench: str, out: Path, env: dict, input_file: Path) -> dict:
    """The strategy's run again with its files staged in args.stage_dir (the
    bench makes it and leaves it empty), verified at the final paths."""
    label = f"{name}-staged"
    argv = bench_args(args, name, out, input_file, label) + ["--stage-dir", args.stage_dir]
    return single_run(args, label, bench, argv, out, env, strategy=name,
                      stage_dir=args.stage_dir)


def staged_planned(args, names: list) -> int:
    return 0 if args.no_stage else sum(n in STAGED for n in names)


def staged_runs(args, bench: str, out: Path, env: dict, records: list, input_file: Path,
                console, count: Countdown) -> list:
    """The staged run of every strategy in STAGED that ran in place."""
    names = [r["strategy"] for r in records
             if r["strategy"] in STAGED and r["demo_status"] == "ok"]
    planned = staged_planned(args, [r["strategy"] for r in records])
    if args.no_stage or not names:
        count.skip(planned)
        return []
    parent = os.path.dirname(os.path.abspath(args.stage_dir))
    if not os.path.isdir(parent):  # e.g. no /dev/shm: not a failure of the library
        print(f"tessera demo: no staged rows: {parent} does not exist (--stage-dir DIR)")
        count.skip(planned)
        return []
    count.skip(planned - len(names))
    runs = []
    for i, name in enumerate(names, 1):
        def one(name=name):
            t0 = time.monotonic()
            rec = run_staged(args, name, bench, out, env, input_file)
            if rec["demo_status"] == "ok":
                return rec, (f"done in {time.monotonic() - t0:.1f} s: output blocked "
                             f"{rec['output_blocked_s']:.3f} s, files final "
                             f"{rec['drain_s']:.3f} s after the last step, verified")
            return rec, progress(rec, time.monotonic() - t0)
        runs.append(count.step(console, f"[staged {i}/{len(names)}] {name:<9} running "
                                        f"tessera-bench --check --stage-dir {args.stage_dir}", one))
    clear_stage(args.stage_dir)
    return runs


def clear_stage(stage_dir: str) -> None:
    """Remove the stage once the staged runs are done: the stage-in copies of
    wrfinput_d01 and the restart file (`<base>.<16 hex>.in`, made again from
    their sources when needed), then the directory if that emptied it. Staged
    output a failed run left (with its marker) stays for `tessera stage
    recover`."""
    try:
        for name in os.listdir(stage_dir):
            if re.search(r"\.[0-9a-f]{16}\.in$", name):
                os.unlink(os.path.join(stage_dir, name))
        os.rmdir(stage_dir)
    except OSError:
        pass


def plain_args(args, method: str, out: Path) -> list[str]:
    """The same case and history outputs written without Tessera: no input,
    no restart (the plain programs write history only)."""
    name = f"plain-{method}"
    return case_args(args) + [
        "--steps", str(args.steps), "--output-every", str(args.output_every),
        "--plain", method, "--check",
        "--out", str(out / f"{name}-files"), "--json", str(out / f"{name}.json")]


def run_plain(args, method: str, bench: str, out: Path, env: dict) -> dict:
    """One plain run: its record with demo_status and demo_message."""
    name = f"plain-{method}"
    return single_run(args, name, bench, plain_args(args, method, out), out, env,
                      strategy=name, hints="")


def progress(rec: dict, elapsed: float) -> str:
    st = rec["demo_status"]
    if st == "ok":
        text = (f"done in {elapsed:.1f} s: wall {rec['wall_s']:.2f} s, output blocked "
                f"{rec['output_blocked_s']:.3f} s, {rec['files']} files verified")
        if "resumed_from_step" in rec:  # plain runs write history only
            text += f"; resumed from step {rec['resumed_from_step']}, verified"
        return text
    if st == "not built":
        return "skipped: not built into this library"
    return f"FAILED: {rec['demo_message']}"


def plain_methods(records: list, ran_only: bool = True) -> list:
    """The plain counterparts of the strategies (of those that ran), once each."""
    methods = []
    for r in records:
        pair = overhead.PAIRS.get(r["strategy"])
        if (r["demo_status"] == "ok" or not ran_only) and pair and pair[1] not in methods:
            methods.append(pair[1])
    return methods


def plain_runs(args, bench: str, out: Path, env: dict, records: list, console,
               count: Countdown) -> list:
    """The plain counterpart of every strategy that ran, once each."""
    methods = plain_methods(records)
    count.skip(len(plain_methods(records, ran_only=False)) - len(methods))
    runs = []
    for i, method in enumerate(methods, 1):
        def one(method=method):
            t0 = time.monotonic()
            rec = run_plain(args, method, bench, out, env)
            return rec, progress(rec, time.monotonic() - t0)
        runs.append(count.step(console, f"[plain {i}/{len(methods)}] {method:<9} running "
                                        f"tessera-bench --plain --check on {args.np} processes", one))
    return runs


def best_strategy(records: list) -> dict | None:
    """The run with the least blocked output time, or None."""
    ok = [r for r in records if r["demo_status"] == "ok" and r.get("output_blocked_s")]
    return min(ok, key=lambda r: r["output_blocked_s"]) if ok else None


def format_runs(args, bench: str, out: Path, env: dict, best: dict, console,
                count: Countdown, records: list = ()) -> list:
    """The best strategy's one history output in each format (step 0 only,
    which keeps the demo's extra time to seconds); verified with --check
    except GRIB2 and Zarr, which the bench cannot read back. Zarr takes the
    best strategy whose writers hold whole chunks when the best is direct or
    split (`records`: the strategies' runs)."""
    case = {"nx": args.nx, "ny": args.ny, "nz": args.nz, "steps": 0, "output_every": 1,
            "sweeps": args.sweeps}
    runs = []
    chunked = (best if best["strategy"] in WHOLE_CHUNK_STRATEGIES else best_strategy(
        [r for r in records if r["strategy"] in WHOLE_CHUNK_STRATEGIES]))
    for i, (label, hints) in enumerate(FORMAT_ROWS.items(), 1):
        name = format_run_name(hints)
        who = chunked if hints.startswith("format=zarr") else best
        if who is None:
            count.skip(1)
            runs.append({"name": name, "hints": hints, "format": label,
                         "strategy": best["strategy"], "demo_status": "skipped",
                         "demo_message": "no strategy whose writers hold whole chunks ran"})
            console.print(f"[format {i}/{len(FORMAT_ROWS)}] {label:<18} skipped: serial, "
                          f"aggregate and servers did not run", highlight=False)
            continue

        def one(label=label, hints=hints, name=name, who=who):
            t0 = time.monotonic()
            rec = formats.run_format(args.mpiexec, args.np, bench, case,
                                     f"{STRATEGIES[who['strategy']]}:{hints}", out, name, env,
                                     args.timeout, keep=args.keep)
            rec.update(format=label, strategy=who["strategy"])
            if rec["demo_status"] == "ok":
                msg = (f"done in {time.monotonic() - t0:.1f} s: output blocked "
                       f"{rec['output_blocked_s']:.3f} s, {rec['file_bytes'] / 1e6:.1f} MB"
                       + (", verified" if rec.get("check") == "passed" else ""))
            elif rec["demo_status"] == "not built":
                msg = "skipped: not built into this library"
            else:
                msg = f"FAILED: {rec['demo_message']}"
            return rec, msg
        runs.append(count.step(console, f"[format {i}/{len(FORMAT_ROWS)}] {label:<18} "
                                        f"{who['strategy']} on {args.np} processes", one))
    return runs


def frames_run(args, bench: str, out: Path, env: dict, best: dict, input_file: Path,
               console, count: Countdown) -> dict:
    """The best strategy's run again with checksum=crc32 and reduce=
    (bench/frames_row.py): its record, with frames_check saying what was
    verified."""
    outputs = args.steps // args.output_every + 1
    name = best["strategy"]

    def one():
        argv = bench_args(args, name, out, input_file, "frames")
        argv[argv.index("--hints") + 1] = frames_row.hints(STRATEGIES[name], outputs)
        files, log = out / "frames-files", out / "frames.log"
        shutil.rmtree(files, ignore_errors=True)
        log.unlink(missing_ok=True)
        t0 = time.monotonic()
        rc, stdout, stderr, _ = launch(args, bench, argv, env, log)
        st, msg, metrics = outcome(rc, stdout, stderr, out / "frames.json")
        rec = dict(metrics, strategy=name, demo_status=st, demo_message=msg)
        if st == "ok":
            ok, what = frames_row.check(files)
            rec["frames_check"] = what
            if not ok:
                rec.update(demo_status="failed", demo_message=what)
        if not args.keep:
            shutil.rmtree(files, ignore_errors=True)
        text = (f"done in {time.monotonic() - t0:.1f} s: output blocked "
                f"{rec['output_blocked_s']:.3f} s, {rec['frames_check']}"
                if rec["demo_status"] == "ok" else f"FAILED: {rec['demo_message']}")
        return rec, text
    return count.step(console, f"[frames] checksum + reduce {name} on {args.np} processes", one)


def print_formats(runs: list) -> None:
    """One row per format: blocked time, MB/s and the files' size."""
    ok = [r for r in runs if r["demo_status"] == "ok"]
    if not ok:
        return
    classic = next((r["file_bytes"] for r in ok if r["format"] == "classic CDF-2"), None)
    body = []
    for r in runs:
        label = r["format"] + ("" if r["strategy"] == ok[0]["strategy"] else f" ({r['strategy']})")
        if r["demo_status"] != "ok":
            body.append([label, "-", "-", "-", "-", r["demo_status"]])
            continue
        size = r["file_bytes"]
        body.append([label, f"{r['output_blocked_s']:.3f}",
                     f"{r['effective_bw'] / 1e6:.1f}", f"{size / 1e6:.1f}",
                     f"{size / classic:.2f}" if classic else "-",
                     "verified" if r.get("check") == "passed" else "written (not read back)"])
    print(f"Formats: {ok[0]['strategy']} (least blocked output time above), one history "
          f"output each (step 0); MB/s = data put / blocked time")
    print(render(make_table(["format", "blocked s", "MB/s", "file MB", "size / CDF-2", "check"],
                            body, right={"blocked s", "MB/s", "file MB", "size / CDF-2"})))
    print("GRIB2 holds only the fields that have a GRIB2 parameter (docs/hints.md, format), "
          "16-bit packed")
    if any(r["strategy"] != ok[0]["strategy"] for r in runs):
        print("Zarr (strategy in brackets): the best strategy whose writers hold whole chunks "
              "(docs/zarr.md); file MB of a store: the bytes of its files")
    print()


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
    try:  # before the runs, which take minutes
        out = output_dir(args.out)
    except OutputPathError as e:
        return refuse("demo", e)
    bench = bench_or_say("demo", args.bench)
    if not bench:
        return 2
    env, had_hints = bench_env()
    if had_hints:
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

    def initial():
        t0 = time.monotonic()
        path, why = write_input(args, bench, out, env)
        return (path, why), (f"done in {time.monotonic() - t0:.1f} s" if path else
                             f"FAILED: {why}")
    # Every run the demo plans, for the overall count and the time left;
    # sections whose strategies failed take theirs off.
    planned = (1 + len(names) + staged_planned(args, names)
               + (0 if args.no_formats else len(FORMAT_ROWS) + 1)
               + (0 if args.no_plain else len(plain_methods(
                   [{"strategy": n, "demo_status": "ok"} for n in names]))))
    count = Countdown(planned)
    input_file, why = count.step(console, f"[0/{len(names)}] input     writing wrfinput_d01 "
                                          f"(strategy=serial) on {args.np} processes", initial)
    if input_file is None:
        print(f"tessera demo: cannot write the input file: {why}", file=sys.stderr)
        return 1
    for i, name in enumerate(names, 1):
        def one(name=name):
            t0 = time.monotonic()
            rec = run_one(args, name, bench, out, env, input_file)
            return rec, progress(rec, time.monotonic() - t0)
        records.append(count.step(console, f"[{i}/{len(names)}] {name:<9} running tessera-bench "
                                           f"--check on {args.np} processes", one))
    staged = staged_runs(args, bench, out, env, records, input_file, console, count)
    best = None if args.no_formats else best_strategy(records)
    if not best and not args.no_formats:
        count.skip(len(FORMAT_ROWS))
    fmt_runs = (format_runs(args, bench, out, env, best, console, count, records)
                if best else [])
    # The row's check reads whole history and derived files: split's pieces
    # would need joining first (docs/reductions.md).
    reducer = None if args.no_formats else best_strategy(
        [r for r in records if not row(r["strategy"]).file_per_rank])
    if not reducer and not args.no_formats:
        count.skip(1)
    frames = (frames_run(args, bench, out, env, reducer, input_file, console, count)
              if reducer else None)
    plain = [] if args.no_plain else plain_runs(args, bench, out, env, records, console, count)
    if not args.keep:
        shutil.rmtree(out / "input", ignore_errors=True)
    results = out / "results.json"
    try:
        write_text(results, json.dumps({"runs": records, "staged_runs": staged,
                                        "format_runs": fmt_runs, "frames_run": frames,
                                        "plain_runs": plain},
                                       indent=2) + "\n")
    except OutputPathError as e:
        return refuse("demo", e)
    ran = [r for r in records if r["demo_status"] == "ok"]
    failed = [r for r in records + staged + fmt_runs + plain + ([frames] if frames else [])
              if r["demo_status"] == "failed"]
    print()
    case = case_text(records)
    if case:
        print(f"Output strategies compared: {case}, {args.np} processes each")
    print(format_table(records, legend=True))
    print()
    if ran:
        print(f"Input, output and restart, the WRF I/O studies' rows: runs from wrfinput_d01, "
              f"restart files every {restart_every(args)} steps")
        print(format_rows(records, legend=True))
        print()
    stage_text = format_stage_table(records, staged, args.stage_dir)
    if stage_text:
        print(stage_text)
        print()
    if ran:
        try:
            png = plot(records, str(out / "tessera-demo.png"))
            print(f"chart: {png}")
        except (ResultsError, ImportError, OSError) as e:
            print(f"tessera demo: no chart ({e})", file=sys.stderr)
    print_formats(fmt_runs)
    if frames:
        print(frames_row.row_text(reducer, frames))
        print()
    if plain:
        print_ratios(args, records, plain)
    print(f"results: {results} (logs: {out}/<strategy>.log)")
    if failed or not ran:
        print(f"tessera demo: {len(failed)} run(s) failed" if failed else
              "tessera demo: no strategy ran", file=sys.stderr)
        return 1
    verified = len(ran) + sum(r["demo_status"] == "ok" for r in staged + plain) + sum(
        r.get("check") == "passed" for r in fmt_runs) + int(bool(frames) and
                                                           frames["demo_status"] == "ok")
    print(f"all {verified} runs verified: every value of every file matched")
    return 0
