"""The registry of the output strategies for the Python tools: one row per
strategy, listed here once, as src/strategy/strategy_registry.c lists the
C side's. A row (tessera/strategy/<name>.py, a subclass of strategy/row.Row)
holds what the tools know of its strategy: the facts the C registry states
too (`needs_server_ranks`, `needs_parallel_backend` of `tsr__strategy_ops`),
its cost formula, its tuning knobs, its advice texts and its statistics
rules. The model, advise, tune, the statistics' rules and the demo ask a
row for these; no other module compares a strategy's name
(tests/python/test_strategy_names.py checks it). Adding a strategy is its
file, its import here and its entry in ROWS
(tests/python/test_strategy_row_added.py does it on a copy of the package).
"""
from __future__ import annotations

from .strategy.aggregate import Aggregate
from .strategy.direct import Direct
from .strategy.row import Row
from .strategy.serial import Serial
from .strategy.servers import Servers
from .strategy.split import Split

#: The rows, in the order the documentation's table gives them.
ROWS = (Serial(), Direct(), Aggregate(), Split(), Servers())

STRATEGIES = {r.name: r for r in ROWS}

#: Every strategy's name, in the documentation's order.
NAMES = tuple(STRATEGIES)

#: What a name no row has gets: no server ranks, no parallel backend, no
#: knobs, no equations (asking it is as a comparison with the name was).
UNKNOWN = Row()


def row(name) -> Row:
    """The row of strategy `name`, or UNKNOWN (for anything a record may
    hold there: None, a number, a name no row has)."""
    return STRATEGIES.get(name, UNKNOWN) if isinstance(name, str) else UNKNOWN


def reserves_servers(name: str) -> bool:
    """True for a strategy that takes ranks of its own; False for the others
    and for a name no row has."""
    return row(name).server_ranks


def with_property(prop: str) -> tuple:
    """The names of the strategies whose row has `prop` true, in order."""
    return tuple(r.name for r in ROWS if getattr(r, prop))


def in_order(key: str) -> tuple:
    """The rows sorted by their `key` (tune_order, advise_order)."""
    return tuple(sorted(ROWS, key=lambda r: getattr(r, key)))
