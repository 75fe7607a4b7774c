"""`tessera overhead`: what Tessera costs over the libraries' own calls.

Each strategy is run against its plain counterpart, `tessera-bench --plain
METHOD`, which writes the same files (same fields, dimensions, attributes and
values) with direct NetCDF or PnetCDF calls and no Tessera:

    serial    -> gather   (MPI_Gatherv to rank 0 + serial NetCDF, WRF io_form=2)
    direct    -> pnetcdf  (ncmpi_iput_vara per variable + ncmpi_wait_all per frame)
    aggregate -> pnetcdf  (two writers; aggregate1, one writer -> gather)
    split     -> split    (one NetCDF file per rank, WRF io_form=102)

Runs are interleaved: every repeat runs each strategy and each counterpart
once, in reversed order on every other repeat, so that a slow spell of the
machine hits both sides. The ratio of a pair is Tessera / plain of the same
repeat; the table shows the median of the paired ratios and their spread
(min-max). The verdict is "within spread" when the spread of the paired
ratios includes 1.00 (the difference is no larger than the runs' own noise),
else the ratio is reported as a difference.

The first repeat runs with --check (every value of every file read back and
verified), so a plain file that differs from Tessera's fails the command;
--no-check leaves that to the tests when only the timings are wanted.

With --yardstick PROGRAM (wrfout_bench built from ../shared/bench/, code we did
not write; overhead_yardstick.py) every repeat also runs the hand-written
program on the same bytes (--schema in its form gives the fields, every
output in one file; the bench replays the header the program itself writes,
so that the data lies at the same offsets in both files), and a second
table gives Tessera / hand-written and --plain / hand-written for each
strategy and plain method, with the goals of issue 24 (1.10 and 1.05). --drop-caches syncs and drops the page cache before every run (root),
so that no run pays for the dirty pages of the one before.

With --against OTHER (the tessera-bench of another build, e.g. an older
commit's) every repeat also runs each strategy with OTHER, and a table gives
this build / the other one per strategy: a regression is then a ratio whose
spread stays above 1.00, measured in one session.

With --with-hints HINTS (e.g. `checksum=crc32`) every repeat also runs each
strategy with HINTS added to its own, and a table gives with / without per
strategy: what a feature that a hint turns on costs, paired and interleaved.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import overhead_yardstick as hand
from .bench.launch import (BENCH_EXIT_NOTBUILT, add_case_options, add_launch_options, bench_or_say,
                     mpiexec_command)
from .outpath import OutputPathError, output_dir, output_file, refuse, write_text
from .textout import Countdown, make_table, render

#: strategy -> (hints, plain counterpart)
PAIRS = {
    "serial": ("strategy=serial", "gather"),
    "direct": ("strategy=direct", "pnetcdf"),
    # iput straight from the model's arrays, as pnetcdf does: the bench keeps
    # them unchanged until its tsr_flush at the end of every output
    "direct_deferred": ("strategy=direct:put_mode=deferred", "pnetcdf"),
    "aggregate": ("strategy=aggregate:aggregators=2", "pnetcdf"),
    "aggregate1": ("strategy=aggregate:aggregators=1", "gather"),  # one writer, as gather
    "split": ("strategy=split", "split"),
    # every piece written at the tsr_flush that ends the output, from the
    # model's arrays, so the ranks' agreements after each put wait for no write
    "split_deferred": ("strategy=split:put_mode=deferred", "split"),
}

DEFAULT_STRATEGIES = ("serial", "direct", "aggregate", "split")

#: The issue's case: 12 3-D + 30 2-D float fields of 1024 x 1024 x 28, kept to
#: one history output per run (steps 0) so that a 2-core machine can repeat it.
CASE = {"nx": 1024, "ny": 1024, "nz": 28, "steps": 0, "output_every": 1, "sweeps": 1}

#: Timing fields of the bench record that the table compares.
METRICS = ("output_blocked_s", "wall_s")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera overhead",
        description="Time each strategy against the same files written with the libraries' "
                    "own calls (tessera-bench --plain), interleaved, and print paired ratios.")
    a = p.add_argument
    a("--bench", help="tessera-bench executable (default: PATH, then build/apps/bench)")
    a("--out", default="out/overhead", help="directory for records and logs (out/overhead)")
    a("--strategies", default=",".join(DEFAULT_STRATEGIES),
      help=f"comma-separated strategies, of {', '.join(PAIRS)} (default: "
           f"{','.join(DEFAULT_STRATEGIES)}; aggregate1 is aggregate with one writer, "
           "direct_deferred and split_deferred with put_mode=deferred)")
    a("--np", default="2,4", help="comma-separated process counts (2,4)")
    a("--repeat", type=int, default=3, help="interleaved repeats per side (3)")
    add_case_options(a, CASE)
    add_launch_options(a, 900.0)
    a("--no-check", action="store_true",
      help="skip the read-back of the first repeat (it reads every file back: minutes at "
           "the default size)")
    a("--json", help="also write the records and the summary to this file")
    a("--schema", help="bench --schema: a CDL header to replay (with --yardstick, one in its "
                       "form, e.g. ../shared/bench/anchor12x30.cdl, gives the fields, and the "
                       "bench replays the header the yardstick writes for them)")
    a("--frames-per-file", type=int, default=1, help="bench --frames-per-file (1)")
    a("--halo", type=int, default=1, choices=(0, 1),
      help="bench --halo: 0 holds contiguous tiles, as the yardstick does (1)")
    a("--yardstick", metavar="PROGRAM",
      help="wrfout_bench built from ../shared/bench/wrfout_bench.c: also time the "
           "hand-written program on the same bytes")
    a("--against", metavar="OTHER_BENCH",
      help="the tessera-bench of another build: also run every strategy with it")
    a("--with-hints", metavar="HINTS",
      help="also run every strategy with HINTS added (e.g. checksum=crc32) and print "
           "with / without")
    a("--drop-caches", action="store_true",
      help="sync and drop the page cache before every run (needs root)")
    return p


def bench_argv(args, side: str, out: Path, check: bool, np: int = 0) -> list:
    """tessera-bench arguments for one side: a strategy name or plain:METHOD."""
    argv = ["--nx", str(args.nx), "--ny", str(args.ny), "--nz", str(args.nz),
            "--steps", str(args.steps), "--output-every", str(args.output_every),
            "--sweeps", str(args.sweeps), "--frames-per-file", str(args.frames_per_file),
            "--quiet", "--out", str(out / "files"), "--json", str(out / "run.json")]
    if args.halo != 1:  # an older build (--against) knows no --halo
        argv += ["--halo", str(args.halo)]
    schema = side_schema(args, side)
    if schema:
        argv += ["--schema", schema]
    if args.yardstick and np:  # the yardstick's tiles: the same bytes on every rank
        px, py = hand.process_grid(np)
        argv += ["--px", str(px), "--py", str(py)]
    if side.startswith("plain:"):
        argv += ["--plain", side[len("plain:"):]]
    elif side.startswith("with:"):  # a later group: applies to every file, wins
        argv += ["--hints", f"{PAIRS[side[len('with:'):]][0]},{args.with_hints}"]
    else:
        argv += ["--hints", PAIRS[side.removeprefix("old:")][0]]
    return argv + (["--check"] if check else [])


def side_schema(args, side: str) -> str | None:
    """The schema a side replays: with --yardstick, the header the
    yardstick writes with the side's counterpart method (yardstick_headers),
    else --schema."""
    headers = args.yardstick_headers
    if not headers:
        return args.schema
    name = side.split(":", 1)[1] if side.startswith(("plain:", "old:", "with:")) else side
    method = hand.PLAIN_METHOD[name] if side.startswith("plain:") else hand.METHOD[name]
    return str(headers[method])


def run_side(args, bench: str, np: int, side: str, out: Path, env: dict, check: bool) -> dict:
    """One bench run. Returns its JSON record, or {"error": text, "notbuilt": bool}."""
    shutil.rmtree(out / "files", ignore_errors=True)
    (out / "run.json").unlink(missing_ok=True)
    if side.startswith("old:"):
        bench = args.against
    cmd = mpiexec_command(args.mpiexec, np) + [bench] + bench_argv(args, side, out, check, np)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
        rc, text = proc.returncode, proc.stdout + proc.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        rc, text = -1, str(e)
    with open(out / "runs.log", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n{text}")
    shutil.rmtree(out / "files", ignore_errors=True)  # 1.5 GB a frame at the size
    if rc != 0:
        own = [ln for ln in text.splitlines() if ln.startswith(("tessera-bench:", "check:"))]
        return {"error": f"exit {rc}: {own[0] if own else text.strip()[-300:]}",
                "notbuilt": rc == BENCH_EXIT_NOTBUILT}
    with open(out / "run.json", encoding="utf-8") as fh:
        rec = json.load(fh)
    if check and rec.get("check") != "passed":
        return {"error": f"check {rec.get('check')}", "notbuilt": False}
    return rec


def drop_caches(state: dict) -> None:
    """sync, then drop the clean pages (root only); says once when it cannot."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as fh:
            fh.write("3\n")
    except OSError as e:
        if not state.get("warned"):
            print(f"tessera overhead: cannot drop the page cache ({e.strerror}); runs share it",
                  file=sys.stderr)
            state["warned"] = True


def run_hand(args, np: int, method: str, out: Path, env: dict, case: dict) -> dict:
    """One run of the hand-written yardstick; its files are removed after."""
    where = out / "hand"
    shutil.rmtree(where, ignore_errors=True)
    rec, cmd, text = hand.run(mpiexec_command(args.mpiexec, np), args.yardstick, method, case,
                              where, env, args.timeout)
    with open(out / "runs.log", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n{text}")
    shutil.rmtree(where, ignore_errors=True)
    return rec


def yardstick_case(args) -> dict:
    """The yardstick's case for the bench's, or ValueError naming the mismatch."""
    if not os.access(args.yardstick, os.X_OK):
        raise ValueError(f"--yardstick {args.yardstick}: not an executable program (build it "
                         "from ../shared/bench/wrfout_bench.c, its README says how)")
    if not args.schema:
        raise ValueError("--yardstick needs --schema in its form (e.g. "
                         "../shared/bench/anchor12x30.cdl): the same fields on both sides")
    outputs = args.steps // args.output_every + 1
    if outputs != args.frames_per_file:
        raise ValueError(f"--yardstick writes one file: --frames-per-file must equal the "
                         f"{outputs} outputs of --steps {args.steps} --output-every "
                         f"{args.output_every}")
    n3d, n2d = hand.schema_counts(Path(args.schema))
    return {"nx": args.nx, "ny": args.ny, "nz": args.nz, "n3d": n3d, "n2d": n2d,
            "frames": outputs}


def paired(tessera: list, plain: list, key: str) -> dict:
    """Median and spread of the paired ratios tessera[i][key] / plain[i][key]."""
    ratios = [t[key] / p[key] for t, p in zip(tessera, plain)
              if t.get(key) and p.get(key) and p[key] > 0]
    if not ratios:
        return {}
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
            "n": len(ratios),
            "tessera_s": statistics.median(t[key] for t in tessera),
            "plain_s": statistics.median(p[key] for p in plain)}


def verdict(r: dict) -> str:
    """The project's rule: a difference inside the runs' own spread is none."""
    if not r:
        return "-"
    if r["n"] < 2:
        return "one run: no spread"
    if r["min"] <= 1.0 <= r["max"]:
        return "within spread"
    return f"{(r['median'] - 1.0) * 100:+.0f} %"


def ratio_text(r: dict) -> str:
    if not r:
        return "-"
    if r["n"] < 2:
        return f"{r['median']:.2f}"
    return f"{r['median']:.2f} ({r['min']:.2f}-{r['max']:.2f})"


def summarise(records: dict, names: list, nps: list) -> list:
    """One row per (strategy, np): the paired ratios of every metric."""
    rows = []
    for np in nps:
        for name in names:
            method = PAIRS[name][1]
            t, p = records.get((np, name), []), records.get((np, "plain:" + method), [])
            t_err = next((r["error"] for r in t if "error" in r), None)
            p_err = next((r["error"] for r in p if "error" in r), None)
            row = {"strategy": name, "plain": method, "np": np}
            if t_err or p_err:
                row["error"] = t_err or p_err
                row["notbuilt"] = any(r.get("notbuilt") for r in t + p)
            else:
                for key in METRICS:
                    row[key] = paired(t, p, key)
            rows.append(row)
    return rows


def hand_rows(records: dict, names: list, nps: list) -> list:
    """Each strategy (goal 1.10) and each plain method (goal 1.05) against the
    hand-written program writing the same bytes."""
    plains = sorted({PAIRS[n][1] for n in names})
    sides = [(n, hand.METHOD[n], 1.10) for n in names]
    sides += [("plain:" + m, hand.PLAIN_METHOD[m], 1.05) for m in plains]
    rows = []
    for np in nps:
        for side, method, goal in sides:
            t, h = records.get((np, side), []), records.get((np, "hand:" + method), [])
            err = next((r["error"] for r in t + h if "error" in r), None)
            row = {"side": side, "hand": method, "np": np, "goal": goal}
            if err:
                row["error"] = err
            else:
                row["blocked"] = paired(t, h, "output_blocked_s")
            rows.append(row)
    return rows


def different_bytes(a: list, b: list) -> str | None:
    """Two sides that wrote different bytes are no pair (an older build's
    default schema may hold other variables): the sentence that says so."""
    ba = {r["bytes"] for r in a if r.get("bytes")}
    bb = {r["bytes"] for r in b if r.get("bytes")}
    if not ba or not bb or ba == bb:
        return None
    return (f"not the same bytes ({max(ba) / 1e9:.2f} GB against {max(bb) / 1e9:.2f} GB): "
            "give both builds the same case with --schema")


def pairs_table(records: dict, names: list, nps: list, cores: int, top: str, bottom: str,
                labels: tuple) -> str:
    """Side `top + strategy` against side `bottom + strategy`, strategy by
    strategy: this build against the other one (--against: "", "old:"), or
    with the extra hints against without (--with-hints: "with:", "")."""
    head = ["strategy", "ranks", f"{labels[0]} s", f"{labels[1]} s", "ratio (spread)", "verdict"]
    body = []
    for np in nps:
        for n in names:
            t, o = records.get((np, top + n), []), records.get((np, bottom + n), [])
            err = next((r["error"] for r in t + o if "error" in r), None)
            ranks = f"{np}" + (" (oversubscribed)" if np > cores else "")
            b = {} if err else paired(t, o, "output_blocked_s")
            if b and not err:
                err = different_bytes(t, o)
                b = {} if err else b
            if not b:
                body.append([n, ranks, "-", "-", "-", err or "-"])
                continue
            body.append([n, ranks, f"{b['tessera_s']:.3f}", f"{b['plain_s']:.3f}", ratio_text(b),
                         verdict(b)])
    return render(make_table(head, body, right={"ranks", f"{labels[0]} s", f"{labels[1]} s"}))


def hand_table(rows: list, cores: int) -> str:
    head = ["side", "hand-written", "ranks", "side s", "hand s", "ratio (spread)", "goal",
            "verdict"]
    body = []
    for r in rows:
        ranks = f"{r['np']}" + (" (oversubscribed)" if r["np"] > cores else "")
        b = r.get("blocked")
        if not b:
            body.append([r["side"], r["hand"], ranks, "-", "-", "-", f"{r['goal']:.2f}",
                         r.get("error", "-")])
            continue
        met = "met" if b["median"] <= r["goal"] else "not met"
        body.append([r["side"], r["hand"], ranks, f"{b['tessera_s']:.3f}",
                     f"{b['plain_s']:.3f}", ratio_text(b), f"{r['goal']:.2f}",
                     f"{met}; {verdict(b)}"])
    return render(make_table(head, body, right={"ranks", "side s", "hand s"}))


def table(rows: list, cores: int) -> str:
    head = ["strategy", "plain", "ranks", "Tessera blocked s", "plain blocked s",
            "blocked ratio (spread)", "verdict", "wall ratio (spread)", "verdict "]
    body = []
    for r in rows:
        ranks = f"{r['np']}" + (" (oversubscribed)" if r["np"] > cores else "")
        if "error" in r:
            body.append([r["strategy"], r["plain"], ranks, "-", "-", "-", r["error"], "-", "-"])
            continue
        b, w = r["output_blocked_s"], r["wall_s"]
        body.append([r["strategy"], r["plain"], ranks,
                     f"{b['tessera_s']:.3f}" if b else "-", f"{b['plain_s']:.3f}" if b else "-",
                     ratio_text(b), verdict(b), ratio_text(w), verdict(w)])
    right = {"ranks", "Tessera blocked s", "plain blocked s"}
    return render(make_table(head, body, right=right))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in names if s not in PAIRS]
    try:
        nps = [int(n) for n in args.np.split(",") if n.strip()]
    except ValueError:
        nps = []
    if unknown or not names or not nps or min(nps) < 1 or args.repeat < 1:
        print(f"tessera overhead: choose strategies from {', '.join(PAIRS)}, process counts "
              f">= 1 and --repeat >= 1", file=sys.stderr)
        return 2
    try:  # before the runs, which take minutes
        out = output_dir(args.out)
        if args.json:
            output_file(args.json)
        write_text(out / "runs.log", "")
    except OutputPathError as e:
        return refuse("overhead", e)
    bench = bench_or_say("overhead", args.bench)
    if not bench:
        return 2
    env = dict(os.environ)
    env.pop("TESSERA_HINTS", None)  # each side runs with its own hints
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    case = None
    # the yardstick's methods: each strategy's and each plain method's counterpart
    hand_methods = sorted({hand.METHOD[n] for n in names} |
                          {hand.PLAIN_METHOD[PAIRS[n][1]] for n in names})
    args.yardstick_headers = {}  # method -> the CDL header it writes (side_schema)
    if args.yardstick:
        try:
            case = yardstick_case(args)
            args.yardstick_headers = {
                m: hand.own_header(mpiexec_command(args.mpiexec, 1), args.yardstick, m, case,
                                   out, env, args.timeout) for m in hand_methods}
        except (ValueError, OSError) as e:
            print(f"tessera overhead: {e}", file=sys.stderr)
            return 2
    cores = os.cpu_count() or 1
    sides = names + sorted({"plain:" + PAIRS[n][1] for n in names})
    if case:
        sides += ["hand:" + m for m in hand_methods]
    if args.against:
        if not os.access(args.against, os.X_OK):
            print(f"tessera overhead: --against {args.against}: not an executable program",
                  file=sys.stderr)
            return 2
        sides += ["old:" + n for n in names]
    if args.with_hints:
        sides += ["with:" + n for n in names]
    caches: dict = {}
    print(f"tessera overhead: {args.nx} x {args.ny} x {args.nz}, {args.steps} steps, history "
          f"every {args.output_every} ({args.steps // args.output_every + 1} outputs), "
          f"{args.repeat} interleaved repeats, {','.join(map(str, nps))} processes on "
          f"{cores} cores", flush=True)
    for method, cdl in sorted(args.yardstick_headers.items()):
        print(f"  the bench's sides against {method} replay the header {args.yardstick} writes "
              f"with it: {cdl}", flush=True)
    records: dict = {}
    count = Countdown(len(nps) * args.repeat * len(sides))
    for np in nps:
        for rep in range(args.repeat):
            order = sides if rep % 2 == 0 else sides[::-1]
            for side in order:
                t_run = time.monotonic()
                if args.drop_caches:
                    drop_caches(caches)
                if side.startswith("hand:"):
                    rec = run_hand(args, np, side[len("hand:"):], out, env, case)
                    records.setdefault((np, side), []).append(rec)
                    what = rec.get("error") or f"create..close {rec['output_blocked_s']:.3f} s"
                    count.finish(time.monotonic() - t_run)
                    print(f"  [{count.done}/{count.total}] np {np} repeat {rep + 1}/{args.repeat} "
                          f"{side:<14} {what}{count.left()}", flush=True)
                    continue
                rec = run_side(args, bench, np, side, out, env,
                               check=rep == 0 and not args.no_check)
                records.setdefault((np, side), []).append(rec)
                what = rec.get("error") or (f"blocked {rec['output_blocked_s']:.3f} s, "
                                            f"wall {rec['wall_s']:.3f} s")
                count.finish(time.monotonic() - t_run)
                print(f"  [{count.done}/{count.total}] np {np} repeat {rep + 1}/{args.repeat} "
                      f"{side:<14} {what}{count.left()}", flush=True)
    rows = summarise(records, names, nps)
    print()
    print(table(rows, cores))
    print("ratio = Tessera / plain of the same repeat: median (min-max); \"within spread\": "
          "the paired ratios' range includes 1.00")
    hrows = hand_rows(records, names, nps) if case else []
    if hrows:
        print()
        print(hand_table(hrows, cores))
        print(f"against {args.yardstick} (hand-written, same bytes): create..close, "
              "side / hand-written of the same repeat")
    if args.against:
        print()
        print(pairs_table(records, names, nps, cores, "", "old:", ("this build", "other build")))
        print(f"this build ({bench}) / the other ({args.against}): blocked time of the same "
              "repeat")
    if args.with_hints:
        print()
        print(pairs_table(records, names, nps, cores, "with:", "", ("with", "without")))
        print(f"with {args.with_hints} / without: blocked time of the same repeat")
    if args.json:
        dump = {"rows": rows, "hand_rows": hrows, "runs": {f"{np} {side}": recs
                                       for (np, side), recs in records.items()}}
        try:
            write_text(args.json, json.dumps(dump, indent=2) + "\n")
        except OutputPathError as e:
            return refuse("overhead", e)
    failed = [r for r in rows if "error" in r and not r.get("notbuilt")]
    failed += [r for r in hrows if "error" in r]
    return 1 if failed else 0
