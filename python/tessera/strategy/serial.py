"""strategy=serial: one writer (rank 0) gathers slab by slab and writes
serial NetCDF (src/strategy/serial.c; WRF's io_form 2)."""
from __future__ import annotations

from ..model.amounts import Amounts
from ..model.case import boxes, overlap, slab_count, slab_fanins, tile_bytes_max
from ..model.deflate import whole_levels
from ..model.moves import WRITE_KEYS, agreements, fan_in, gatherv_in, replicated_write, \
    stream_write
from .row import Row


def slab_held(case, s) -> float:
    """The largest slab a one-writer strategy holds (its slab_bytes cut)."""
    return max(v.bytes / slab_count(v.shape, max(1, s.slab_bytes // v.esize))
               for v in case.decomposed() or case.vars)


class Serial(Row):
    name = "serial"
    whole_chunks = True
    wrf_io_form = 2
    demo_hints = "strategy=serial"
    tune_knobs = ("slab_bytes", "buffer_bytes")
    tune_order = 2
    advise_order = 0

    def frame(self, case, s, profile, model, px, py):
        """serial.c: per variable, tsr__layout_chunks cuts slabs of <= slab_bytes;
        phase by phase every tile in the slab is sent to the writer, which unpacks
        it and writes the slab before the next phase. Every rank waits for the
        phases (they are exchanges with the writer), so blocked = writer time."""
        a = agreements(case, model)
        own = 1.0 / model
        for v in case.decomposed():
            n = slab_count(v.shape, max(1, s.slab_bytes // v.esize))
            for m, b in slab_fanins(v, n, px, py):
                gather = gatherv_in if s.gatherv else fan_in
                a.plus(gather(m, b, own if m == model else 0.0))
                a.plus(stream_write(b, 1, b, 0))
            a.add("req_s", boxes(v, n))                  # one request per box of each slab
        # NetCDF-4 with deflate: the one writer compresses every chunk.
        return a.plus(replicated_write(case, 1, 1)).plus(whole_levels(case, 1))

    def busy(self, s, ranks, case=None, profile=None):
        return 1                 # the writer alone; the others wait for its phases

    def memory(self, case, s, profile, model, px, py):
        slab = slab_held(case, s)
        return int(2 * slab), int(min(tile_bytes_max(case, px, py), int(slab)))

    def counts(self, case, s, ranks, px, py):
        dec, rep = case.decomposed(), case.replicated()
        writes = sum(boxes(v, slab_count(v.shape, max(1, s.slab_bytes // v.esize)))
                     for v in dec)
        moved = sum(v.bytes - overlap(v, 1, 0, 0, px, py) * v.esize for v in dec)
        return {"writers": 1, "writes": writes + len(rep), "rearranged_bytes": moved}

    def writer_amounts(self, case, s, profile, model, px, py, run):
        # The writer's backend calls are the run's writes.
        return Amounts({k: v for k, v in run.items() if k in WRITE_KEYS})

    def wrf_setting(self, s, case, procs, model, px, py):
        return ("io_form_history = 2 (rank 0 gathers every field and writes serial NetCDF; "
                "WRF's rank 0 holds a whole field, Tessera's writer one slab)")

    def memory_text(self, s, writer, rank, model):
        return f"{writer} on the writer (rank 0), {rank} on each other rank"

    def small_requests_hint(self, writers, small_variables, aggregators, slab):
        if small_variables:
            return None
        return f"slab_bytes={slab} (a slab per variable), or strategy=aggregate"
