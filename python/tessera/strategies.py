"""The output strategies, described once for the Python tools: the cost
model, advise, tune, demo, formats and the statistics' rules read these rows
instead of comparing strategy names, so a property (who writes, into how
kind of backend, which WRF setting) is stated in one place.

The C side has the same facts in src/strategy/strategy_registry.c
(`needs_server_ranks`, `needs_parallel_backend` of `tsr__strategy_ops`, docs/architecture.md "Extension points"); the rows
follow it, in the order the documentation's table gives them. What stays
per strategy by name is each strategy's own equations (model/strategy.py
and model/counts.py dispatch on the name to the function of that strategy).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Strategy:
    """One strategy as the tools see it."""
    name: str                   # strategy= in the hints
    server_ranks: bool          # takes io_groups x io_tasks ranks of its own (needs_server_ranks)
    parallel: bool              # all writers share one file through PnetCDF (needs_parallel_backend)
    whole_chunks: bool          # its writers hold whole chunks, so it can write Zarr (docs/zarr.md)
    wrf_io_form: int            # the WRF io_form it stands for (advise; servers: the group
                                # root's, 11 when the whole group writes)
    demo_hints: str             # the hints `tessera demo` runs it with (equal total ranks)


STRATEGIES = {s.name: s for s in (
    Strategy("serial", server_ranks=False, parallel=False, whole_chunks=True, wrf_io_form=2,
             demo_hints="strategy=serial"),
    Strategy("direct", server_ranks=False, parallel=True, whole_chunks=False, wrf_io_form=11,
             demo_hints="strategy=direct"),
    # Two aggregators on the demo's 4 ranks: the box exchange has work to do.
    Strategy("aggregate", server_ranks=False, parallel=True, whole_chunks=True, wrf_io_form=12,
             demo_hints="strategy=aggregate:aggregators=2"),
    Strategy("split", server_ranks=False, parallel=False, whole_chunks=False, wrf_io_form=102,
             demo_hints="strategy=split"),
    # Servers take one of the demo's ranks, so every strategy runs on as many.
    Strategy("servers", server_ranks=True, parallel=False, whole_chunks=True, wrf_io_form=2,
             demo_hints="strategy=servers:io_groups=1:io_tasks=1"),
)}

#: Every strategy's name, in the documentation's order.
NAMES = tuple(STRATEGIES)


def reserves_servers(name: str) -> bool:
    """True for a strategy that takes ranks of its own; False for the others
    and for a name no row has (as a comparison with the name was)."""
    row = STRATEGIES.get(name)
    return bool(row and row.server_ranks)


def with_property(prop: str) -> tuple:
    """The names of the strategies whose row has `prop` true, in order."""
    return tuple(n for n, s in STRATEGIES.items() if getattr(s, prop))
