"""What a strategy's row holds for the Python tools, and what a row that
says nothing gets: the facts the tools ask (who writes, into which kind of
backend, which WRF setting), its cost formula for the model, its tuning
knobs, its advice texts and its statistics rules.

A strategy is one file in this folder with a subclass of `Row`, listed
once in tessera/strategies.py, as src/strategy/ and strategy_registry.c
are on the C side. Its methods take the knobs (model/strategy.py's
`Strategy`, here `s`) and plain numbers, so a row imports only the model's
pieces below it (model/moves.py, model/case.py) and nothing that asks the
registry. The base class's answers are those of a strategy with no knobs,
no server ranks and no equations of its own; a name no row has gets them
too (strategies.row), so asking a property of an unknown name answers as
a comparison with the name did.

A row with `server_ranks` writes behind the model's back and gives, besides
the methods here, `handoff_frame`, `server_frame`, `model_file_cost` and
`server_file_cost` (strategy/servers.py), which the model's time line
(model/predict.py) and calibration ask instead of `frame`.
"""
from __future__ import annotations

from ..model.amounts import Amounts


def powers(limit: int) -> list:
    """1, 2, 4, ... up to limit: the knob values worth predicting."""
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def span(values: list, tried: list, show=str) -> str:
    """`4-16` when values are a run of consecutive tried values, else a list."""
    values, tried = sorted(set(values)), sorted(set(tried))
    if len(values) == 1:
        return show(values[0])
    i = tried.index(values[0])
    if tried[i:i + len(values)] == values:
        return f"{show(values[0])}-{show(values[-1])}"
    return ", ".join(show(v) for v in values)


def writer_run(frame: Amounts, case, run: Amounts) -> Amounts:
    """A writer's own work over a run: its frame at every output, and the
    run's creates and opens (writer_amounts of a strategy whose writer's
    backend calls are not the whole run's writes)."""
    w = Amounts().plus(frame, case.outputs)
    return w.plus(Amounts({k: v for k, v in run.items() if k in ("file_s", "open_s")}))


class Row:
    """One strategy as the tools see it; a subclass per strategy."""
    name = ""                   # strategy= in the hints
    server_ranks = False        # takes io_groups x io_tasks ranks of its own
                                # (needs_server_ranks)
    parallel = False            # all writers share one file through PnetCDF
                                # (needs_parallel_backend)
    whole_chunks = False        # its writers hold whole chunks, so it can write Zarr (docs/zarr.md)
    file_per_rank = False       # every rank writes a file of its own (so no reduce=,
                                # docs/reductions.md)
    all_ranks_collective = False  # every model rank takes part in MPI-IO's collective write
    wrf_io_form = 0             # the WRF io_form it stands for (advise; servers: the group
                                # root's, 11 when the whole group writes)
    demo_hints = ""             # the hints `tessera demo` runs it with (equal total ranks)
    short_syntax = ""           # how `tessera model --strategies` spells it (default: name)
    tune_knobs = ()             # the knobs `tessera tune` searches for it (docs/tuning.md)
    tune_order = 0              # the strategy pass tries lower first (cheapest to set up)
    advise_order = 0            # `tessera advise` lists its candidates lower first (ties
                                # in the ranking keep this order)

    # --- the knobs ---------------------------------------------------------------

    def label(self, s) -> str:
        """The strategy and its knobs in a few characters (tables, charts)."""
        return s.name

    def hints(self, s) -> str:
        """The hint string that sets these knobs."""
        return f"strategy={s.name}"

    def short_knobs(self, arg: str | None, text: str) -> dict | None:
        """The knobs of the short form `name:arg` (arg None: no colon), or
        None when the form takes no argument; ValueError naming `text`."""
        return {} if arg is None else None

    def runs_at(self, s, n: int) -> bool:
        """Whether the knobs s can run on n processes."""
        return True

    # --- the cost model (model/, docs/model.md) ---------------------------------

    def frame(self, case, s, profile, model: int, px: int, py: int):
        """Amounts of one frame on the busiest model rank (a synchronous
        strategy: the model waits)."""
        raise ValueError(f"unknown strategy {s.name}")

    def busy(self, s, ranks: int, case=None, profile=None) -> int:
        """Processes with work while the output runs (the others wait)."""
        return ranks

    #: Amounts every rank works on at the same time, whoever else is busy.
    everyone = ()

    def opens(self, s, ranks: int) -> int:
        """Processes that open each file (0: only the one writer)."""
        return 0

    def shared_writers(self, s, ranks: int) -> int:
        """Ranks writing one shared file at once (0: one writer per file)."""
        return 0

    def memory(self, case, s, profile, model: int, px: int, py: int) -> tuple:
        """(busiest writer or server, other model rank) bytes Tessera holds."""
        raise ValueError(f"unknown strategy {s.name}")

    def counts(self, case, s, ranks: int, px: int, py: int) -> dict:
        """{'writers', 'writes', 'rearranged_bytes'} of one frame, as the
        statistics record reports them (model/counts.py)."""
        raise ValueError(f"no library counts for {s.name}")

    def writer_amounts(self, case, s, profile, model: int, px: int, py: int, run):
        """Amounts of the writer's own time in its backend calls (writer_s)
        over a run whose amounts are `run`, or None when the record's
        writer_s is nothing to fit for this strategy (calibration)."""
        return None

    # --- advise -------------------------------------------------------------------

    def candidates(self, procs: int, buffers: tuple) -> list:
        """The knob settings worth predicting at procs processes."""
        return [{}]

    def wrf_short(self, s, case) -> str:
        """The WRF setting in a few words (advise's table)."""
        return f"io_form {self.wrf_io_form}"

    def wrf_setting(self, s, case, procs: int, model: int, px: int, py: int) -> str:
        """What a WRF user sets for the same data movement (apps/bench/namelist.c
        the other way round)."""
        raise ValueError(f"no WRF setting for {s.name}")

    def flat_text(self, same: list, near: list, pct: float) -> str:
        """The knob values of `near` (its candidates within pct % of its best
        of `same`, (knobs, prediction) pairs), or "" when it has no knob."""
        return ""

    def memory_text(self, s, writer: str, rank: str, model: int) -> str:
        """Whose memory the prediction's two figures are."""
        raise ValueError(f"unknown strategy {s.name}")

    # --- the statistics' rules (stats/rules.py) -------------------------------------

    def small_requests_hint(self, writers: int, small_variables: bool, aggregators: int,
                            slab: str) -> str | None:
        """What makes its write requests larger, or None when nothing within
        Tessera can: variables smaller than a small request stay that small
        when each is written on its own."""
        return None if small_variables else "strategy=aggregate (fewer, larger requests)"
