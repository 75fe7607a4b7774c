"""Running one trial of `tessera tune`: the command, its environment, its figures.

Each run gets a fresh directory inside the session's scratch directory, passed to
the command as `{scratch}` and TESSERA_TUNE_SCRATCH; the statistics file and the
`{json}` metrics file live there too. The directory is removed as soon as the
figures are read, so a long session never fills the disk with trial outputs.
The tuner only ever removes directories it created itself (see Scratch).
"""
from __future__ import annotations

import json
import os
import signal
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from ..bench.launch import mpiexec_refusal
from ..stats.records import read_records
from .space import SMALL_FILE_RATIO, record_matches

#: Objective name -> (metric field, whether larger is better).
OBJECTIVES = {
    "wall": ("wall_s", False),
    "blocked": ("blocked_s", False),
    "write_bw": ("write_bw", True),
}

#: Names the bench's --json metrics use for the same figures (docs: Metrics).
JSON_KEYS = {"wall_s": "wall_s", "blocked_s": "output_blocked_s", "write_bw": "write_bw",
             "bytes": "bytes"}

SMALL_WRITE_BUCKETS = ("TSR_SIZE_WRITE_0_100", "TSR_SIZE_WRITE_100_1K",
                       "TSR_SIZE_WRITE_1K_10K", "TSR_SIZE_WRITE_10K_100K",
                       "TSR_SIZE_WRITE_100K_1M")

MARKER = ".tessera-tune-scratch"


class TrialInterrupted(Exception):
    """Ctrl-C (or SIGTERM) arrived while a trial ran; the trial was stopped."""


@dataclass
class RunResult:
    status: str                 # ok | failed | timeout | no-metric
    rc: int | None
    elapsed_s: float            # wall clock of the command, measured by the tuner
    metrics: dict = field(default_factory=dict)   # wall_s, blocked_s, write_bw, bytes
    stats: dict = field(default_factory=dict)     # summary of the statistics records
    source: str = "clock"       # where the objective came from: json | stats | clock
    error: str = ""

    def to_dict(self) -> dict:
        return {"status": self.status, "rc": self.rc, "elapsed_s": self.elapsed_s,
                "metrics": self.metrics, "stats": self.stats, "source": self.source,
                "error": self.error}

    @classmethod
    def from_dict(cls, d: dict) -> "RunResult":
        return cls(d["status"], d.get("rc"), d.get("elapsed_s", 0.0), d.get("metrics", {}),
                   d.get("stats", {}), d.get("source", "clock"), d.get("error", ""))


class Scratch:
    """The session's scratch directory: created fresh, removed only by identity.

    Cleanup removes exactly the path mkdtemp returned, after checking the marker
    file written into it at creation, so a wrong path (a symlink swapped in, a
    user's directory) is never deleted.
    """

    def __init__(self, parent: str | None):
        parent = os.path.abspath(parent or os.getcwd())
        self.path = tempfile.mkdtemp(prefix="tessera-tune-", dir=parent)
        self.token = f"{os.getpid()}-{time.time_ns()}"
        with open(os.path.join(self.path, MARKER), "w") as fh:
            fh.write(self.token)
        self._count = 0

    def _ours(self, path: str) -> bool:
        try:
            with open(os.path.join(self.path, MARKER)) as fh:
                if fh.read() != self.token:
                    return False
        except OSError:
            return False
        real, root = os.path.realpath(path), os.path.realpath(self.path)
        return real == root or os.path.dirname(real) == root

    def trial_dir(self, tag: str) -> str:
        self._count += 1
        path = os.path.join(self.path, f"{self._count:04d}-{tag}")
        os.mkdir(path)
        return path

    def remove(self, path: str) -> None:
        """Remove one trial directory (a direct child this session created)."""
        if path != self.path and not os.path.islink(path) and self._ours(path):
            shutil.rmtree(path, ignore_errors=True)

    def cleanup(self) -> None:
        if os.path.isdir(self.path) and not os.path.islink(self.path) and self._ours(self.path):
            shutil.rmtree(self.path, ignore_errors=True)


def _proc_table() -> dict:
    """pid -> (ppid, start time) of every process, from /proc (Linux); {} elsewhere."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            table[int(name)] = (int(fields[1]), fields[19])  # ppid, starttime
        except (OSError, IndexError, ValueError):
            continue
    return table


def _descendants(pid: int) -> dict:
    """pid -> start time of every process below pid (mpiexec's daemons and ranks)."""
    table = _proc_table()
    children = {}
    for p, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(p)
    out, todo = {}, list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out[p] = table[p][1]
        todo += children.get(p, [])
    return out


def _kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop the command and everything it started (mpiexec and its ranks).

    SIGTERM goes to the command's process group (it leads one of its own), which
    lets mpiexec take its ranks down. Open MPI puts each rank in a process group
    of its own, so the ranks are also collected beforehand from /proc, and any
    still alive afterwards (same pid and same start time, so never a process
    that merely reused a pid) gets SIGKILL.
    """
    tree = _descendants(proc.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.wait()
    deadline = time.monotonic() + grace
    while tree and time.monotonic() < deadline:
        table = _proc_table()
        tree = {p: t for p, t in tree.items() if table.get(p, (0, None))[1] == t}
        if tree:
            time.sleep(0.05)
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _tail(path: str, lines: int = 4) -> str:
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()[-4000:]
    except OSError:
        return ""
    refusal = mpiexec_refusal(text)
    if refusal:
        return refusal
    keep = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # A Tessera error name is the most useful thing to show (e.g. TSR_ENOTBUILT).
    named = [ln for ln in keep if "TSR_E" in ln]
    return " | ".join((named or keep)[-lines:])[:400]


def read_stats(path: str, glob: str = "") -> list:
    """Statistics records (docs/stats-format.md) of the files the trial hints touch."""
    try:
        records, _skipped = read_records(path)  # half-written lines of a killed run are skipped
    except OSError:
        return []
    return [rec for rec in records if record_matches(rec, glob)]


def _num(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _field(rec: dict, name: str, part: str = "max") -> float:
    v = rec.get(name)
    if isinstance(v, dict):
        v = v.get(part)
    return _num(v) or 0.0


def summarize_stats(records: list) -> dict:
    """One summary of a run's statistics records, the figures the rules look at.

    Times are summed over files: a run writing one file per history time blocks
    the model once per file, so the sum of per-file maxima is the model's cost.
    """
    if not records:
        return {}
    counters = [r.get("counters") or {} for r in records]
    csum = lambda k: sum(_num(c.get(k)) or 0 for c in counters)  # noqa: E731
    return {
        "files": len(records),
        "strategy": records[-1].get("strategy"),
        "backend": records[-1].get("backend"),
        "model_ranks": max(int(_num(r.get("model_ranks")) or 0) for r in records),
        "io_ranks": max(int(_num(r.get("io_ranks")) or 0) for r in records),
        "writers": max(int(_num(r.get("writers")) or 0) for r in records),
        "bytes": sum(int(_num(r.get("bytes")) or 0) for r in records),
        "file_bytes": max(int(_num(r.get("bytes")) or 0) for r in records),
        "blocked_max": sum(_field(r, "blocked_s") for r in records),
        "writer_max": sum(_field(r, "writer_s") for r in records),
        "writer_mean": sum(_field(r, "writer_s", "mean") for r in records),
        "peak_buffer_max": max(_field(r, "peak_buffer_bytes") for r in records),
        "stripe_size": max(int(_num(r.get("stripe_size")) or 0) for r in records),
        "writes": int(csum("TSR_WRITES")),
        "bytes_written": int(csum("TSR_BYTES_WRITTEN")),
        "small_writes": int(sum(csum(k) for k in SMALL_WRITE_BUCKETS)),
        "not_aligned": int(csum("TSR_FILE_NOT_ALIGNED")),
        "var_bytes": _var_bytes(records),
        **_small_files(records),
    }


def _small_files(records: list) -> dict:
    """The files SMALL_FILE_RATIO times smaller than the largest: how large the
    largest of them is and the model's blocked time they account for (the
    hybrid-placement rule of rules)."""
    sizes = [int(_num(r.get("bytes")) or 0) for r in records]
    largest = max(sizes, default=0)
    small = [(b, _field(r, "blocked_s")) for b, r in zip(sizes, records)
             if b * SMALL_FILE_RATIO <= largest]
    return {"small_files": len(small),
            "small_file_bytes": max((b for b, _ in small), default=0),
            "small_blocked": sum(t for _, t in small)}


def _var_bytes(records: list) -> int:
    """Mean bytes of one variable in one frame, in the file where it is smallest
    (0 when no record says how many variables it holds)."""
    sizes = []
    for r in records:
        nv = int(_num(r.get("variables")) or 0)
        if nv > 0:
            frames = max(1, int(_num(r.get("frames")) or 1))
            sizes.append(int((_num(r.get("bytes")) or 0) // (nv * frames)))
    return min(sizes) if sizes else 0


def _find_key(obj, key: str, depth: int = 0):
    """A numeric `key` in the bench's JSON: top level first, then nested objects."""
    if depth > 4:
        return None
    if isinstance(obj, dict):
        if _num(obj.get(key)) is not None:
            return obj[key]
        children = list(obj.values())
    elif isinstance(obj, list):
        children = obj[::-1]  # several records: the last one is the whole run
    else:
        return None
    for child in children:
        found = _find_key(child, key, depth + 1)
        if found is not None:
            return found
    return None


def read_json_metrics(path: str) -> dict:
    """wall_s / blocked_s / write_bw / bytes from the command's `{json}` file."""
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = []
        for line in text.splitlines():  # JSON lines: take every parseable one
            try:
                data.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    out = {}
    for name, key in JSON_KEYS.items():
        v = _find_key(data, key)
        if v is not None:
            out[name] = float(v)
    return out


def compute_metrics(elapsed: float, json_metrics: dict, stats: dict) -> tuple:
    """The three objective figures, preferring what the command itself measured."""
    m = {"wall_s": json_metrics.get("wall_s", elapsed)}
    if "blocked_s" in json_metrics:
        m["blocked_s"] = json_metrics["blocked_s"]
    elif stats:
        m["blocked_s"] = stats["blocked_max"]
    nbytes = json_metrics.get("bytes", stats.get("bytes") if stats else None)
    if "write_bw" in json_metrics:
        m["write_bw"] = json_metrics["write_bw"]
    elif stats and stats.get("writer_max", 0) > 0:
        m["write_bw"] = stats["bytes"] / stats["writer_max"]
    if nbytes is not None:
        m["bytes"] = nbytes
    source = "json" if json_metrics else ("stats" if stats else "clock")
    return m, source


class Runner:
    """Runs the user's command once per call with the given hints."""

    def __init__(self, command: list, scratch: Scratch, objective: str = "wall",
                 glob: str = "", run_in_scratch: bool = False):
        self.command = list(command)
        self.scratch = scratch
        self.metric, self.larger_better = OBJECTIVES[objective]
        self.glob = glob
        self.run_in_scratch = run_in_scratch

    def argv(self, trial_dir: str, json_path: str) -> list:
        return [a.replace("{json}", json_path).replace("{scratch}", trial_dir)
                for a in self.command]

    def run(self, hints: str, tag: str, timeout: float | None) -> RunResult:
        tdir = self.scratch.trial_dir(tag)
        stats_path = os.path.join(tdir, "stats.jsonl")
        json_path = os.path.join(tdir, "metrics.json")
        env = dict(os.environ)
        env.update(TESSERA_HINTS=hints, TESSERA_STATS_FILE=stats_path,
                   TESSERA_TUNE_SCRATCH=tdir, TESSERA_TUNE_TRIAL=tag)
        out_path, err_path = os.path.join(tdir, "stdout.log"), os.path.join(tdir, "stderr.log")
        try:
            return self._run(self.argv(tdir, json_path), env, tdir, stats_path, json_path,
                             out_path, err_path, timeout)
        finally:
            self.scratch.remove(tdir)

    def _run(self, argv, env, tdir, stats_path, json_path, out_path, err_path, timeout):
        start = time.perf_counter()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                # A session of its own: Ctrl-C reaches the tuner only, and the tuner
                # stops the whole group (mpiexec and ranks) in an orderly way.
                proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        cwd=tdir if self.run_in_scratch else None)
            except OSError as exc:
                return RunResult("failed", None, 0.0, error=f"cannot start: {exc}")
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return RunResult("timeout", None, time.perf_counter() - start,
                                 error=f"no result after {timeout:.0f} s; stopped")
            except KeyboardInterrupt:
                _kill_group(proc)
                raise TrialInterrupted() from None
        elapsed = time.perf_counter() - start
        stats = summarize_stats(read_stats(stats_path, self.glob))
        metrics, source = compute_metrics(elapsed, read_json_metrics(json_path), stats)
        if rc != 0:
            return RunResult("failed", rc, elapsed, metrics, stats, source,
                             error=_tail(err_path) or _tail(out_path) or f"exit status {rc}")
        if metrics.get(self.metric) is None:
            return RunResult("no-metric", rc, elapsed, metrics, stats, source,
                             error=f"no {self.metric} figure: no statistics record or "
                                   f"{{json}} metrics")
        return RunResult("ok", rc, elapsed, metrics, stats, source)
