"""strategy=aggregate: a box exchange onto N aggregators, each writing one
slab of a shared file through PnetCDF (src/strategy/aggregate.c; PIO's box
rearranger, WRF's io_form 12)."""
from __future__ import annotations

from ..model.amounts import Amounts
from ..model.case import boxes, overlap, slab_fanins
from ..model.deflate import whole_levels
from ..model.moves import agreements, cb_nodes, fan_in, replicated_write, two_phase
from ..cli_args import whole
from .row import Row, powers, span, writer_run


def aggregator_count(s, ranks: int) -> int:
    """The aggregators hint, else the library's default of a quarter of the ranks."""
    n = s.aggregators if s.aggregators > 0 else max(1, ranks // 4)
    return min(n, ranks)


class Aggregate(Row):
    name = "aggregate"
    parallel = True
    whole_chunks = True
    wrf_io_form = 12
    # Two aggregators on the demo's 4 ranks: the box exchange has work to do.
    demo_hints = "strategy=aggregate:aggregators=2"
    short_syntax = "aggregate:N"
    tune_knobs = ("aggregators", "stride", "exchange", "cb_nodes", "cb_buffer_size",
                  "striping_unit", "alignment", "buffer_bytes")
    tune_order = 1
    advise_order = 3

    def label(self, s):
        return f"aggregate:{s.aggregators}" if s.aggregators else "aggregate"

    def hints(self, s):
        return f"strategy=aggregate:aggregators={s.aggregators}" if s.aggregators \
            else "strategy=aggregate"

    def short_knobs(self, arg, text):
        return {"aggregators": whole(arg, f"aggregators in '{text}'") if arg else 0}

    def runs_at(self, s, n):
        return s.aggregators <= n            # it needs its aggregators

    def frame(self, case, s, profile, model, px, py):
        """aggregate.c: per variable one box exchange onto N aggregators, each
        owning one balanced slab (tsr__layout_slabs); the busiest aggregator's
        fan-in sets the pace. The slabs go into the writers' PnetCDF buffer and are
        written collectively among the N writers."""
        n = aggregator_count(s, model)
        a = agreements(case, model)
        for v in case.decomposed():
            worst = max(slab_fanins(v, n, px, py), key=lambda mb: (mb[0] ** 2, mb[1]))
            a.plus(fan_in(worst[0], worst[1], 1.0 / model if n < model else 1.0))
        return a.plus(self.write(case, s, profile, model, px, py))

    def write(self, case, s, profile, model, px, py):
        """What the busiest aggregator's backend does per frame (its writer_s):
        copy its slab into PnetCDF's buffer, write it collectively among the
        N writers."""
        n = aggregator_count(s, model)
        a = Amounts()
        for v in case.decomposed():
            worst = max(slab_fanins(v, n, px, py), key=lambda mb: (mb[0] ** 2, mb[1]))
            a.add("copy_bw", worst[1])                   # into the backend buffer
        a.plus(two_phase(case, n, px, py, cb_nodes(s, profile, n), profile.cb_buffer_bytes,
                         contiguous=True))
        # NetCDF-4 with deflate: the writers compress the chunks (levels) of
        # their own slabs collectively; a 2-D field is one chunk, one writer's.
        return a.plus(replicated_write(case, 1, n)).plus(whole_levels(case, n))

    def busy(self, s, ranks, case=None, profile=None):
        return aggregator_count(s, ranks)

    def opens(self, s, ranks):
        return aggregator_count(s, ranks)

    def shared_writers(self, s, ranks):
        return aggregator_count(s, ranks)

    def memory(self, case, s, profile, model, px, py):
        n = aggregator_count(s, model)
        largest = max(v.bytes for v in case.decomposed() or case.vars)
        slab = largest / n
        pending = min(s.buffer_bytes, case.frame_bytes() / n)
        return int(2 * slab + pending), int(largest / model)

    def counts(self, case, s, ranks, px, py):
        n = aggregator_count(s, ranks)
        writers = [i * ranks // n for i in range(n)]
        writes, moved = len(case.replicated()), 0
        for v in case.decomposed():
            writes += boxes(v, n)
            kept = sum(overlap(v, n, p, writers[p], px, py) for p in range(n))
            moved += v.bytes - kept * v.esize
        return {"writers": n, "writes": writes, "rearranged_bytes": moved}

    def writer_amounts(self, case, s, profile, model, px, py, run):
        return writer_run(self.write(case, s, profile, model, px, py), case, run)

    def candidates(self, procs, buffers):
        return [{"aggregators": n} for n in powers(procs) if n < procs or n == 1]

    def wrf_setting(self, s, case, procs, model, px, py):
        n = aggregator_count(s, model)
        stride = max(1, model // n)
        where = "on every rank" if stride == 1 else f"one every {stride} ranks"
        return (f"io_form_history = 12 (PIO) with {n} I/O task{'s' if n > 1 else ''}, {where} "
                f"(the Irma study's &pio_control: pioprocs = {n}, piostride = {stride})")

    def flat_text(self, same, near, pct):
        if len({s.aggregators for s in near}) == 1:
            return f"no other aggregator count within {pct:g} %"
        counts = span([s.aggregators for s in near], [s.aggregators for s, _ in same])
        return f"aggregators {counts} within {pct:g} %"

    def memory_text(self, s, writer, rank, model):
        n = aggregator_count(s, model)
        return f"{writer} on each of the {n} aggregators (the writers), {rank} on each other rank"

    def small_requests_hint(self, writers, small_variables, aggregators, slab):
        more = " (more data per drain)"
        return f"buffer_bytes=512m{more}, or fewer aggregators" if writers > 1 \
            else f"buffer_bytes=512m{more}"
