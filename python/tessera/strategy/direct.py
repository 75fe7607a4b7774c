"""strategy=direct: every rank writes its own tile into one shared file,
collectively through PnetCDF (src/strategy/direct.c; WRF's io_form 11)."""
from __future__ import annotations

from ..model.case import Case, process_grid, tile_box, tile_bytes_max
from ..model.deflate import whole_levels
from ..model.moves import agreements, cb_nodes, file_pieces, replicated_write, stages, \
    two_phase, write_groups
from .row import Row


def direct_aggregators(case, s, profile, ranks: int, px: int, py: int) -> int:
    """MPI-IO aggregators of direct's collective writes: the ranks' file
    views are their tiles' rows, OMPIO's "contiguous chunks"."""
    pieces = sum(file_pieces(v, px, py) for v in case.decomposed())
    chunk = sum(v.bytes for v in case.decomposed()) / max(1, pieces)
    return cb_nodes(s, profile, ranks, chunk, one_chunk=pieces <= ranks)


class Direct(Row):
    name = "direct"
    parallel = True
    all_ranks_collective = True
    wrf_io_form = 11
    demo_hints = "strategy=direct"
    tune_knobs = ("cb_nodes", "cb_buffer_size", "striping_unit", "alignment", "buffer_bytes")
    tune_order = 0
    advise_order = 1

    def frame(self, case, s, profile, model, px, py):
        """direct.c: every rank copies its tile into PnetCDF's attached buffer
        (tsr_put returns), and the buffer is written by one collective wait at
        close, or earlier whenever the next put would pass buffer_bytes: one
        MPI_File_write_all per wait (write_groups), MPI-IO two-phase with
        cb_nodes aggregators."""
        tile = tile_bytes_max(case, px, py)
        a = agreements(case, model).add("copy_bw", tile)
        one = Case(case.nx, case.ny, case.nz, [], 0)
        groups = write_groups(case, s, lambda v: tile_bytes_max(one.with_(vars=[v]), px, py))
        a.add("coll_s", len(groups) * stages(model))
        c = direct_aggregators(case, s, profile, model, px, py)
        a.plus(two_phase(case, model, px, py, c, profile.cb_buffer_bytes, contiguous=False,
                         groups=groups))
        # NetCDF-4 with deflate (HDF5 parallel filters): each chunk is compressed
        # by one owner, so the ranks share the levels.
        return a.plus(replicated_write(case, 1, model)).plus(whole_levels(case, model))

    def busy(self, s, ranks, case=None, profile=None):
        """Its MPI-IO aggregators: the others wait in MPI_File_write_all while
        they receive, copy and write (their file views are `everyone`'s work)."""
        if case is None or profile is None:
            return ranks
        return direct_aggregators(case, s, profile, ranks, *process_grid(case, ranks))

    #: In the collective write each rank flattens its own file view into
    #: offset/length pieces and the aggregator merges them.
    everyone = ("piece_s", "deflate_bw")

    def opens(self, s, ranks):
        return ranks

    def shared_writers(self, s, ranks):
        return ranks

    def memory(self, case, s, profile, model, px, py):
        tile = tile_bytes_max(case, px, py)
        return int(min(s.buffer_bytes, tile) + profile.cb_buffer_bytes), int(min(
            s.buffer_bytes, tile))

    def counts(self, case, s, ranks, px, py):
        nonempty = sum(1 for v in case.decomposed() for r in range(ranks)
                       if all(b > a for a, b in tile_box(v, r, px, py)))
        return {"writers": ranks, "writes": nonempty + len(case.replicated()),
                "rearranged_bytes": 0}

    def wrf_short(self, s, case):
        # WRF's parallel NetCDF-4 (io_form 13) stands for direct with a netcdf4 file.
        return f"io_form {13 if case.deflate > 0 else self.wrf_io_form}"

    def wrf_setting(self, s, case, procs, model, px, py):
        if case.deflate > 0:
            return "io_form_history = 13 (every rank writes NetCDF-4 collectively through HDF5)"
        return "io_form_history = 11 (every rank writes collectively through PnetCDF)"

    def memory_text(self, s, writer, rank, model):
        return (f"{writer} on each MPI-IO aggregator of the collective write, {rank} on each "
                "other rank")

    def small_requests_hint(self, writers, small_variables, aggregators, slab):
        # PnetCDF's wait_all merges the variables' requests; MPI-IO's two-phase
        # buffers bound each collective write.
        return (f"strategy=aggregate:aggregators={aggregators}"
                " (fewer, larger requests), or cb_buffer_size=16m for MPI-IO's two-phase buffers")
