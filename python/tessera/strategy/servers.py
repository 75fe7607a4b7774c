"""strategy=servers: io_groups x io_tasks dedicated ranks take the tiles
with non-blocking sends and write while the model computes
(src/strategy/servers_strategy.c, src/server/; WRF's quilt servers)."""
from __future__ import annotations

import math
import re

from ..model.amounts import Amounts
from ..model.case import slab_count, slab_fanins, tile_bytes_max
from ..model.deflate import whole_levels
from ..model.moves import agreements, cb_nodes, fan_in, file_amounts, replicated_write, \
    stream_write, two_phase
from .row import Row, powers, span
from .serial import slab_held


class Servers(Row):
    name = "servers"
    server_ranks = True
    whole_chunks = True
    wrf_io_form = 2
    # Servers take one of the demo's ranks, so every strategy runs on as many.
    demo_hints = "strategy=servers:io_groups=1:io_tasks=1"
    short_syntax = "servers:GxT"
    tune_knobs = ("io_groups", "io_tasks", "backend", "buffer_bytes")
    tune_order = 4
    advise_order = 4

    def label(self, s):
        return f"servers:{s.io_groups}x{s.io_tasks}"

    def hints(self, s):
        h = f"strategy=servers:io_groups={s.io_groups}:io_tasks={s.io_tasks}"
        return h + f":backend={s.backend}" if s.backend else h

    def short_knobs(self, arg, text):
        m = re.fullmatch(r"(\d+)(?:x(\d+))?", arg or "1x1")
        if not m or int(m.group(1)) < 1 or int(m.group(2) or 1) < 1:
            raise ValueError(f"'{text}': expected servers:GxT, groups x tasks per group, each "
                             "a whole number >= 1 (servers:2x4)")
        return {"io_groups": int(m.group(1)), "io_tasks": int(m.group(2) or 1)}

    def runs_at(self, s, n):
        return n > s.server_ranks()          # servers keep a model rank

    # --- the model: the hand-off on the model side, the servers' own work -------

    def handoff_frame(self, case, s, model, px, py):
        """servers_strategy.c / server_client.c: a model rank packs its tile into
        the ring buffer and starts MPI_Isend; with the netcdf backend one message
        per slab box its tile meets, with pnetcdf one per variable."""
        tile = tile_bytes_max(case, px, py)
        a = agreements(case, model).add("copy_bw", tile)
        if s.blocking:       # WRF: the send completes only into the server's memory
            a.add("net_bw", case.frame_bytes() / s.io_tasks)
        for v in case.decomposed():
            if s.server_backend() == "netcdf":
                n = slab_count(v.shape, max(1, s.slab_bytes // v.esize))
                a.add("msg_s", min(n, v.shape[0] if len(v.shape) > 2 else 1))
            else:
                a.add("msg_s", 1)
        return a

    def server_frame(self, case, s, profile, model, px, py):
        """server_writer.c: netcdf: the group root receives every client's pieces
        slab box by slab box and writes each box (the serial writer, without the
        model's agreements); pnetcdf: each of T servers receives its M/T clients'
        tiles and the group writes collectively (two-phase among T)."""
        t = s.io_tasks
        if s.server_backend() == "netcdf" or t == 1:
            a = Amounts()
            for v in case.decomposed():
                n = slab_count(v.shape, max(1, s.slab_bytes // v.esize))
                for m, b in slab_fanins(v, n, px, py):
                    a.plus(fan_in(m, b)).plus(stream_write(b, 1, b, 1))
                # Each client's piece comes as a header and its data (server_handoff.c):
                # a second message per client and variable, as tessera scaling counts.
                a.add("msg_s", min(model, px * py))
            return a.plus(replicated_write(case, 1, 1)).plus(whole_levels(case, 1))
        clients = math.ceil(model / t)
        b = case.frame_bytes() / t
        a = Amounts()
        for v in case.decomposed():
            a.plus(fan_in(clients, v.bytes / t))
        a.add("copy_bw", b)
        a.plus(two_phase(case, t, px, py, cb_nodes(s, profile, t), profile.cb_buffer_bytes,
                         contiguous=True))
        return a.plus(replicated_write(case, 1, t)).plus(whole_levels(case, t))

    def model_file_cost(self, case, s, model):
        """Per file on the model side: the define calls' agreements, as one
        writer's file costs (the servers create it)."""
        return file_amounts(case, model, opens=0, shared=1)

    def server_file_cost(self, case, s):
        """Per file on the servers: a group's io_tasks open it and share it."""
        return file_amounts(case, s.io_tasks, opens=s.io_tasks, shared=s.io_tasks)

    def shared_writers(self, s, ranks):
        return s.io_tasks if s.server_backend() != "netcdf" else 0

    def memory(self, case, s, profile, model, px, py):
        tile = tile_bytes_max(case, px, py)
        if s.server_backend() == "netcdf":       # the group root writes as serial's writer
            return int(2 * slab_held(case, s)), int(min(s.buffer_bytes, tile))
        # parallel backend: one variable's tiles from the clients + the buffer
        recv = max(v.bytes for v in case.decomposed() or case.vars) / s.io_tasks
        return int(recv + min(s.buffer_bytes, case.frame_bytes() / s.io_tasks)), \
            int(min(s.buffer_bytes, tile))

    # --- advise ---------------------------------------------------------------------

    def candidates(self, procs, buffers):
        out = []
        for g in powers(8):
            for t in powers(8):
                if g * t * 2 > procs:             # keep at least half the ranks computing
                    continue
                out += [{"io_groups": g, "io_tasks": t, "buffer_bytes": b} for b in buffers]
        return out

    def wrf_short(self, s, case):
        if s.server_backend() != "netcdf" and case.deflate > 0:
            return f"quilt {s.io_groups}x{s.io_tasks}, Tessera only"
        form = 2 if s.server_backend() == "netcdf" else 11
        return f"quilt {s.io_groups}x{s.io_tasks}, io_form {form}"

    def wrf_setting(self, s, case, procs, model, px, py):
        if s.server_backend() == "netcdf":
            form = "io_form_history = 2 (the group's root writes serial NetCDF)"
        elif case.deflate > 0:
            form = ("no stock WRF form: WRF's quilt servers write io_form 2 (the group's root) "
                    "or 11 (PnetCDF), not NetCDF-4 in parallel; with Tessera in WRF "
                    "(io_form_history = 8, docs/wrf.md) the hints above do")
        else:
            form = ("io_form_history = 11 (the whole group writes with PnetCDF; WRF built with "
                    "-DPNETCDF_QUILT)")
        return (f"quilting, &namelist_quilt nio_groups = {s.io_groups}, nio_tasks_per_group = "
                f"{s.io_tasks}, with {form}; {s.server_ranks()} of the {procs} processes become "
                f"servers, so the model grid is the other {model}: &domains nproc_x = {px}, "
                f"nproc_y = {py}. WRF's quilt hand-off blocks while a group is busy, Tessera's "
                f"does not (docs/servers.md): stock WRF may wait longer than predicted")

    def flat_text(self, same, near, pct):
        layouts = sorted({(s.io_groups, s.io_tasks) for s in near})
        if len(near) == 1:
            return f"no other server layout or buffer within {pct:g} %"
        buffers = span([s.buffer_bytes for s in near], [s.buffer_bytes for s, _ in same],
                       lambda b: f"{b >> 20}m")
        return (f"io_groups x io_tasks {', '.join(f'{g}x{t}' for g, t in layouts)}, "
                f"buffer_bytes {buffers} within {pct:g} %")

    def memory_text(self, s, writer, rank, model):
        return (f"{writer} on each of the {s.server_ranks()} server ranks, {rank} on each model "
                f"rank (at most buffer_bytes={s.buffer_bytes >> 20}m)")
