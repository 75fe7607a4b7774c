"""How data moves, as amounts of work: the pieces every strategy's cost
formula is built of (a receiver's fan-in, a stream's write, MPI-IO's
collective write, the agreements, a file's create and close).

Every function here returns `Amounts`: how many bytes are copied, received,
written by one stream; how many messages, queue entries, collective stages,
requests, files. A profile prices each amount (profile.PARAMS), so the
same code predicts (amounts x profile) and calibrates (fit the profile to
measured times, given the amounts). The equations are in docs/model.md; each
strategy's own formula, which puts these pieces together the way its C code
moves data, is in its row (tessera/strategy/<name>.py). `strat` is the knobs
of model/strategy.py's `Strategy`.
"""
from __future__ import annotations

import math

from .amounts import Amounts
from .case import Case, slab_count, slab_fanins
from .ompio import aggregators as ompio_aggregators
from .profile import Profile

#: The amounts a writer spends on the file system (a run's write time, the
#: writer_s a calibration fits).
WRITE_KEYS = ("write_bw", "fs_bw", "req_s", "file_s", "open_s")


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


def write_groups(case: Case, strat, tile_bytes) -> list:
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


#: A shared file's MPI-IO open, PnetCDF's header broadcast at enddef and the
#: close are collective among its writers: about this many collective stages
#: each way.
SHARED_FILE_STAGES = 6


def file_amounts(case: Case, ranks: int, opens: int, shared: int) -> Amounts:
    """Per file: the agreements of create, enddef and close among `ranks`,
    the create and close themselves, `opens` processes opening it, and the
    collective open and close among the `shared` writers of one file."""
    return Amounts().add("coll_s", AGREE_PER_FILE * stages(ranks)).add("file_s", 1).add(
        "open_s", opens).add("coll_s", SHARED_FILE_STAGES * stages(shared))


def cb_nodes(strat, profile: Profile, writers: int, chunk_bytes: float = 0.0,
             one_chunk: bool = False) -> int:
    """Aggregators of a collective write among `writers`: the cb_nodes hint,
    else the profile's, else what the MPI-IO picks itself for file views of
    `chunk_bytes` average contiguous chunks (ompio: OMPIO's simple
    grouping; without a chunk size, every writer)."""
    c = strat.cb_nodes if strat.cb_nodes >= 0 else profile.cb_nodes
    if c <= 0:
        c = ompio_aggregators(writers, chunk_bytes, one_chunk) if chunk_bytes > 0 else writers
    return min(c, writers)


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

