"""Advice from one statistics record: the patterns Darshan-based tools (Drishti,
DXT Explorer) flag, each with the Tessera hint to try (docs/statistics.md).

Every rule takes a record as written by tsr_close (docs/stats-format.md) and
returns None or an Advice. Thresholds are module constants so that the docs
and the tests name the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..strategies import reserves_servers, row

MIB = 1 << 20
#: Requests below this size are "small" (Darshan's buckets up to 100K_1M).
SMALL_REQUEST = MIB
SMALL_BUCKETS = ("TSR_SIZE_WRITE_0_100", "TSR_SIZE_WRITE_100_1K", "TSR_SIZE_WRITE_1K_10K",
                 "TSR_SIZE_WRITE_10K_100K", "TSR_SIZE_WRITE_100K_1M")
#: Share of requests that must be small / misaligned to flag the file.
SMALL_SHARE = 0.5
MISALIGNED_SHARE = 0.5
#: "One writer doing all the work" needs at least this many model ranks.
MANY_RANKS = 4
#: ... or when the busiest writer has this share of all writer time.
BUSIEST_SHARE = 0.8
#: Model blocked longer than the writers wrote: by this factor and this many seconds.
BLOCKED_FACTOR = 1.5
BLOCKED_MARGIN_S = 0.05
#: A writer pattern matters only when the writers spent at least this long.
MIN_SECONDS = 0.05
#: Alignment is advised only when the mean variable (per frame) is at least this
#: many times the alignment: starting every variable on a boundary pads each by
#: up to one alignment unit, so the file then grows by at most 1/ALIGN_VAR_FACTOR.
ALIGN_VAR_FACTOR = 8


@dataclass
class Advice:
    rule: str      # small-requests | misaligned | one-writer | blocked | not-taken
    message: str   # what was seen, with the figures
    hint: str      # what to try (a TESSERA_HINTS fragment or a strategy)

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "hint": self.hint}


def num(value, default=0):
    """A JSON number, or @p default for anything else (bool, None, strings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return value


def part(rec: dict, name: str, which: str = "max") -> float:
    v = rec.get(name)
    return float(num(v.get(which) if isinstance(v, dict) else v, 0))


def counters(rec: dict) -> dict:
    c = rec.get("counters")
    return c if isinstance(c, dict) else {}


def human(n: float) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if abs(n) < 1024 or unit == "T":
            return f"{n:.0f}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n /= 1024.0
    return f"{n:.1f}T"


def size_hint(n: int) -> str:
    """A size as a hint value: 1048576 -> 1m, 65536 -> 64k."""
    if n % MIB == 0:
        return f"{n // MIB}m"
    if n % 1024 == 0:
        return f"{n // 1024}k"
    return str(n)


def suggested_aggregators(ranks: int) -> int:
    """The aggregate strategy's default: a quarter of the ranks, at least 2."""
    return max(2, ranks // 4)


def small_requests(rec: dict) -> Advice | None:
    c = counters(rec)
    writes = int(num(c.get("TSR_WRITES")))
    writers = max(1, int(num(rec.get("writers"), 1)))
    if writes <= writers:  # one request per writer cannot be merged further
        return None
    small = sum(int(num(c.get(k))) for k in SMALL_BUCKETS)
    written = num(c.get("TSR_BYTES_WRITTEN"))
    mean = written / writes
    # Writers with less than 1 MiB each to write cannot do better.
    if small / writes <= SMALL_SHARE or mean >= SMALL_REQUEST or written / writers < SMALL_REQUEST:
        return None
    hint = small_requests_hint(rec, writers)
    if hint is None:
        return None
    return Advice("small-requests",
                  f"{small} of {writes} write requests are smaller than 1 MiB "
                  f"(mean {human(mean)}B)", hint)


def slab_for(var: float) -> int:
    """The smallest power-of-two MiB slab that holds a variable of @p var bytes,
    capped at 256 MiB: a slab larger than a variable merges nothing."""
    slab = MIB
    while slab < var and slab < 256 * MIB:
        slab *= 2
    return slab


def small_requests_hint(rec: dict, writers: int) -> str | None:
    """What can make the requests larger for this record's strategy, or None
    when nothing within Tessera can: a serial writer or a per-rank file writes
    each variable on its own, so requests of variables smaller than 1 MiB stay
    that small whatever the slab (docs/statistics.md)."""
    ranks = int(num(rec.get("model_ranks"), 1))
    var = variable_bytes(rec)
    return row(rec.get("strategy")).small_requests_hint(
        writers, bool(var and var < SMALL_REQUEST), suggested_aggregators(ranks),
        size_hint(slab_for(var)))


def variable_bytes(rec: dict) -> float:
    """Mean bytes of one variable in one frame (0 when the record cannot tell)."""
    variables = int(num(rec.get("variables"), 0))
    frames = max(1, int(num(rec.get("frames"), 1)))
    data = num(rec.get("bytes"), 0) or num(counters(rec).get("TSR_BYTES_WRITTEN"), 0)
    return data / (variables * frames) if variables > 0 else 0.0


def alignment_growth(rec: dict, align: int) -> tuple:
    """Predicted growth of the file if every variable (in every frame) started on
    an `align` boundary: (at most, about on average) bytes of padding."""
    pieces = int(num(rec.get("variables"), 0)) * max(1, int(num(rec.get("frames"), 1)))
    return pieces * (align - 1), pieces * align / 2


def misaligned(rec: dict) -> Advice | None:
    c = counters(rec)
    known = int(num(c.get("TSR_WRITES_WITH_OFFSET"), num(c.get("TSR_WRITES"))))
    bad = int(num(c.get("TSR_FILE_NOT_ALIGNED")))
    align = int(num(c.get("TSR_FILE_ALIGNMENT"), num(rec.get("stripe_size"), MIB))) or MIB
    written = num(c.get("TSR_BYTES_WRITTEN"))
    # A file smaller than one stripe cannot be aligned: say nothing.
    if known <= 0 or bad / known <= MISALIGNED_SHARE or written < align:
        return None
    # Variables small next to the alignment cannot start on boundaries without
    # padding the file out of proportion (202 WRF variables of 20 KiB aligned to
    # 1 MiB: a 4 MiB file towards 200 MiB). Advise only when the padding is small.
    var = variable_bytes(rec)
    if var < ALIGN_VAR_FACTOR * align:
        return None
    growth = ""
    hint = f"striping_unit={size_hint(align)} with writers that own whole stripes (strategy=aggregate)"
    if rec.get("backend") == "pnetcdf":
        # nc_var_align_size pads in front of variables: say by how much.
        most, mean = alignment_growth(rec, align)
        data = num(rec.get("bytes"), 0) or written
        growth = (f"; predicted file growth from padding: about {human(mean)}B, at most "
                  f"{human(most)}B (+{100 * most / data:.1f} % of {human(data)}B)")
        hint = (f"nc_var_align_size={size_hint(align)} (start variables on a stripe), "
                f"striping_unit={size_hint(align)}")
    return Advice("misaligned",
                  f"{bad} of {known} write requests do not start on a {human(align)}B boundary "
                  f"(variables {human(var)}B each){growth}",
                  hint)


def one_writer(rec: dict) -> Advice | None:
    ranks = int(num(rec.get("model_ranks"), 1))
    writers = int(num(rec.get("writers"), 0))
    if ranks < MANY_RANKS or rec.get("writers_on") == "io_servers" or rec.get("io_ranks"):
        return None
    cb = rec.get("mpiio_cb_nodes")
    if part(rec, "writer_s", "max") < MIN_SECONDS:  # too little writing to matter
        return None
    if writers == 1:
        return Advice("one-writer",
                      f"one writer does all the work for {ranks} model ranks",
                      f"strategy=aggregate:aggregators={suggested_aggregators(ranks)}")
    if row(rec.get("strategy")).all_ranks_collective and isinstance(cb, int) and cb == 1:
        return Advice("one-writer",
                      f"MPI-IO reports cb_nodes=1: one aggregator writes for {ranks} ranks",
                      f"cb_nodes={suggested_aggregators(ranks)}")
    wmax, wmean = part(rec, "writer_s", "max"), part(rec, "writer_s", "mean")
    if writers > 1 and wmax > 0.1 and wmax > BUSIEST_SHARE * wmean * writers:
        return Advice("one-writer",
                      f"the busiest of {writers} writers took {wmax:.3f} s of "
                      f"{wmean * writers:.3f} s writer time in all",
                      "stride=<ranks per node> or more aggregators, to spread the writers")
    return None


def blocked(rec: dict) -> Advice | None:
    bmax, wmax = part(rec, "blocked_s", "max"), part(rec, "writer_s", "max")
    if bmax <= wmax * BLOCKED_FACTOR or bmax - wmax <= BLOCKED_MARGIN_S:
        return None
    hint = "strategy=servers (with io_groups and io_tasks at tsr_init) or buffer_bytes=512m"
    if reserves_servers(rec.get("strategy")):
        hint = "more io_groups, or server_pick=idle, or buffer_bytes=512m"
    return Advice("blocked",
                  f"model ranks were blocked up to {bmax:.3f} s, writers wrote only {wmax:.3f} s",
                  hint)


def not_taken(rec: dict) -> Advice | None:
    """Hints the MPI-IO layer holds with another value or not at all
    (mpiio_hints_not_taken): the run did not get what it asked for."""
    dropped = rec.get("mpiio_hints_not_taken")
    if not isinstance(dropped, str) or not dropped:
        return None
    keys = {kv.split("=", 1)[0] for kv in dropped.split(", ")}
    why = ["TESSERA_HINTS_DISPLAY=1 shows what the layer holds instead"]
    if keys & {"striping_factor", "striping_unit"}:
        why.append("striping needs a file system that stripes (Lustre, GPFS)")
    if any(k.startswith("romio_") for k in keys):
        why.append("romio_* keys need ROMIO (Open MPI: OMPI_MCA_io=romio321)")
    return Advice("not-taken", f"the MPI-IO layer did not take the hints {dropped}",
                  "; ".join(why))


RULES = (small_requests, misaligned, one_writer, blocked, not_taken)


def advise(rec: dict) -> list:
    """Every rule that fires on @p rec, in a fixed order."""
    out = []
    for rule in RULES:
        a = rule(rec)
        if a is not None:
            out.append(a)
    return out
