"""Running tessera-bench for the model: one run per (strategy, process
count), its --json record kept, its history files removed (only the timings
matter). Used by `tessera model calibrate` and `tessera model validate here`.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time

from ..bench.launch import find_bench, mpiexec_command
from .strategy import Strategy


class RunError(Exception):
    pass


def bench_argv(case_opts: dict) -> list:
    argv = []
    for k in ("nx", "ny", "nz", "steps", "output_every", "sweeps", "frames_per_file"):
        if case_opts.get(k) is not None:
            argv += [f"--{k.replace('_', '-')}", str(case_opts[k])]
    if case_opts.get("schema"):
        argv += ["--schema", case_opts["schema"]]
    return argv


def background(seconds: float = 0.2) -> float:
    """Other runnable processes on this machine, measured: spin one thread
    for `seconds` and see what share of a core it got. With C cores and L
    other busy processes a thread gets C/(L+1) of a core when L >= C, so
    L = C/share - 1; a full core means none to speak of (0)."""
    cores = os.cpu_count() or 1
    w0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < seconds:
        pass
    share = (time.process_time() - c0) / max(1e-9, time.perf_counter() - w0)
    return 0.0 if share >= 0.95 else max(0.0, cores / max(share, 1e-3) - 1.0)


def run_bench(strat: Strategy, ranks: int, case_opts: dict, bench: str | None = None,
              mpiexec: str = "mpiexec", workdir: str | None = None, timeout: float = 600.0,
              command: list | None = None, extra_hints: str = "") -> dict:
    """One run; returns its --json record plus `hints_model` (the strategy
    as the model names it). `command` replaces tessera-bench (the user's own
    bench-compatible launcher line); the record must come from --json.
    `extra_hints` (e.g. `format=netcdf4:deflate=1`) go after the strategy's."""
    exe = bench or find_bench()
    if not command and not exe:
        raise RunError("tessera-bench not found (build it, or give --bench)")
    tmp = tempfile.mkdtemp(prefix="tsr-model-", dir=workdir)
    try:
        out = os.path.join(tmp, "files")
        js = os.path.join(tmp, "run.json")
        prog = list(command) if command else [exe]
        hints = strat.hints() + (":" + extra_hints if extra_hints else "")
        argv = mpiexec_command(mpiexec, ranks) + prog + bench_argv(case_opts) + [
            "--hints", hints, "--out", out, "--json", js, "--quiet"]
        before = background()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        after = background()
        if p.returncode != 0 or not os.path.exists(js):
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no message"]
            raise RunError(f"{strat.label()} on {ranks}: exit {p.returncode}: {tail[0]}")
        with open(js, encoding="utf-8") as fh:
            rec = json.load(fh)
        rec["hints_model"] = hints
        # The CPU contention the run met, for predictions at the same load.
        rec["model_background"] = round((before + after) / 2, 2)
        return rec
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def runs_at(s, n: int) -> bool:
    """Whether strategy `s` can run on `n` processes (its row says: servers
    keep a model rank, aggregate needs its aggregators)."""
    return s.row().runs_at(s, n)


def run_matrix(strategies: list, ranks: list, case_opts: dict, log=None, **kw) -> list:
    """Every strategy at every process count it can run on."""
    records = []
    for n in ranks:
        for s in strategies:
            if not runs_at(s, n):
                continue
            rec = run_bench(s, n, case_opts, **kw)
            records.append(rec)
            if log:
                log(f"  {s.label():<14} {n} ranks: blocked {rec['output_blocked_s']:.3f} s, "
                    f"wall {rec['wall_s']:.2f} s")
    return records


def save_records(records: list, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"runs": records}, fh, indent=1)
        fh.write("\n")
    return path


def load_records(path: str) -> list:
    with open(path, encoding="utf-8") as fh:
        obj = json.load(fh)
    return obj["runs"] if isinstance(obj, dict) else obj
