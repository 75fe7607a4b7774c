"""A strategy and its knobs, and the model's questions to its row: one
frame's amounts, who is busy, a file's create and close.

The knobs are what the hints name (docs/hints.md); everything that differs
from strategy to strategy, each strategy's own formula among it, is its
row's (tessera/strategy/<name>.py, listed in tessera/strategies.py), built
of the pieces of moves.py. A profile prices the amounts (profile.PARAMS);
the equations are in docs/model.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..strategies import row
from .amounts import Amounts
from .case import Case, process_grid
from .moves import cb_nodes, file_amounts, file_pieces, write_groups
from .profile import Profile

#: What tests and other modules import from here besides the knobs.
__all__ = ["Strategy", "grid", "sync_frame", "busy_ranks", "file_cost", "cb_nodes",
           "file_pieces", "write_groups"]


@dataclass(frozen=True)
class Strategy:
    """A strategy and its knobs, as the hints name them (docs/hints.md)."""
    name: str
    aggregators: int = 0        # aggregate: 0 = ranks/4 (the library's default)
    io_groups: int = 1
    io_tasks: int = 1
    backend: str = ""           # servers: netcdf (group root writes) or pnetcdf
    slab_bytes: int = 64 << 20
    buffer_bytes: int = 128 << 20
    cb_nodes: int = -1          # -1: the profile's
    blocking: bool = False      # servers: WRF quilting's blocking hand-off (not a Tessera hint)
    gatherv: bool = False       # serial: WRF's MPI_Gatherv per field (not a Tessera hint)

    @staticmethod
    def parse(hints: str) -> "Strategy":
        kv = {}
        for tok in hints.split(":"):
            if "=" in tok:
                k, v = tok.split("=", 1)
                kv[k.strip()] = v.strip()
        size = lambda s: int(float(s[:-1]) * {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[s[-1].lower()]) \
            if s and s[-1].lower() in "kmg" else int(s)
        return Strategy(name=kv.get("strategy", "direct"),
                        aggregators=int(kv.get("aggregators", 0)),
                        io_groups=int(kv.get("io_groups", 1)),
                        io_tasks=int(kv.get("io_tasks", 1)),
                        backend=kv.get("backend", ""),
                        slab_bytes=size(kv.get("slab_bytes", "64m")),
                        buffer_bytes=size(kv.get("buffer_bytes", "128m")),
                        cb_nodes=int(kv.get("cb_nodes", -1)))

    def row(self):
        """This strategy's row (strategies.UNKNOWN for a name no row has)."""
        return row(self.name)

    def server_ranks(self) -> int:
        return self.io_groups * self.io_tasks if self.row().server_ranks else 0

    def server_backend(self) -> str:
        return self.backend or ("pnetcdf" if self.io_tasks > 1 else "netcdf")

    def label(self) -> str:
        return self.row().label(self)

    def hints(self) -> str:
        return self.row().hints(self)


def grid(case: Case, strat: Strategy, ranks: int) -> tuple:
    """(model ranks, px, py) for `ranks` processes in all (servers included)."""
    model = ranks - strat.server_ranks()
    if model < max(1, strat.io_tasks if strat.row().server_ranks else 1):
        raise ValueError(f"{strat.label()} needs more than {ranks} processes")
    px, py = process_grid(case, model)
    return model, px, py


def sync_frame(case: Case, strat: Strategy, profile: Profile, ranks: int) -> Amounts:
    """Amounts of one frame for the synchronous strategies (the model waits)."""
    model, px, py = grid(case, strat, ranks)
    return strat.row().frame(case, strat, profile, model, px, py)


def busy_ranks(strat: Strategy, ranks: int, case: Case | None = None,
               profile: Profile | None = None) -> int:
    """Processes with work while a synchronous strategy's output runs (the
    others wait for them)."""
    return strat.row().busy(strat, ranks, case, profile)


def file_cost(case: Case, strat: Strategy, ranks: int) -> Amounts:
    """Per file: the agreements of create, enddef and close, the create and
    close themselves; a shared file is opened by every writer process,
    `split` creates one file per rank at once."""
    r = strat.row()
    return file_amounts(case, ranks, r.opens(strat, ranks), r.shared_writers(strat, ranks) or 1)
