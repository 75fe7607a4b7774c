"""strategy=split: every rank writes its tile into a file of its own,
joined afterwards (src/strategy/split.c; WRF's io_form 102)."""
from __future__ import annotations

from ..model.amounts import Amounts
from ..model.case import tile_bytes_max
from ..model.deflate import compress
from ..model.moves import agreements, stream_write
from .row import Row, writer_run


class Split(Row):
    name = "split"
    file_per_rank = True
    wrf_io_form = 102
    demo_hints = "strategy=split"
    tune_knobs = ("buffer_bytes",)
    tune_order = 3
    advise_order = 2

    def frame(self, case, s, profile, model, px, py):
        """split.c: every rank writes its tile into its own file; no exchange.
        The tile sits inside the model's halo'd array, so the netcdf backend
        packs it into a contiguous block first (netcdf.c, tsr__block_pack):
        one copy of the tile, as serial's writer copies its slab."""
        return agreements(case, model).plus(self.write(case, model, px, py))

    def write(self, case, model, px, py):
        """What one split rank's writer does per frame (its writer_s): pack the
        tile, write it and the replicated variables to its own file."""
        tile = tile_bytes_max(case, px, py)
        rep = sum(v.bytes for v in case.replicated())
        return Amounts().add("copy_bw", tile).plus(
            stream_write(tile + rep, model, case.frame_bytes() + model * rep,
                         len(case.vars))).plus(
            compress(case, tile + rep))              # its own file: it compresses its tile

    def opens(self, s, ranks):
        return ranks                                 # every rank creates its own file

    def memory(self, case, s, profile, model, px, py):
        tile = tile_bytes_max(case, px, py)
        return int(tile), int(tile)

    def counts(self, case, s, ranks, px, py):
        return {"writers": ranks, "writes": ranks * len(case.vars), "rearranged_bytes": 0}

    def writer_amounts(self, case, s, profile, model, px, py, run):
        return writer_run(self.write(case, model, px, py), case, run)

    def wrf_setting(self, s, case, procs, model, px, py):
        return "io_form_history = 102 (one file per rank, joined afterwards)"

    def memory_text(self, s, writer, rank, model):
        return f"{writer} on every rank (each writes its own file)"

    def small_requests_hint(self, writers, small_variables, aggregators, slab):
        if small_variables:
            return None
        return "strategy=aggregate (fewer writers, each with larger requests)"
