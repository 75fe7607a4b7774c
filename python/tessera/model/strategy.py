"""How each output strategy moves one history frame, as amounts of work.

Every function here returns `Amounts`: how many bytes are copied, received,
written by one stream; how many messages, queue entries, collective stages,
requests, files. A profile prices each amount (profile.PARAMS), so the
same code predicts (amounts x profile) and calibrates (fit the profile to
measured times, given the amounts). The equations are in docs/model.md; each
function names the C code whose data movement it follows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..strategies import reserves_servers
from .case import Case, boxes, process_grid, slab_count, slab_fanins, tile_bytes_max
from .deflate import compress, whole_levels
from .ompio import aggregators as ompio_aggregators
from .amounts import Amounts
from .profile import Profile


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

    def server_ranks(self) -> int:
        return self.io_groups * self.io_tasks if reserves_servers(self.name) else 0

    def server_backend(self) -> str:
        return self.backend or ("pnetcdf" if self.io_tasks > 1 else "netcdf")

    def label(self) -> str:
        if self.name == "aggregate":
            return f"aggregate:{self.aggregators}" if self.aggregators else "aggregate"
        if self.name == "servers":
            return f"servers:{self.io_groups}x{self.io_tasks}"
        return self.name

    def hints(self) -> str:
        h = f"strategy={self.name}"
        if self.name == "aggregate" and self.aggregators:
            h += f":aggregators={self.aggregators}"
        if self.name == "servers":
            h += f":io_groups={self.io_groups}:io_tasks={self.io_tasks}"
            if self.backend:
                h += f":backend={self.backend}"
        return h


def stages(p: int) -> int:
    return max(1, math.ceil(math.log2(p))) if p > 1 else 0


def fan_in(m: int, nbytes: int, own: float = 0.0) -> Amounts:
    """A receiver getting `nbytes` from m senders (own: the fraction it holds
    itself): m messages, the posted-receive queue searched m(m+1)/2 times in
    all, the bytes over the network and unpacked."""
    a = Amounts()
    remote = max(0, m - 1) if own else m
    a.add("msg_s", remote).add("match_s", remote * (remote + 1) / 2)
    a.add("net_bw", nbytes * (1.0 - own)).add("copy_bw", nbytes)
    return a


def gatherv_in(m: int, nbytes: int, own: float = 0.0) -> Amounts:
    """The root of an MPI_Gatherv getting `nbytes` from m ranks: as fan_in,
    but every receive names its source, so MPI matches each arrival in that
    source's own queue (Open MPI's ob1 and PSM2 keep one per peer) and no
    arrival searches the others' receives: no m(m+1)/2 term."""
    a = fan_in(m, nbytes, own)
    a.pop("match_s", None)
    return a


def stream_write(nbytes: float, writers: int, total: float, requests: float) -> Amounts:
    """One of `writers` streams writing `nbytes` while all together write
    `total`: its own stream's time plus the file system's share."""
    return Amounts().add("write_bw", nbytes).add("fs_bw", total).add("req_s", requests)


def file_pieces(var, px: int, py: int) -> int:
    """Contiguous file pieces of one frame of a decomposed variable cut into
    px x py tiles, counted per tile (each rank lists its own): a tile is one
    piece per row of y when px > 1 (its rows are cut in x), one per level
    when only y is cut, and the whole variable on one rank."""
    levels = math.prod(var.shape[:-2])
    if px > 1:
        return levels * var.shape[-2] * px
    return levels * py if py > 1 else 1


def write_groups(case: Case, strat: Strategy, tile_bytes) -> list:
    """The decomposed variables of one frame grouped by the collective write
    that carries them. PnetCDF's ncmpi_wait_all (pnetcdf.c flush) joins every
    pending request into one MPI_File_write_all, and the direct strategy
    waits only at close or before a put that would overflow buffer_bytes
    (direct.c make_room): a group is the run of variables that fits."""
    groups, cur, room = [], [], strat.buffer_bytes
    for v in case.decomposed():
        b = tile_bytes(v)
        if cur and b > room:
            groups.append(cur)
            cur, room = [], strat.buffer_bytes
        cur.append(v)
        room -= b
    return groups + ([cur] if cur else [])


def two_phase(case: Case, senders: int, px: int, py: int, aggregators: int,
              cb_buffer: int, contiguous: bool, groups: list | None = None) -> Amounts:
    """A collective write of one frame through MPI-IO. When each sender's
    data is one contiguous block per variable (`contiguous`: aggregate's
    slabs, the servers' groups), ROMIO's automatic collective buffering sees
    no interleaving and every sender writes its own block: `senders` streams.
    Otherwise (direct's 2-D tiles of every level) two-phase I/O runs, once
    per write (`groups`: the variables each MPI_File_write_all carries;
    default one per variable): `aggregators` ranks each take a
    1/aggregators share of the file region, cb_buffer bytes per cycle, from
    the senders whose tiles fall in it, and list, sort and copy every
    contiguous piece of it; the aggregators work in parallel, so the time is
    one aggregator's share."""
    total = sum(v.bytes for v in case.decomposed())
    nvars = len(case.decomposed())
    if contiguous:
        return stream_write(total / senders, senders, total, nvars).add(
            "coll_s", nvars * stages(senders)).add("mpiio_bw", total / senders)
    a = Amounts()
    c = max(1, min(aggregators, senders))
    own = 1.0 / senders if senders > 1 else 1.0
    requests = 0
    for g in groups or [[v] for v in case.decomposed()]:
        if len(g) == 1:
            v = g[0]
            n = slab_count(v.shape, max(1, cb_buffer // v.esize))
            fanins = slab_fanins(v, n, px, py)
        else:
            # Several variables in one file view: cycles of cb_buffer over
            # their bytes, each meeting every tile (every level of every
            # variable interleaves all ranks' tiles).
            gb = sum(v.bytes for v in g)
            n = max(1, -(-gb // max(1, cb_buffer)))
            fanins = [(px * py, gb / n)] * n
        for m, b in fanins:
            a.plus(fan_in(m, b, own=own), 1.0 / c)
        requests += n
        # ROMIO's offset exchange per write, and one all-to-all of the
        # sizes per cycle, among all senders.
        a.add("coll_s", stages(senders) * (1 + n / c))
        a.add("piece_s", sum(file_pieces(v, px, py) for v in g) / c)
    return a.plus(stream_write(total / c, c, total, requests / c)).add("mpiio_bw", total / c)


def replicated_write(case: Case, writers: int, total_writers: int) -> Amounts:
    b = sum(v.bytes for v in case.replicated())
    return stream_write(b, total_writers, b, len(case.replicated()))


#: Agreements (an MPI_Allreduce of the status) per tsr_put / tsr_put_global:
#: the API layer's check and result (src/api/file.c) and the strategy's own
#: (buffer allocation, or whether to drain the backend buffer first).
AGREE_PER_PUT = 3
#: Per file: tsr_create, the define log at tsr_enddef (define calls are only
#: logged), the strategy's enddef, close and the atomic finish, plus margin.
AGREE_PER_FILE = 6


def agreements(case: Case, ranks: int) -> Amounts:
    """The agreements of one frame: AGREE_PER_PUT for every variable."""
    return Amounts().add("coll_s", AGREE_PER_PUT * len(case.vars) * stages(ranks))


def file_cost(case: Case, strat: Strategy, ranks: int) -> Amounts:
    """Per file: the agreements of create, enddef and close, the create and
    close themselves; a shared file is opened by every writer process,
    `split` creates one file per rank at once."""
    a = Amounts().add("coll_s", AGREE_PER_FILE * stages(ranks)).add("file_s", 1)
    if strat.name in ("direct", "split"):
        a.add("open_s", ranks)
    elif strat.name == "aggregate":
        a.add("open_s", aggregator_count(strat, ranks))
    shared = {"direct": ranks, "aggregate": aggregator_count(strat, ranks)}.get(strat.name, 1)
    # A shared file's MPI-IO open, PnetCDF's header broadcast at enddef and
    # the close are collective among its writers: about SHARED_FILE_STAGES
    # collective stages each way.
    return a.add("coll_s", SHARED_FILE_STAGES * stages(shared))


SHARED_FILE_STAGES = 6


def aggregator_count(strat: Strategy, ranks: int) -> int:
    n = strat.aggregators if strat.aggregators > 0 else max(1, ranks // 4)
    return min(n, ranks)


def cb_nodes(strat: Strategy, profile: Profile, writers: int, chunk_bytes: float = 0.0,
             one_chunk: bool = False) -> int:
    """Aggregators of a collective write among `writers`: the cb_nodes hint,
    else the profile's, else what the MPI-IO picks itself for file views of
    `chunk_bytes` average contiguous chunks (ompio: OMPIO's simple
    grouping; without a chunk size, every writer)."""
    c = strat.cb_nodes if strat.cb_nodes >= 0 else profile.cb_nodes
    if c <= 0:
        c = ompio_aggregators(writers, chunk_bytes, one_chunk) if chunk_bytes > 0 else writers
    return min(c, writers)


# --- the strategies: amounts per history frame, on the busiest model rank ------

def serial_frame(case: Case, strat: Strategy, ranks: int, px: int, py: int) -> Amounts:
    """serial.c: per variable, tsr__layout_chunks cuts slabs of <= slab_bytes;
    phase by phase every tile in the slab is sent to the writer, which unpacks
    it and writes the slab before the next phase. Every rank waits for the
    phases (they are exchanges with the writer), so blocked = writer time."""
    a = agreements(case, ranks)
    own = 1.0 / ranks
    for v in case.decomposed():
        n = slab_count(v.shape, max(1, strat.slab_bytes // v.esize))
        for m, b in slab_fanins(v, n, px, py):
            gather = gatherv_in if strat.gatherv else fan_in
            a.plus(gather(m, b, own if m == ranks else 0.0))
            a.plus(stream_write(b, 1, b, 0))
        a.add("req_s", boxes(v, n))                  # one request per box of each slab
    # NetCDF-4 with deflate: the one writer compresses every chunk.
    return a.plus(replicated_write(case, 1, 1)).plus(whole_levels(case, 1))


def direct_frame(case: Case, strat: Strategy, profile: Profile, ranks: int, px: int,
                 py: int) -> Amounts:
    """direct.c: every rank copies its tile into PnetCDF's attached buffer
    (tsr_put returns), and the buffer is written by one collective wait at
    close, or earlier whenever the next put would pass buffer_bytes: one
    MPI_File_write_all per wait (write_groups), MPI-IO two-phase with
    cb_nodes aggregators."""
    tile = tile_bytes_max(case, px, py)
    a = agreements(case, ranks).add("copy_bw", tile)
    one = Case(case.nx, case.ny, case.nz, [], 0)
    groups = write_groups(case, strat,
                          lambda v: tile_bytes_max(one.with_(vars=[v]), px, py))
    a.add("coll_s", len(groups) * stages(ranks))
    c = direct_aggregators(case, strat, profile, ranks, px, py)
    a.plus(two_phase(case, ranks, px, py, c, profile.cb_buffer_bytes, contiguous=False,
                     groups=groups))
    # NetCDF-4 with deflate (HDF5 parallel filters): each chunk is compressed
    # by one owner, so the ranks share the levels.
    return a.plus(replicated_write(case, 1, ranks)).plus(whole_levels(case, ranks))


def direct_aggregators(case: Case, strat: Strategy, profile: Profile, ranks: int, px: int,
                       py: int) -> int:
    """MPI-IO aggregators of direct's collective writes: the ranks' file
    views are their tiles' rows, OMPIO's "contiguous chunks"."""
    pieces = sum(file_pieces(v, px, py) for v in case.decomposed())
    chunk = sum(v.bytes for v in case.decomposed()) / max(1, pieces)
    return cb_nodes(strat, profile, ranks, chunk, one_chunk=pieces <= ranks)


def aggregate_frame(case: Case, strat: Strategy, profile: Profile, ranks: int, px: int,
                    py: int) -> Amounts:
    """aggregate.c: per variable one box exchange onto N aggregators, each
    owning one balanced slab (tsr__layout_slabs); the busiest aggregator's
    fan-in sets the pace. The slabs go into the writers' PnetCDF buffer and are
    written collectively among the N writers."""
    n = aggregator_count(strat, ranks)
    a = agreements(case, ranks)
    for v in case.decomposed():
        worst = max(slab_fanins(v, n, px, py), key=lambda mb: (mb[0] ** 2, mb[1]))
        a.plus(fan_in(worst[0], worst[1], 1.0 / ranks if n < ranks else 1.0))
    return a.plus(aggregate_write(case, strat, profile, ranks, px, py))


def aggregate_write(case: Case, strat: Strategy, profile: Profile, ranks: int, px: int,
                    py: int) -> Amounts:
    """What the busiest aggregator's backend does per frame (its writer_s):
    copy its slab into PnetCDF's buffer, write it collectively among the
    N writers."""
    n = aggregator_count(strat, ranks)
    a = Amounts()
    for v in case.decomposed():
        worst = max(slab_fanins(v, n, px, py), key=lambda mb: (mb[0] ** 2, mb[1]))
        a.add("copy_bw", worst[1])                   # into the backend buffer
    a.plus(two_phase(case, n, px, py, cb_nodes(strat, profile, n), profile.cb_buffer_bytes,
                     contiguous=True))
    # NetCDF-4 with deflate: the writers compress the chunks (levels) of
    # their own slabs collectively; a 2-D field is one chunk, one writer's.
    return a.plus(replicated_write(case, 1, n)).plus(whole_levels(case, n))


def split_frame(case: Case, strat: Strategy, ranks: int, px: int, py: int) -> Amounts:
    """split.c: every rank writes its tile into its own file; no exchange.
    The tile sits inside the model's halo'd array, so the netcdf backend
    packs it into a contiguous block first (netcdf.c, tsr__block_pack):
    one copy of the tile, as serial's writer copies its slab."""
    return agreements(case, ranks).plus(split_write(case, ranks, px, py))


def split_write(case: Case, ranks: int, px: int, py: int) -> Amounts:
    """What one split rank's writer does per frame (its writer_s): pack the
    tile, write it and the replicated variables to its own file."""
    tile = tile_bytes_max(case, px, py)
    rep = sum(v.bytes for v in case.replicated())
    return Amounts().add("copy_bw", tile).plus(
        stream_write(tile + rep, ranks, case.frame_bytes() + ranks * rep, len(case.vars))).plus(
        compress(case, tile + rep))              # its own file: it compresses its tile


def handoff_frame(case: Case, strat: Strategy, model: int, px: int, py: int) -> Amounts:
    """servers_strategy.c / server_client.c: a model rank packs its tile into
    the ring buffer and starts MPI_Isend; with the netcdf backend one message
    per slab box its tile meets, with pnetcdf one per variable."""
    tile = tile_bytes_max(case, px, py)
    a = agreements(case, model).add("copy_bw", tile)
    if strat.blocking:       # WRF: the send completes only into the server's memory
        a.add("net_bw", case.frame_bytes() / strat.io_tasks)
    for v in case.decomposed():
        if strat.server_backend() == "netcdf":
            n = slab_count(v.shape, max(1, strat.slab_bytes // v.esize))
            a.add("msg_s", min(n, v.shape[0] if len(v.shape) > 2 else 1))
        else:
            a.add("msg_s", 1)
    return a


def server_frame(case: Case, strat: Strategy, profile: Profile, model: int, px: int,
                 py: int) -> Amounts:
    """server_writer.c: netcdf: the group root receives every client's pieces
    slab box by slab box and writes each box (the serial writer, without the
    model's agreements); pnetcdf: each of T servers receives its M/T clients'
    tiles and the group writes collectively (two-phase among T)."""
    t = strat.io_tasks
    if strat.server_backend() == "netcdf" or t == 1:
        a = Amounts()
        for v in case.decomposed():
            n = slab_count(v.shape, max(1, strat.slab_bytes // v.esize))
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
    a.plus(two_phase(case, t, px, py, cb_nodes(strat, profile, t), profile.cb_buffer_bytes,
                     contiguous=True))
    return a.plus(replicated_write(case, 1, t)).plus(whole_levels(case, t))


def exposed_share(profile: Profile, model: int, servers: int, background: float = 0.0
                  ) -> float:
    """The share of the servers' work that cannot hide behind compute
    because no core is left for it: the model ranks compute on `model`
    cores (and other jobs on `background`), the servers have what remains.
    On a machine of one's own with a core per process this is 0; once the
    model ranks fill the cores the servers' receiving and writing take CPU
    from the model ranks, which then wait for it (their hand-offs are
    exchanges with the server and agreements among the model ranks)."""
    if profile.cores <= 0 or servers <= 0:
        return 0.0
    free = max(0.0, profile.cores - model - background)
    return 1.0 - min(float(servers), free) / servers


def busy_ranks(strat: Strategy, ranks: int, case: Case | None = None,
               profile: Profile | None = None) -> int:
    """Processes with work while a synchronous strategy's output runs: the
    serial writer alone (the others wait for its phases), the aggregators,
    direct's MPI-IO aggregators (the others wait in MPI_File_write_all while
    they receive, copy and write; their file views are EVERYONE's work), or
    every rank (split's own files)."""
    if strat.name == "serial":
        return 1
    if strat.name == "aggregate":
        return aggregator_count(strat, ranks)
    if strat.name == "direct" and case is not None and profile is not None:
        return direct_aggregators(case, strat, profile, ranks, *process_grid(case, ranks))
    return ranks


#: Amounts every rank works on at the same time, whoever else is busy: in
#: direct's collective write each rank flattens its own file view into
#: offset/length pieces and the aggregator merges them (piece_s).
EVERYONE = {"direct": ("piece_s", "deflate_bw")}


def grid(case: Case, strat: Strategy, ranks: int) -> tuple:
    """(model ranks, px, py) for `ranks` processes in all (servers included)."""
    model = ranks - strat.server_ranks()
    if model < max(1, strat.io_tasks if reserves_servers(strat.name) else 1):
        raise ValueError(f"{strat.label()} needs more than {ranks} processes")
    px, py = process_grid(case, model)
    return model, px, py


def sync_frame(case: Case, strat: Strategy, profile: Profile, ranks: int) -> Amounts:
    """Amounts of one frame for the synchronous strategies (the model waits)."""
    model, px, py = grid(case, strat, ranks)
    if strat.name == "serial":
        return serial_frame(case, strat, model, px, py)
    if strat.name == "direct":
        return direct_frame(case, strat, profile, model, px, py)
    if strat.name == "aggregate":
        return aggregate_frame(case, strat, profile, model, px, py)
    if strat.name == "split":
        return split_frame(case, strat, model, px, py)
    raise ValueError(f"unknown strategy {strat.name}")
