"""The model's geometry against brute force and against the C sources: how
many tiles a slab touches (the fan-in every strategy's cost is built on),
how many slabs serial cuts, the process grid, and the bench's field list."""
import itertools
import math
import re
from pathlib import Path

import pytest

from tessera.model.case import (BENCH_DEFAULT, Var, _split_depth, bench_case, dims_create,
                                slab_count, slab_fanins, tile_range)

ROOT = Path(__file__).resolve().parent.parent.parent


def owners(var, px, py):
    """owner[y][x] = rank, from tile_range (bench_tile's rule)."""
    ny, nx = var.shape[-2], var.shape[-1]
    own = [[-1] * nx for _ in range(ny)]
    for cy, cx in itertools.product(range(py), range(px)):
        y0, yc = tile_range(ny, py, cy, var.ystag)
        x0, xc = tile_range(nx, px, cx, var.xstag)
        for y in range(y0, y0 + yc):
            for x in range(x0, x0 + xc):
                own[y][x] = cy * px + cx
    return own


def brute_fanins(var, npieces, px, py):
    """Tiles each piece touches, by visiting every element of the piece."""
    k, rows, unit = _split_depth(var.shape, npieces)
    own = owners(var, px, py)
    ny, nx = var.shape[-2], var.shape[-1]
    out = []
    for p in range(npieces):
        lo, hi = rows * p // npieces * unit, rows * (p + 1) // npieces * unit
        ranks = {own[(i // nx) % ny][i % nx] for i in range(lo, hi)}
        out.append((len(ranks), (hi - lo) * var.esize))
    return out


@pytest.mark.parametrize("shape,ystag,xstag", [((5, 13, 17), 0, 0), ((4, 14, 17), 1, 0),
                                               ((3, 13, 18), 0, 1), ((13, 17), 0, 0)])
@pytest.mark.parametrize("px,py", [(1, 1), (2, 1), (3, 2), (2, 3), (4, 4)])
@pytest.mark.parametrize("npieces", [1, 2, 3, 7, 20, 50])
def test_slab_fanin_matches_brute_force(shape, ystag, xstag, px, py, npieces):
    var = Var("v", shape, 4, True, ystag, xstag)
    if npieces > math.prod(shape[:-1]):
        pytest.skip("pieces smaller than a row: the model bounds, not counts, them")
    assert slab_fanins(var, npieces, px, py) == brute_fanins(var, npieces, px, py)


@pytest.mark.parametrize("shape", [(35, 100, 120), (4, 33, 31), (57, 61)])
@pytest.mark.parametrize("max_elems", [1, 50, 999, 4000, 10 ** 9])
def test_slab_count_is_the_fewest_pieces_that_fit(shape, max_elems):
    n = slab_count(shape, max_elems)
    total = math.prod(shape)

    def largest(n):
        _, rows, unit = _split_depth(shape, n)
        return -(-rows // n) * unit

    assert largest(n) <= max_elems or n >= total
    assert n == 1 or largest(n - 1) > max_elems or n - 1 < -(-total // max_elems)


def test_dims_create_is_the_most_square_grid():
    assert dims_create(1) == (1, 1)
    assert dims_create(6) == (3, 2)
    assert dims_create(7) == (7, 1)
    assert dims_create(4608) == (72, 64)


def test_bench_default_fields_follow_the_c_table():
    """tessera-bench's default fields (schema_default.c) and the model's copy."""
    src = (ROOT / "apps" / "bench" / "schema_default.c").read_text()
    table = src[src.index("fields[] = {"):src.index("};", src.index("fields[] = {"))]
    found = re.findall(r'\{"(\w+)", TSR_(\w+), "([^"]*)"', table)
    want = [(n, t.lower(), tuple(d.split()[1:])) for n, t, d in found]
    assert want == [(n, t, d) for n, t, d in BENCH_DEFAULT]


def test_frame_bytes_of_the_default_fields():
    c = bench_case(20, 13, 3, steps=1, output_every=1)
    # U (3,13,21) V (3,14,20) W,PH,PHB (4,13,20) T,P,PB,QVAPOR (3,13,20) TSLB (4,13,20)
    # XLAT_U, XLONG_U (13,21), XLAT_V, XLONG_V (14,20), 17 more two-dimensional
    # fields, ZNU 3, ZNW 4, Times 19 chars, XTIME, ITIMESTEP
    floats = 3 * 13 * 21 + 3 * 14 * 20 + 3 * 4 * 13 * 20 + 4 * 3 * 13 * 20 + 4 * 13 * 20 \
        + 2 * 13 * 21 + 2 * 14 * 20 + 17 * 13 * 20 + 3 + 4 + 1 + 1
    assert c.frame_bytes() == 4 * floats + 19


def test_schema_read_is_bounded(tmp_path):
    """A schema is read with tessera-bench's size bound: /dev/zero (which
    never ends) is refused with a sentence naming it, and a small header
    still reads (issue 25)."""
    from tessera.model.case import cdl_defs
    with pytest.raises(ValueError, match=r"^/dev/zero: larger than the 64 MiB a schema may hold"):
        cdl_defs("/dev/zero")
    cdl = tmp_path / "s.cdl"
    cdl.write_text("netcdf s {\ndimensions:\n\tTime = UNLIMITED ;\n\tx = 4 ;\nvariables:\n"
                   "\tfloat T(Time, x) ;\n}\n")
    assert cdl_defs(str(cdl)) == ([("T", "float", ("x",))], {"Time": 0, "x": 4})
