"""Scale by simulation: what each process holds and sends as the process count
grows, measured on one machine by oversubscribing it (docs/scaling.md).

Times mean nothing with 256 processes on 2 cores, but memory and message
counts do not depend on the cores: they are what breaks I/O libraries at scale
(rearranger buffers, write groups out of memory, root ranks flooded). For each
strategy and process count the bench runs twice, writing 1 and then 3 history
outputs of the same small case with no stencil (no model traffic), under
Open MPI's own monitoring (pml/coll monitoring components, per-rank files of
messages and bytes) and GNU time (each process's peak resident memory), with
Tessera's statistics (its own peak buffers). The difference of the two runs,
halved, is one output's traffic; set-up (init, decompositions, the bench's
reports) cancels out. Each figure's growth with P is fitted as P^k (least
squares on log-log), and the table says what the algorithm requires.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .cli_args import at_least
from .model.case import bench_case
from .model.predict import predict
from .model.profile import load as load_profile
from .model.strategy import Strategy, grid, sync_frame
from .strategies import reserves_servers
from .bench.launch import bench_or_say, is_open_mpi, mpiexec_command
from .outpath import OutputPathError, output_dir, refuse, write_text
from .textout import Countdown, table_text

#: strategy -> hints; servers: one group of one task, so at P = 256 one server
#: has 255 clients.
HINTS = {
    "serial": "strategy=serial",
    "direct": "strategy=direct",
    "aggregate": "strategy=aggregate",
    "split": "strategy=split",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",
}
#: What the algorithm requires of the busiest process's messages per output
#: and of its memory (the docs' table; the fits are checked against it).
REQUIRED = {
    "serial": "the root receives every rank's pieces: O(P) messages; memory bounded by slab_bytes",
    "direct": "MPI-IO two-phase: an aggregator (one per node by default) receives from every "
              "rank of its file domain: O(P) on one node; Tessera holds one tile: O(1/P)",
    "aggregate": "Tessera: P/A senders per aggregator, A = P/4: O(1); MPI-IO two-phase among "
                 "the A aggregators below it: O(A) on one node",
    "split": "no point-to-point message; collectives only (agreement): O(log P) each",
    "servers": "the server receives every client's pieces: O(P) messages; memory bounded by "
               "its slabs (server_buffer_bytes when set)",
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tessera scaling", description=__doc__.split("\n\n")[0])
    a = p.add_argument
    a("--np", default="16,32,64,128,256", help="process counts (16,32,64,128,256)")
    a("--strategies", default=",".join(HINTS), help="strategies (all)")
    a("--nx", type=at_least(1), default=256, help="bench --nx (256)")
    a("--ny", type=at_least(1), default=256, help="bench --ny (256)")
    a("--nz", type=at_least(1), default=4, help="bench --nz (4)")
    a("--bench", help="tessera-bench executable (default: PATH, then build/apps/bench)")
    a("--mpiexec", default="mpiexec", help="Open MPI's mpiexec (its monitoring is used)")
    a("--timeout", type=float, default=900.0, help="seconds per run (900)")
    a("--out", default="out/scaling", help="directory for records and logs (out/scaling)")
    return p


def parse_prof(path: str) -> dict:
    """One rank's Open MPI monitoring file: the point-to-point messages and
    bytes it sent to each rank (E lines), and the messages the algorithms of
    its collectives sent (I lines: an allreduce by recursive doubling is log2 P
    of them)."""
    out = {"to": {}, "coll_msgs": 0, "coll_bytes": 0}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) < 5 or f[0] not in ("E", "I"):
                continue
            dst, nbytes, nmsgs = int(f[2]), int(f[3].split()[0]), int(f[4].split()[0])
            if f[0] == "E":
                m, b = out["to"].get(dst, (0, 0))
                out["to"][dst] = (m + nmsgs, b + nbytes)
            else:
                out["coll_msgs"] += nmsgs
                out["coll_bytes"] += nbytes
    return out


def rank_figures(ranks: dict) -> dict:
    """rank -> messages and bytes sent and received point to point, and its
    collectives' figures."""
    fig = {r: {"sent_msgs": 0, "sent_bytes": 0, "recv_msgs": 0, "recv_bytes": 0,
               "coll_msgs": v["coll_msgs"]} for r, v in ranks.items()}
    for src, v in ranks.items():
        for dst, (m, b) in v["to"].items():
            fig[src]["sent_msgs"] += m
            fig[src]["sent_bytes"] += b
            if dst in fig:
                fig[dst]["recv_msgs"] += m
                fig[dst]["recv_bytes"] += b
    return fig


def parse_rss(work: Path) -> dict:
    """rank -> peak resident memory (KiB), from the file GNU time wrote for
    each rank (rss.<rank>: one file each, as lines on a shared stderr mix)."""
    rss = {}
    for path in glob.glob(str(work / "rss.*")):
        try:
            rss[int(path.rsplit(".", 1)[1])] = int(Path(path).read_text().split()[-1])
        except (ValueError, IndexError, OSError):
            continue
    return rss


def run_once(args, bench: str, strategy: str, np: int, outputs: int, work: Path) -> dict:
    """One bench run writing `outputs` history outputs; per-rank figures."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    stats = work / "stats.jsonl"
    env = dict(os.environ, TESSERA_STATS_FILE=str(stats), TESSERA_HINTS="",
               OMPI_MCA_pml_monitoring_enable="2", OMPI_MCA_pml_monitoring_enable_output="3",
               OMPI_MCA_pml_monitoring_filename=str(work / "prof"))
    # GNU time around each process; the inner shell puts the process's rank
    # (Open MPI's OMPI_COMM_WORLD_RANK) into time's line.
    timer = ["sh", "-c", f'exec /usr/bin/time -f %M -o "{work}/rss.$OMPI_COMM_WORLD_RANK" "$@"',
             "tessera-scaling"]
    cmd = mpiexec_command(args.mpiexec, np) + timer + [
        bench, "--nx", str(args.nx), "--ny", str(args.ny), "--nz", str(args.nz),
        "--steps", str(outputs - 1), "--output-every", "1", "--sweeps", "0", "--halo", "0",
        "--out", str(work / "files"), "--hints", HINTS[strategy], "--quiet"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result after {args.timeout:.0f} s"}
    (work / "run.log").write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    shutil.rmtree(work / "files", ignore_errors=True)
    if proc.returncode != 0:
        tail = [ln for ln in proc.stderr.splitlines() if ln.startswith("tessera-bench:")]
        return {"error": tail[0] if tail else f"exit {proc.returncode} (see {work}/run.log)"}
    ranks = {}
    for path in glob.glob(str(work / "prof.*.prof")):
        ranks[int(path.rsplit(".", 2)[-2])] = parse_prof(path)
    rss = parse_rss(work)
    peak = io_peak = 0
    if stats.exists():
        for line in stats.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            peak = max(peak, rec.get("peak_buffer_bytes", {}).get("max", 0))
            io_peak = max(io_peak, rec.get("io_peak_buffer_bytes", {}).get("max", 0))
    if len(ranks) != np or len(rss) != np:
        return {"error": f"monitoring files for {len(ranks)} and memory for {len(rss)} of {np} "
                         f"ranks (Open MPI's pml monitoring and GNU time are needed)"}
    return {"ranks": ranks, "rss": rss, "peak": peak, "io_peak": io_peak}


KEYS = ("sent_msgs", "sent_bytes", "recv_msgs", "recv_bytes", "coll_msgs")


def per_output(one: dict, three: dict) -> dict:
    """One output's figures, the busiest rank's (the 3-output run less the
    1-output run, halved), and the runs' memory."""
    a, b = rank_figures(one["ranks"]), rank_figures(three["ranks"])
    busiest = {}
    for key in KEYS:
        busiest[key] = max((b[r][key] - a[r][key]) / 2 for r in b)
    rss = three["rss"]
    busiest["rss_max_kb"] = max(rss.values())
    busiest["rss_median_kb"] = sorted(rss.values())[len(rss) // 2]
    busiest["tessera_peak_bytes"] = three["peak"]
    busiest["server_peak_bytes"] = three["io_peak"]
    return busiest


def peak_key(strategy: str) -> str:
    """The record's measured peak to set next to the model's writer memory:
    the server's for a strategy with server ranks."""
    return "server_peak_bytes" if reserves_servers(strategy) else "tessera_peak_bytes"


def model_figures(args, strategy: str, np: int) -> dict:
    """What the cost model assumes for one output of the same case (docs/model.md):
    messages and bytes at its busiest receiver (msg_s, net_bw), the stages of
    its collectives (coll_s), and the memory it prices on a writer or server."""
    case = bench_case(args.nx, args.ny, args.nz, 2, 1)
    strat = Strategy.parse(HINTS[strategy])
    prof = load_profile("here")   # counts do not depend on the machine's rates
    if strat.row().server_ranks:
        model, px, py = grid(case, strat, np)
        a = strat.row().server_frame(case, strat, prof, model, px, py)
    else:
        a = sync_frame(case, strat, prof, np)
    pred = predict(case, strat, prof, np)
    return {"recv_msgs": a.get("msg_s", 0.0), "recv_bytes": a.get("net_bw", 0.0),
            "coll_stages": a.get("coll_s", 0.0), "mem_writer": pred.mem_writer}


def exponent(ps: list, values: list) -> float | None:
    """k of the least-squares fit value = c * P^k on log-log (None when a value is 0)."""
    pts = [(math.log(p), math.log(v)) for p, v in zip(ps, values) if v > 0]
    if len(pts) < 2 or len(pts) != len(ps):
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


FIGURES = (("sent_msgs", "sent msgs"), ("recv_msgs", "recv msgs"), ("recv_bytes", "recv bytes"),
           ("coll_msgs", "coll msgs"), ("rss_max_kb", "max RSS KiB"),
           ("tessera_peak_bytes", "Tessera peak B"), ("server_peak_bytes", "server peak B"))


def model_table(results: dict, nps: list) -> str:
    """The model's counts next to the measured ones (model / measured)."""
    rows = []
    for s, by_np in results.items():
        for p in nps:
            r = by_np.get(p, {})
            m = r.get("model")
            if "error" in r or not m:
                continue
            ratio = lambda a, b: f"{a / b:.2f}" if b else ("-" if not a else "inf")  # noqa: E731
            rows.append([s, str(p), f"{m['recv_msgs']:.0f}", f"{r['recv_msgs']:.0f}",
                         ratio(m["recv_msgs"], r["recv_msgs"]), f"{m['recv_bytes']:.0f}",
                         f"{r['recv_bytes']:.0f}", ratio(m["recv_bytes"], r["recv_bytes"]),
                         f"{m['coll_stages']:.0f}", f"{r['coll_msgs']:.0f}",
                         f"{m['mem_writer']:.0f}", f"{r[peak_key(s)]:.0f}"])
    head = ["strategy", "P", "model recv msgs", "measured", "ratio", "model recv bytes",
            "measured", "ratio", "model coll stages", "measured coll msgs",
            "model writer mem B", "measured peak B"]  # servers: the server's peak
    return table_text(head, rows, right=set(head[1:]))


def tables(results: dict, nps: list) -> str:
    rows, fits = [], []
    for s, by_np in results.items():
        ok = [p for p in nps if "error" not in by_np.get(p, {"error": 1})]
        for p in nps:
            r = by_np.get(p, {"error": "not run"})
            if "error" in r:
                rows.append([s, str(p), r["error"]] + [""] * (len(FIGURES) - 1))
                continue
            rows.append([s, str(p)] + [f"{r[k]:.0f}" for k, _ in FIGURES])
        fit = [s]
        for k, _ in FIGURES:
            e = exponent(ok, [by_np[p][k] for p in ok])
            fit.append("-" if e is None else f"{e:.2f}")
        fits.append(fit + [REQUIRED[s]])
    head = ["strategy", "P"] + [name for _, name in FIGURES]
    fit_head = ["strategy"] + [f"k {name}" for _, name in FIGURES] + ["the algorithm requires"]
    return (table_text(head, rows, right=set(head[1:])) + "\n\nper output, the busiest rank's: "
            "point-to-point messages sent and received, bytes received, and the messages "
            "its collectives' algorithms sent; RSS: the 3-output run's peak resident "
            "memory, any rank; peaks: Tessera's buffers (statistics)\n\ngrowth as P^k:\n\n"
            + table_text(fit_head, fits))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        nps = [int(n) for n in args.np.split(",") if n.strip()]
        if not nps or min(nps) < 2:
            raise ValueError
    except ValueError:
        print(f"tessera scaling: --np: expected process counts >= 2 such as 16,32, got "
              f"'{args.np}'", file=sys.stderr)
        return 2
    names = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in names if s not in HINTS]
    if unknown:
        print(f"tessera scaling: unknown strategy {unknown[0]} ({', '.join(HINTS)})",
              file=sys.stderr)
        return 2
    if not is_open_mpi(args.mpiexec) or not os.access("/usr/bin/time", os.X_OK):
        print("tessera scaling: needs Open MPI's mpiexec (its pml monitoring counts the "
              "messages) and GNU time (/usr/bin/time, the memory)", file=sys.stderr)
        return 2
    bench = bench_or_say("scaling", args.bench)
    if not bench:
        return 2
    try:
        out = output_dir(args.out)
    except OutputPathError as e:
        return refuse("scaling", e)
    count = Countdown(2 * len(names) * len(nps))
    results: dict = {s: {} for s in names}
    for p in nps:
        for s in names:
            runs = []
            for outputs in (1, 3):
                tag, t0 = count.tag(), time.monotonic()
                r = run_once(args, bench, s, p, outputs, out / f"{s}-np{p}-o{outputs}")
                count.finish(time.monotonic() - t0)
                print(f"{tag} {s:<9} P={p:<4} {outputs} output(s): "
                      f"{r.get('error', 'done')}", flush=True)
                runs.append(r)
            err = next((r["error"] for r in runs if "error" in r), None)
            results[s][p] = {"error": err} if err else per_output(*runs)
            if not err:
                try:
                    results[s][p]["model"] = model_figures(args, s, p)
                except ValueError as e:   # a layout the model cannot price
                    results[s][p]["model"] = None
                    print(f"  model: {e}", flush=True)
    try:
        write_text(out / "scaling.json", json.dumps(
            {"case": {"nx": args.nx, "ny": args.ny, "nz": args.nz}, "np": nps,
             "results": {s: {str(p): r for p, r in v.items()} for s, v in results.items()}},
            indent=2) + "\n")
    except OutputPathError as e:
        return refuse("scaling", e)
    print()
    print(f"case {args.nx} x {args.ny} x {args.nz}, WRF-like default fields, "
          f"{len(nps)} process counts, on {os.cpu_count()} cores (oversubscribed)")
    print(tables(results, nps))
    print()
    print("the cost model's counts for one output of the same case, next to the measured "
          "(busiest rank):")
    print(model_table(results, nps))
    print(f"results: {out}/scaling.json")
    return 0 if all("error" not in r for v in results.values() for r in v.values()) else 1
