"""`tessera model calibrate`: measure this machine's profile with short
tessera-bench runs (or the user's own bench-compatible command).

Each run's measured times are explained by the amounts the model says that
run moves (strategy), so the profile is a non-negative least-squares
fit (fit) over two kinds of rows per run:
  - the model ranks' blocked time (output_blocked_s): everything the
    strategy costs the model;
  - the writers' time (writer_s, or the servers' writer time): their own
    backend calls alone (serial's writes, split's pack and write, an
    aggregator's buffering and collective write), which separates write
    rates from data movement.
Runs are repeated and the fastest kept (on a shared machine, the run least
disturbed by other jobs); each is explained at the CPU load measured around
it (runs.background: other busy processes), so runs taken at
different loads fit one profile.
"""
from __future__ import annotations

from .case import case_from_record
from .deflate import measure as measure_deflate
from .fit import fit
from .ompio import BYTES_PER_AGG
from .moves import WRITE_KEYS, exposed_share
from .predict import imbalance_s, run_amounts
from .profile import Profile
from .amounts import Amounts
from .strategy import Strategy, busy_ranks, grid

#: Strategies a calibration runs, at every process count given.
CALIBRATION = ("strategy=serial", "strategy=direct", "strategy=aggregate:aggregators=2",
               "strategy=split", "strategy=servers:io_groups=1:io_tasks=1")

#: Starting values: parameters a short run on few ranks cannot see keep these
#: (match_s needs fan-ins of hundreds of ranks; coll_s is refitted).
DEFAULTS = {"copy_bw": 5e9, "net_bw": 5e9, "msg_s": 2e-6, "match_s": 5e-8, "coll_s": 5e-6,
            "write_bw": 1e9, "fs_bw": 5e9, "req_s": 2e-5, "file_s": 2e-3, "open_s": 1e-3,
            "slice_s": 1e-3, "piece_s": 1e-7, "mpiio_bw": 0.0}
FREE = ("copy_bw", "net_bw", "msg_s", "coll_s", "write_bw", "fs_bw", "req_s", "file_s",
        "open_s", "slice_s", "piece_s", "mpiio_bw")


def fastest(records: list) -> list:
    """One record per (hints, processes): the one with the least blocked time."""
    best = {}
    for r in records:
        key = (r.get("hints_model") or r["hints"], record_ranks(r))
        if key not in best or r["output_blocked_s"] < best[key]["output_blocked_s"]:
            best[key] = r
    return list(best.values())


def background(rec: dict) -> float:
    """Other busy processes measured around the run (runs.background)."""
    return float(rec.get("model_background", 0.0) or 0.0)


def record_strategy(rec: dict) -> Strategy:
    return Strategy.parse(rec.get("hints_model") or rec["hints"])


def record_ranks(rec: dict) -> int:
    return int(rec["ranks"]["model"]) + int(rec["ranks"]["io"])


def rows_of(rec: dict, base: Profile) -> list:
    """(amounts at the run's load, measured seconds) rows one run gives."""
    case = case_from_record(rec)
    strat = record_strategy(rec)
    n = record_ranks(rec)
    rows = []
    bg = background(rec)
    # The wait for the slowest computing rank is compute time, not a cost
    # to fit (predict.imbalance_s): it comes off the measured time.
    blocked = float(rec["output_blocked_s"])
    row = strat.row()
    if row.server_ranks:
        model, px, py = grid(case, strat, n)
        servers = strat.server_ranks()
        frame = row.server_frame(case, strat, base, model, px, py)
        w = Amounts().plus(frame, case.outputs)
        w.plus(row.server_file_cost(case, strat), case.files)
        w = Amounts({k: v for k, v in w.items() if k in WRITE_KEYS})
        srv = float(rec.get("library", {}).get("server_writer_s", 0.0) or rec.get("writer_s", 0))
        if srv > 0:     # the servers' own work: only they are busy with it
            rows.append((w.loaded(base, n, servers, bg), srv))
        # Blocked time when the servers keep up: every hand-off, the define
        # calls, the servers' work that found no free core (predict),
        # and the drain (the rest of the last frame's write) at the end.
        e = exposed_share(base, model, servers, bg)
        b = Amounts().plus(row.handoff_frame(case, strat, model, px, py), case.outputs)
        b.plus(row.model_file_cost(case, strat, model), case.files)
        b = b.loaded(base, n, n, bg)
        b.plus(frame.loaded(base, n, servers, bg), e * case.outputs + (1.0 - e))
        rows.append((b, blocked - imbalance_s(case, base, model, bg)))
        return rows
    a = run_amounts(case, strat, base, n)
    busy = busy_ranks(strat, n, case, base)
    rows.append((a.loaded(base, n, busy, bg, row.everyone),
                 blocked - imbalance_s(case, base, n, bg)))
    # writer_s is the writer's own time in its backend calls (sink.c):
    # create, pack (split), write, close. Each call is shorter than a
    # scheduler slice, so it runs at full speed even when processes
    # outnumber cores; only other jobs' load stretches it.
    if float(rec.get("writer_s", 0) or 0) > 0:
        w = row.writer_amounts(case, strat, base, *grid(case, strat, n), a)
        if w is not None:
            rows.append((w.loaded(base, n, 1, bg), float(rec["writer_s"])))
    return rows


def calibrate(records: list, name: str = "here", cores: int = 0, free=FREE) -> Profile:
    # cb_nodes 0: the MPI-IO's own choice; the cycle buffer is OMPIO's
    # io_ompio_bytes_per_agg (ompio), the MPI-IO of Open MPI 4.1.
    base = Profile(name=name, values=dict(DEFAULTS), cores=cores, cb_nodes=0,
                   cb_buffer_bytes=BYTES_PER_AGG,
                   description="calibrated with tessera-bench runs",
                   source="tessera model calibrate")
    # NetCDF-4 runs (calibrate --deflate) measure compression alone; the
    # equations price the classic formats the other runs write.
    classic = [r for r in records if "netcdf4" not in str(r.get("hints", ""))]
    rows = [row for r in fastest(classic) for row in rows_of(r, base)]
    if not rows:
        raise ValueError("no usable runs to calibrate from")
    prof = fit([a.vector() for a, _ in rows], [t for _, t in rows], base, tuple(free))
    prof.fitted = sorted({f"{record_strategy(r).label()}@{record_ranks(r)}"
                          for r in fastest(classic)})
    rate = measure_deflate(records)
    if rate:
        prof.values["deflate_bw"] = rate
        prof.fitted.append("deflate_bw: serial@1 netcdf4 vs netcdf4:deflate")
    return prof


# --- from TESSERA_STATS_FILE records (the user's own model) -----------------------

STATS_FREE = ("write_bw", "fs_bw", "req_s", "file_s")


def stats_rows(rec: dict) -> tuple | None:
    """(amounts, writer seconds) of one statistics record: the busiest writer
    wrote bytes/writers in requests/writers while all wrote `bytes`, and
    created and closed the file."""
    w = int(rec.get("writers") or 0)
    t = float((rec.get("writer_s") or {}).get("max", 0.0))
    b = float(rec.get("bytes") or 0)
    if w <= 0 or t <= 0 or b <= 0:
        return None
    req = float((rec.get("counters") or {}).get("TSR_WRITES", 0))
    a = Amounts().add("write_bw", b / w).add("fs_bw", b).add("req_s", req / w).add("file_s", 1)
    return a, t


def calibrate_from_stats(records: list, base: Profile, name: str = "stats") -> Profile:
    """The file-system parameters of `base` refitted to the writers' times of
    a model's own files (any model that sets TESSERA_STATS_FILE); the data
    movement parameters stay as `base` has them."""
    rows = [r for r in (stats_rows(x) for x in records) if r]
    if not rows:
        raise ValueError("no statistics record with writer time and bytes")
    prof = fit([a.vector() for a, _ in rows], [t for _, t in rows], base, STATS_FREE)
    prof.name = name
    prof.description = f"{base.name} with its file-system parameters measured by a model's own runs"
    prof.source = f"{base.source}; file system refitted to {len(rows)} TESSERA_STATS_FILE records"
    prof.fitted = sorted({f"{r.get('strategy')}:{r.get('writers')} writer"
                          f"{'' if r.get('writers') == 1 else 's'}" for r in records})
    return prof
