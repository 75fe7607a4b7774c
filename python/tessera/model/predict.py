"""A whole run: the per-frame amounts of strategy, priced by a profile,
put on the run's time line. Synchronous strategies block the model for every
frame; servers hide their writes behind compute as long as the ring buffer
and the groups taking frames in turn keep up, and the model waits for the
last frames at tsr_finalize (the drain). docs/model.md has the equations.
"""
from __future__ import annotations

from dataclasses import dataclass

from .case import Case, tile_bytes_max
from .deflate import require
from .profile import Profile
from .amounts import Amounts
from .moves import WRITE_KEYS, exposed_share
from .strategy import Strategy, busy_ranks, file_cost, grid, sync_frame


@dataclass
class Prediction:
    strategy: str
    ranks: int               # processes in all (servers included)
    model_ranks: int
    blocked_s: float         # model ranks inside Tessera calls, whole run (bench output_blocked_s)
    per_output_s: float      # blocked_s / outputs
    write_s: float           # writer (or server) time on the file system, whole run
    hidden_s: float          # server write time the model did not wait for
    drain_s: float           # end of the last step to all output written
    compute_s: float         # model compute, whole run
    wall_s: float
    mem_writer: int          # bytes Tessera holds on the busiest writer or server
    mem_rank: int            # bytes Tessera holds on another model rank

    @property
    def io_fraction(self) -> float:
        return self.blocked_s / self.wall_s if self.wall_s > 0 else 0.0


def run_amounts(case: Case, strat: Strategy, profile: Profile, ranks: int) -> Amounts:
    """Amounts of a synchronous run: every frame and every file's metadata."""
    model, _, _ = grid(case, strat, ranks)
    a = Amounts().plus(sync_frame(case, strat, profile, ranks), case.outputs)
    return a.plus(file_cost(case, strat, model), case.files)


def memory(case: Case, strat: Strategy, profile: Profile, ranks: int) -> tuple:
    """(busiest writer or server, other model rank) bytes Tessera holds."""
    model, px, py = grid(case, strat, ranks)
    return strat.row().memory(case, strat, profile, model, px, py)


def _timeline(frames: int, fpf: int, groups: int, interval: float, handoff: float,
              write: float, open_close: float, cap: int) -> tuple:
    """Servers on the run's time line. Frame k is handed off after k compute
    intervals (plus the model's own waits); group (k // fpf) % groups writes
    it once that group is free; at most `cap` frames may be in flight (the
    ring buffer), else the model waits for the oldest. Returns (blocked time,
    drain, hidden write time)."""
    free = [0.0] * groups
    ends: list = []
    t = blocked = 0.0
    last_hand = 0.0
    busy = 0.0
    for k in range(frames):
        if k:
            t += interval
        pending = sorted(e for e in ends if e > t)
        if len(pending) >= cap:
            wait = pending[len(pending) - cap] - t
            blocked += wait
            t += wait
        t += handoff
        blocked += handoff
        g = (k // fpf) % groups
        cost = write + (open_close if k % fpf == 0 else 0.0)
        start = max(t, free[g])
        free[g] = start + cost
        ends.append(free[g])
        busy += cost
        last_hand = t
    drain = max(0.0, max(ends) - last_hand) if ends else 0.0
    waited = blocked - handoff * frames + drain
    return blocked + drain, drain, max(0.0, busy - waited)


def imbalance_s(case: Case, profile: Profile, model: int, background: float = 0.0) -> float:
    """Time the model ranks wait at an output for the slowest of them to
    finish computing, whole run. When the computing processes (the model
    ranks and other jobs; idle servers sleep) outnumber the cores unevenly,
    the kernel leaves ceil(n/C) of them on some core and floor(n/C) on
    another: a rank sharing its core with fewer finishes its steps early and
    waits in the output's first collective (tsr_create's agreement) for the
    slowest, whose compute time the case gives. Every output but the first
    follows compute."""
    n = model + round(background)
    if profile.cores <= 0 or n <= profile.cores or n % profile.cores == 0:
        return 0.0
    lo, hi = n // profile.cores, -(-n // profile.cores)
    return case.step_time(model) * case.steps * (1.0 - lo / hi)


def predict(case: Case, strat: Strategy, profile: Profile, ranks: int,
            background: float = 0.0) -> Prediction:
    """`background`: other busy processes sharing the profile's cores (0 on a
    machine of one's own; runs.background measures it)."""
    require(case, profile)
    model, px, py = grid(case, strat, ranks)
    row = strat.row()
    # Servers: the model ranks compute (or hand off) while the servers write.
    busy = busy_ranks(strat, model, case, profile) if not row.server_ranks else ranks
    everyone = row.everyone

    def secs(a: Amounts) -> float:
        return a.loaded(profile, ranks, busy, background, everyone).seconds(profile)

    compute = case.step_time(model) * case.steps
    wait = imbalance_s(case, profile, model, background)
    mem_w, mem_r = memory(case, strat, profile, ranks)
    if not row.server_ranks:
        a = run_amounts(case, strat, profile, ranks)
        blocked = secs(a) + wait
        write = secs(Amounts({k: a[k] for k in WRITE_KEYS if k in a}))
        return Prediction(strat.label(), ranks, model, blocked, blocked / case.outputs, write,
                          0.0, 0.0, compute, case.other_s + compute + blocked, mem_w, mem_r)
    handoff = secs(row.handoff_frame(case, strat, model, px, py))
    handoff += secs(row.model_file_cost(case, strat, model)) \
        * case.files / case.outputs                  # define calls on the model side
    # The servers' own work: only the server processes are busy with it (a
    # server's receives and writes are not stretched by model ranks that
    # wait in MPI), but the share of it that finds no free core is taken
    # from the model ranks, which wait for it inside their hand-offs.
    swork = lambda a: a.loaded(profile, ranks, strat.server_ranks(), background).seconds(
        profile)
    write = swork(row.server_frame(case, strat, profile, model, px, py))
    exposed = exposed_share(profile, model, strat.server_ranks(), background)
    handoff += exposed * write
    oc = row.server_file_cost(case, strat)
    oc = swork(Amounts({k: v for k, v in oc.items() if k != "coll_s"}))
    tile = max(1, tile_bytes_max(case, px, py))
    cap = strat.buffer_bytes / tile
    if cap < 1:          # a frame larger than the ring: the rest waits for the servers
        handoff += (1.0 - cap) * write
    blocked, drain, hidden = _timeline(case.outputs, case.frames_per_file, strat.io_groups,
                                       case.interval_s(model), handoff,
                                       (1.0 - exposed) * write, oc, max(1, int(cap)))
    blocked += wait
    return Prediction(strat.label(), ranks, model, blocked, blocked / case.outputs,
                      (write * case.outputs + oc * case.files), hidden, drain, compute,
                      case.other_s + compute + blocked, mem_w, mem_r)

