"""The case the cost model predicts for: domain, fields, output schedule and
compute time per step, plus the geometry every strategy's cost is built from
(the process grid, the tiles, and how many tiles a slab of a field touches).

The geometry mirrors the code, not a guess: tiles are cut as tessera-bench cuts
them (`bench_tile`: balanced, the remainder to the first tiles), the process
grid is MPI_Dims_create's most square factorisation, and slabs are laid out as
`src/plan/layout.c` lays them out (`tsr__layout_slabs` / `tsr__layout_chunks`:
balanced pieces of whole rows of the slowest dimensions).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

#: Dimension names that follow the domain (tessera-bench's resize rules).
X_DIMS = {"west_east": 0, "west_east_stag": 1}
Y_DIMS = {"south_north": 0, "south_north_stag": 1}
Z_DIMS = {"bottom_top": 0, "bottom_top_stag": 1}

ESIZE = {"float": 4, "int": 4, "double": 8, "char": 1, "short": 2, "byte": 1}

#: tessera-bench's default fields (apps/bench/schema_default.c): name, type,
#: dimensions after Time. Kept in step with the C table by a test.
BENCH_DEFAULT = (
    ("Times", "char", ('DateStrLen',)),
    ("XLAT", "float", ('south_north', 'west_east')),
    ("XLONG", "float", ('south_north', 'west_east')),
    ("XLAT_U", "float", ('south_north', 'west_east_stag')),
    ("XLONG_U", "float", ('south_north', 'west_east_stag')),
    ("XLAT_V", "float", ('south_north_stag', 'west_east')),
    ("XLONG_V", "float", ('south_north_stag', 'west_east')),
    ("ZNU", "float", ('bottom_top',)),
    ("ZNW", "float", ('bottom_top_stag',)),
    ("XTIME", "float", ()),
    ("ITIMESTEP", "int", ()),
    ("U", "float", ('bottom_top', 'south_north', 'west_east_stag')),
    ("V", "float", ('bottom_top', 'south_north_stag', 'west_east')),
    ("W", "float", ('bottom_top_stag', 'south_north', 'west_east')),
    ("PH", "float", ('bottom_top_stag', 'south_north', 'west_east')),
    ("PHB", "float", ('bottom_top_stag', 'south_north', 'west_east')),
    ("T", "float", ('bottom_top', 'south_north', 'west_east')),
    ("P", "float", ('bottom_top', 'south_north', 'west_east')),
    ("PB", "float", ('bottom_top', 'south_north', 'west_east')),
    ("QVAPOR", "float", ('bottom_top', 'south_north', 'west_east')),
    ("TSLB", "float", ('soil_layers_stag', 'south_north', 'west_east')),
    ("MU", "float", ('south_north', 'west_east')),
    ("PSFC", "float", ('south_north', 'west_east')),
    ("T2", "float", ('south_north', 'west_east')),
    ("Q2", "float", ('south_north', 'west_east')),
    ("U10", "float", ('south_north', 'west_east')),
    ("V10", "float", ('south_north', 'west_east')),
    ("TSK", "float", ('south_north', 'west_east')),
    ("HGT", "float", ('south_north', 'west_east')),
    ("RAINC", "float", ('south_north', 'west_east')),
    ("RAINNC", "float", ('south_north', 'west_east')),
    ("SWDOWN", "float", ('south_north', 'west_east')),
    ("HFX", "float", ('south_north', 'west_east')),
    ("LH", "float", ('south_north', 'west_east')),
    ("PBLH", "float", ('south_north', 'west_east')),
    ("IVGTYP", "int", ('south_north', 'west_east')),
)
BENCH_FIXED_DIMS = {"DateStrLen": 19, "soil_layers_stag": 4}


@dataclass(frozen=True)
class Var:
    """One variable of a history frame: its shape without the record
    dimension (slowest first), element size, and whether it is decomposed
    (has a horizontal dimension) or replicated (tsr_put_global)."""
    name: str
    shape: tuple
    esize: int
    decomposed: bool
    ystag: int = 0        # the last tile along y (x) has one more point (staggered grid)
    xstag: int = 0

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * self.esize if self.shape else self.esize


@dataclass
class Case:
    """A model run as output sees it. `step_s` is compute seconds per step at
    `step_ranks` model ranks; other rank counts scale as (step_ranks/P)**step_exp
    unless `step_table` gives the time per step at that P (a published figure)."""
    nx: int
    ny: int
    nz: int
    vars: list
    outputs: int                 # history frames written in the run
    frames_per_file: int = 1
    steps: int = 0               # model steps in the run
    step_s: float = 0.0
    step_ranks: int = 1
    step_exp: float = 1.0
    step_table: dict = field(default_factory=dict)
    other_s: float = 0.0         # wall time outside compute and output (input, setup)
    name: str = "case"
    deflate: int = 0             # NetCDF-4 zlib level the file is written with (0: none;
    shuffle: bool = True         # deflate prices it), and HDF5's byte shuffle
                                 # (the library's default with a compressor)

    @property
    def files(self) -> int:
        return -(-self.outputs // self.frames_per_file)

    def frame_bytes(self) -> int:
        return sum(v.bytes for v in self.vars)

    def decomposed(self) -> list:
        return [v for v in self.vars if v.decomposed]

    def replicated(self) -> list:
        return [v for v in self.vars if not v.decomposed]

    def step_time(self, ranks: int) -> float:
        if ranks in self.step_table:
            return float(self.step_table[ranks])
        if self.step_s <= 0:
            return 0.0
        return self.step_s * (self.step_ranks / ranks) ** self.step_exp

    def interval_s(self, ranks: int) -> float:
        """Compute seconds between two history outputs at `ranks` model ranks."""
        if self.outputs <= 1:
            return 0.0
        return self.step_time(ranks) * self.steps / (self.outputs - 1)

    def with_(self, **kw) -> "Case":
        return replace(self, **kw)


def dims_create(n: int) -> tuple:
    """MPI_Dims_create(n, 2): the most square factorisation, larger first."""
    d = int(math.isqrt(n))
    while n % d:
        d -= 1
    return n // d, d


def process_grid(case: Case, ranks: int, px: int = 0, py: int = 0) -> tuple:
    """tessera-bench's process grid: the larger factor along the longer axis."""
    if px and py:
        return px, py
    a, b = dims_create(ranks)
    return (a, b) if case.nx >= case.ny else (b, a)


def tile_range(n: int, p: int, c: int, stag: int = 0) -> tuple:
    """(start, count) of tile c of p along an axis of n points: bench_tile()
    cuts the unstaggered n - stag points, remainder to the first tiles, and
    gives a staggered axis' extra point to the last tile."""
    base, rem = divmod(n - stag, p)
    start = c * base + min(c, rem)
    count = base + (1 if c < rem else 0) + (stag if c == p - 1 else 0)
    return start, count


def tile_of(n: int, p: int, i: int, stag: int = 0) -> int:
    """The tile index holding global index i (inverse of tile_range)."""
    n -= stag
    if i >= n:
        return p - 1
    base, rem = divmod(n, p)
    if base == 0:
        return min(i, p - 1)
    big = rem * (base + 1)
    return i // (base + 1) if i < big else rem + (i - big) // base


def tiles_touched(n: int, p: int, lo: int, hi: int, stag: int = 0) -> int:
    """How many of p tiles of an n-long axis overlap [lo, hi)."""
    if hi <= lo:
        return 0
    if hi - lo >= n:
        return min(p, n)
    return tile_of(n, p, hi - 1, stag) - tile_of(n, p, lo, stag) + 1


def _split_depth(shape: tuple, n: int) -> tuple:
    rows, k = 1, 0
    while k < len(shape) and rows < n:
        rows *= shape[k]
        k += 1
    return k, rows, math.prod(shape[k:])


def slab_count(shape: tuple, max_elems: int) -> int:
    """Pieces `tsr__layout_chunks` cuts a variable into so that none holds
    more than max_elems elements."""
    total = math.prod(shape) if shape else 1
    max_elems = max(1, max_elems)
    n = max(1, -(-total // max_elems))
    while True:
        _, rows, unit = _split_depth(shape, n)
        if -(-rows // n) * unit <= max_elems or n >= total:
            return n
        n += 1


def slab_fanins(var: Var, npieces: int, px: int, py: int) -> list:
    """For each of `npieces` balanced slabs of `var` (tsr__layout_slabs), the
    number of tiles (source ranks) it intersects, and its bytes: the fan-in a
    writer of that slab receives from."""
    shape = var.shape
    nd = len(shape)
    if nd < 2:
        return [(1, var.bytes)] + [(0, 0)] * (npieces - 1)
    ny, nx = shape[-2], shape[-1]
    k, rows, unit = _split_depth(shape, npieces)
    out = []
    for p in range(npieces):
        lo, hi = rows * p // npieces, rows * (p + 1) // npieces
        nbytes = (hi - lo) * unit * var.esize
        if hi <= lo:
            out.append((0, 0))
        elif k <= nd - 2:          # whole (y, x) planes: every tile
            out.append((px * py, nbytes))
        elif k == nd - 1:          # rows of y inside planes (may wrap one plane)
            y0, y1 = lo % ny, (hi - 1) % ny + 1
            ys = var.ystag
            if hi - lo >= ny:
                ty = py
            elif y1 > y0:
                ty = tiles_touched(ny, py, y0, y1, ys)
            else:                  # wraps: the end of one plane, the start of the next
                ty = min(py, tiles_touched(ny, py, y0, ny, ys) + tiles_touched(ny, py, 0, y1, ys))
            out.append((ty * px, nbytes))
        else:                      # pieces smaller than one row of x
            x0, x1 = lo % nx, (hi - 1) % nx + 1
            tx = tiles_touched(nx, px, x0, x1, var.xstag) if x1 > x0 else min(px, 2)
            out.append((tx, nbytes))
    return out


def range_boxes(shape: tuple, lo: int, hi: int, depth: int = 0) -> int:
    """Boxes tsr__flat_range_boxes cuts the flat row range [lo, hi) into
    (src/plan/box.c: a partial first row, a block of whole rows, a partial
    last row, recursively)."""
    if hi <= lo:
        return 0
    inner = math.prod(shape[depth + 1:])
    a, b, alo, bhi = lo // inner, hi // inner, lo % inner, hi % inner
    if a == b:
        return range_boxes(shape, alo, bhi, depth + 1)
    n = 0
    if alo:
        n += range_boxes(shape, alo, inner, depth + 1)
        a += 1
    if b > a:
        n += 1
    if bhi:
        n += range_boxes(shape, 0, bhi, depth + 1)
    return n


def piece_rows(var: Var, npieces: int, p: int) -> tuple:
    """(k, lo, hi, unit): piece p covers flat rows [lo, hi) of the first k
    dimensions, each row `unit` elements (tsr__layout_slabs)."""
    k, rows, unit = _split_depth(var.shape, npieces)
    return k, rows * p // npieces, rows * (p + 1) // npieces, unit


def boxes(var: Var, npieces: int) -> int:
    """Write requests for one frame of var cut into npieces slabs: one per
    box of each piece (a piece that is not whole rows is several boxes)."""
    n = 0
    for p in range(npieces):
        k, lo, hi, _ = piece_rows(var, npieces, p)
        n += range_boxes(var.shape[:k], lo, hi) if k else int(hi > lo)
    return n


def tile_bytes_max(case: Case, px: int, py: int) -> int:
    """Bytes of one frame on the rank with the largest tile (the first tile
    takes the remainder; staggered fields add one point on the last)."""
    total = 0
    for v in case.decomposed():
        ty = max(tile_range(v.shape[-2], py, c, v.ystag)[1] for c in (0, py - 1))
        tx = max(tile_range(v.shape[-1], px, c, v.xstag)[1] for c in (0, px - 1))
        total += math.prod(v.shape[:-2]) * ty * tx * v.esize
    return total


# --- building cases ------------------------------------------------------------

def _resize(dim: str, nx: int, ny: int, nz: int, fixed: dict) -> int:
    for table, n in ((X_DIMS, nx), (Y_DIMS, ny), (Z_DIMS, nz)):
        if dim in table:
            return n + table[dim]
    return fixed[dim]


def vars_from(defs, nx: int, ny: int, nz: int, fixed: dict) -> list:
    out = []
    for name, typ, dims in defs:
        shape = tuple(_resize(d, nx, ny, nz, fixed) for d in dims)
        horiz = any(d in X_DIMS or d in Y_DIMS for d in dims)
        ystag = int(any(Y_DIMS.get(d) == 1 for d in dims))
        xstag = int(any(X_DIMS.get(d) == 1 for d in dims))
        out.append(Var(name, shape, ESIZE[typ], horiz, ystag, xstag))
    return out


_DIM_RE = re.compile(r"^\s*(\w+)\s*=\s*(UNLIMITED|\d+)\s*;")
_VAR_RE = re.compile(r"^\s*(char|byte|short|int|float|double)\s+(\w+)\s*\(([^)]*)\)\s*;")


#: The most a schema (CDL) may hold, as tessera-bench's own bound
#: (apps/bench/text_file.h): a header is kilobytes; /dev/zero never ends.
TEXT_MAX = 64 << 20


def read_bounded(path: str, what: str) -> str:
    """The text of @path, refused (ValueError naming it) when larger than
    TEXT_MAX: devices and pipes are read only that far."""
    with open(path, "rb") as fh:
        data = fh.read(TEXT_MAX + 1)
    if len(data) > TEXT_MAX:
        raise ValueError(f"{path}: larger than the 64 MiB a {what} may hold (read stopped there)")
    return data.decode("utf-8", errors="replace")


def cdl_defs(path: str) -> tuple:
    """(variable definitions, fixed dimension sizes) of a CDL header, in the
    form vars_from takes; record variables only (the ones written per frame)."""
    dims, defs, section = {}, [], None
    for line in read_bounded(path, "schema").splitlines():
        s = line.strip()
        if s.startswith("dimensions:"):
            section = "dims"
            continue
        if s.startswith("variables:"):
            section = "vars"
            continue
        if section == "dims" and (m := _DIM_RE.match(line)):
            dims[m.group(1)] = 0 if m.group(2) == "UNLIMITED" else int(m.group(2))
        elif section == "vars" and (m := _VAR_RE.match(line)):
            names = [d.strip() for d in m.group(3).split(",") if d.strip()]
            if names and dims.get(names[0]) == 0:
                defs.append((m.group(2), m.group(1), tuple(names[1:])))
    return defs, dims


def bench_case(nx: int, ny: int, nz: int, steps: int, output_every: int,
               frames_per_file: int = 1, schema: str | None = None, **kw) -> Case:
    """The case tessera-bench runs with these options (output 0 at the start,
    then every output_every steps)."""
    if schema and schema != "default":
        defs, fixed = cdl_defs(schema)
    else:
        defs, fixed = BENCH_DEFAULT, BENCH_FIXED_DIMS
    outputs = 1 + steps // output_every if output_every > 0 else 1
    return Case(nx=nx, ny=ny, nz=nz, vars=vars_from(defs, nx, ny, nz, fixed), outputs=outputs,
                frames_per_file=frames_per_file, steps=steps, **kw)


def hints_deflate(hints: str) -> tuple:
    """(deflate level, shuffle) a hint string asks for: `deflate=N` counts
    only with `format=netcdf4` (or `backend=netcdf4`), other formats have no
    compression; shuffle is on unless `shuffle=0` (the library's default
    with a compressor)."""
    kv = {}
    for tok in (hints or "").split(":"):
        if "=" in tok:
            k, v = tok.split("=", 1)
            kv[k.strip()] = v.strip()
    if kv.get("format") != "netcdf4" and kv.get("backend") != "netcdf4":
        return 0, False
    try:
        level = int(kv.get("deflate", 0))
    except ValueError:
        level = 0
    return level, kv.get("shuffle", "1") != "0"


def case_from_record(rec: dict, step_s: float = 0.0) -> Case:
    """The case a tessera-bench --json record ran."""
    ranks = int(rec["ranks"]["model"])
    steps = int(rec["steps"])
    c = bench_case(int(rec["nx"]), int(rec["ny"]), int(rec["nz"]), steps,
                   int(rec["output_every"]), int(rec.get("frames_per_file", 1)),
                   rec.get("schema"), name="bench")
    if rec.get("variables") is not None and int(rec["variables"]) != len(c.vars):
        # The bench's default fields changed since this run was recorded.
        raise ValueError(f"a run with {rec['variables']} variables, but the fields the model "
                         f"knows for schema {rec.get('schema', 'default')} are {len(c.vars)}")
    per_step = step_s or (float(rec["compute_s"]) / steps if steps else 0.0)
    level, shuffle = hints_deflate(rec.get("hints", ""))
    return c.with_(step_s=per_step, step_ranks=ranks, deflate=level, shuffle=shuffle)


# --- which part of a piece lies in a rank's tile (model/counts.py) -------------

def tile_box(var: Var, rank: int, px: int, py: int) -> tuple:
    """((y0, y1), (x0, x1)) of rank's tile of var (row-major rank order)."""
    ys, yc = tile_range(var.shape[-2], py, rank // px, var.ystag)
    xs, xc = tile_range(var.shape[-1], px, rank % px, var.xstag)
    return (ys, ys + yc), (xs, xs + xc)


def _count_in(h: int, period: int, a: int, b: int) -> int:
    """How many r in [0, h) have r % period in [a, b)."""
    return (h // period) * (b - a) + min(max(h % period - a, 0), b - a)


def overlap(var: Var, npieces: int, p: int, rank: int, px: int, py: int) -> int:
    """Elements of piece p of var that lie in rank's tile."""
    nd = len(var.shape)
    k, lo, hi, _ = piece_rows(var, npieces, p)
    (y0, y1), (x0, x1) = tile_box(var, rank, px, py)
    ny, nx = var.shape[-2], var.shape[-1]
    if k <= nd - 2:                    # whole (y, x) planes
        return (hi - lo) * math.prod(var.shape[k:nd - 2]) * (y1 - y0) * (x1 - x0)
    if k == nd - 1:                    # rows of x
        return (_count_in(hi, ny, y0, y1) - _count_in(lo, ny, y0, y1)) * (x1 - x0)
    return sum(1 for i in range(lo, hi)   # single points (only for absurd piece counts)
               if x0 <= i % nx < x1 and y0 <= (i // nx) % ny < y1)
