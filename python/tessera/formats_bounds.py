"""What the issue's compression targets need, from one `tessera formats` run.

A back-of-envelope model with one assumption, that compression is CPU work
that splits evenly over the ranks that compress (a core each). Let U_s and
U_a be serial's and aggregate's blocked time uncompressed, C = serial
compressed - U_s (what one writer spends compressing every output), W
aggregate's writers. With perfectly parallel compression aggregate
compressed = U_a + C/W, so:

- aggregate compressed <= 2 x uncompressed  <=>  C/W <= U_a  <=>  W >= C/U_a;
- serial / aggregate compressed >= W  <=>  U_s + C >= W U_a + C  <=>
  U_s >= W U_a: C cancels, so more writers never reach it; gathering to one
  rank must cost W times aggregate's own rearrangement;
- the measured parallel efficiency of compression is C / (W (A_c - U_a))
  (1 = perfectly parallel; A_c is aggregate compressed);
- servers: a group of T tasks compresses one output in c = C / (frames T);
  the last output's compression is always paid at finalize, so servers
  compressed >= V_u + c (V_u: servers uncompressed), and the target
  (<= 1.2 V_u) needs c <= 0.2 V_u; the server keeps up with the model only
  when c fits in the model's compute between two outputs.

Everything here is arithmetic on medians (no I/O), so that tests can check
it with exact numbers and `tessera formats` prints it from the same run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: The issue's targets: aggregate compressed / uncompressed, servers the same.
AGGREGATE_TARGET = 2.0
SERVERS_TARGET = 1.2
#: Above this parallel efficiency the shortfall from W is aggregate's base
#: cost U_a, not compression (a judgement, printed with the figure).
EFFICIENT = 0.8
#: Above this the figure is no efficiency but noise: medians of different
#: repeats, or an aggregate base that is cheaper when compressed.
NOISY = 1.1


@dataclass(frozen=True)
class Medians:
    """Median blocked seconds of one run's pairs (None where every repeat failed)."""
    serial_u: float | None
    serial_c: float | None
    aggregate_u: float | None
    aggregate_c: float | None
    servers_u: float | None
    servers_c: float | None
    writers: int            # aggregate's writers (aggregators=)
    io_tasks: int           # the server group's tasks (io_tasks=)
    frames: int             # history outputs per run
    interval_s: float | None  # model compute between two outputs (servers' run)


@dataclass(frozen=True)
class Bounds:
    """The model's figures; None where an input is missing."""
    c: float | None                 # C: one writer's compression, all outputs
    writers_needed: float | None    # C / U_a
    serial_base: float | None       # U_s
    aggregate_base_w: float | None  # W x U_a
    efficiency: float | None        # C / (W (A_c - U_a))
    per_output_task: float | None   # C / (frames T)
    servers_slack: float | None     # (1.2 - 1) x V_u
    tasks_for_target: float | None  # C / (frames x slack)
    tasks_to_keep_up: float | None  # C / (frames x interval)


def _have(*xs) -> bool:
    return all(x is not None for x in xs)


def _div(a, b):
    return a / b if _have(a, b) and b > 0 else None


def bounds(m: Medians) -> Bounds:
    c = m.serial_c - m.serial_u if _have(m.serial_c, m.serial_u) else None
    spent = m.aggregate_c - m.aggregate_u if _have(m.aggregate_c, m.aggregate_u) else None
    per_output = _div(c, m.frames * m.io_tasks)
    slack = (SERVERS_TARGET - 1) * m.servers_u if m.servers_u is not None else None
    return Bounds(
        c=c,
        writers_needed=_div(c, m.aggregate_u),
        serial_base=m.serial_u,
        aggregate_base_w=m.writers * m.aggregate_u if m.aggregate_u is not None else None,
        efficiency=_div(c, m.writers * spent) if spent is not None else None,
        per_output_task=per_output,
        servers_slack=slack,
        tasks_for_target=_div(c, m.frames * slack) if slack is not None else None,
        tasks_to_keep_up=_div(c, m.frames * m.interval_s) if m.interval_s is not None else None)


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f} s"


def _need(x: float) -> int:
    """Smallest whole count >= x (at least 1)."""
    return max(1, math.ceil(x - 1e-12))


def rows(m: Medians) -> list:
    """(target, what it needs, this run's figures, verdict) rows."""
    b = bounds(m)
    w, t = m.writers, m.io_tasks
    out = []
    if b.c is None:
        return [("compression cost C", "serial deflate=1 - uncompressed", "-",
                 "unknown: a serial run failed")]
    if b.c <= 0:
        return [("compression cost C", "serial deflate=1 - uncompressed", _s(b.c),
                 "not measurable in this run (noise larger than compression)")]
    out.append(("compression cost C", "serial deflate=1 - uncompressed",
                f"{b.c:.3f} s ({b.c / m.frames:.3f} s per output)", "one writer, every output"))
    if b.writers_needed is not None:
        need = _need(b.writers_needed)
        ok = w >= b.writers_needed
        out.append((f"aggregate deflate <= {AGGREGATE_TARGET:g} x uncompressed", "W >= C / U_a",
                    f"C / U_a = {b.writers_needed:.2f}, W = {w}",
                    f"reachable at W = {w}" if ok else
                    f"not at W = {w}: needs W >= {need} (at this U_a)"))
    if _have(b.serial_base, b.aggregate_base_w):
        ok = b.serial_base >= b.aggregate_base_w
        out.append(("serial deflate / aggregate deflate >= W", "U_s >= W x U_a (C cancels)",
                    f"U_s = {b.serial_base:.3f} s, {w} x U_a = {b.aggregate_base_w:.3f} s",
                    "holds" if ok else
                    "not by more writers: gathering to one rank costs less than W x "
                    "aggregate's rearrangement"))
    if b.efficiency is not None:
        out.append(("parallel compression efficiency", "C / (W x (A_c - U_a))",
                    f"{b.efficiency:.2f}",
                    "above 1: noise in the medians (of different repeats) exceeds what "
                    "compression adds to aggregate" if b.efficiency > NOISY else
                    "aggregate's shortfall from W is its base U_a, not compression"
                    if b.efficiency >= EFFICIENT else
                    f"compression runs less than {EFFICIENT:.0%} parallel on {w} writers"))
    if _have(b.per_output_task, b.servers_slack):
        ok = b.per_output_task <= b.servers_slack
        out.append((f"servers deflate <= {SERVERS_TARGET:g} x uncompressed",
                    f"C / (frames x T) <= {SERVERS_TARGET - 1:.1f} x V_u (last output at finalize)",
                    f"{b.per_output_task:.3f} s vs {b.servers_slack:.3f} s",
                    f"reachable at T = {t}" if ok else
                    f"not at T = {t}: needs T >= {_need(b.tasks_for_target)}"))
    if _have(b.per_output_task, m.interval_s):
        ok = b.per_output_task <= m.interval_s
        out.append(("servers keep up with the model", "C / (frames x T) <= compute per output",
                    f"{b.per_output_task:.3f} s vs {m.interval_s:.3f} s",
                    f"yes at T = {t}" if ok else
                    f"no at T = {t}: needs T >= {_need(b.tasks_to_keep_up)}"))
    return out


def as_dict(m: Medians) -> dict:
    """The inputs and figures, for results.json."""
    return {"medians": m.__dict__, "bounds": bounds(m).__dict__}
