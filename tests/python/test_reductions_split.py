"""reduce= with strategy=split (docs/reductions.md, "Split: a derived file per rank").

- Every rank writes its own derived file of its own tile, named as split
  names its history files (`wrfxtrm_d01_<date>.<rank as 4 digits>`), laid
  out as split lays out a piece (tile extents, tessera_global_shape and
  tessera_tile_start, tessera_split_rank and tessera_split_nranks).
- `tessera join` turns the pieces of 2 and of 4 ranks into files equal to
  the serial strategy's derived files: the same dimensions, variables,
  attributes and values, bit for bit (every statistic, std included: each
  element is folded by the rank that owns it, in frame order, whatever the
  strategy).
- A period left incomplete at the end of a job continues after a restart
  on every rank: 6 outputs in one job and 3 + restart + 3 give the same
  pieces, byte for byte (cmp), at 2 and 4 ranks.
"""
import filecmp
import subprocess
import sys

import netCDF4
import numpy as np
import pytest

from bench_runs import clean_env, needs_bench, run_bench

pytestmark = needs_bench

# 6 history outputs (steps 0..5), one frame per file: two periods of 3.
CASE = ["--nx", "24", "--ny", "18", "--nz", "3", "--output-every", "1", "--quiet"]
SPEC = "T2/max@3+T2/min@3+T2/sum@3+T2/count@3+T/mean@3+T/std@3+U/max@3"
DERIVED = ["wrfxtrm_d01_2026-01-01_00:00:00", "wrfxtrm_d01_2026-01-01_00:03:00"]


def bench(np_, out, hints, spec, extra=()):
    out.mkdir(parents=True, exist_ok=True)
    p = run_bench(np_, CASE + list(extra) + ["--out", out, "--hints", hints, "--reduce", spec])
    assert p.returncode == 0, f"{p.command}\n{p.stdout}{p.stderr}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    top = tmp_path_factory.mktemp("reduce-split")
    bench(1, top / "serial-1", "strategy=serial", SPEC, ["--steps", "5"])
    for n in (2, 4):
        bench(n, top / f"split-{n}", "strategy=split", SPEC, ["--steps", "5"])
    return top


@pytest.mark.parametrize("nranks", [2, 4])
def test_a_derived_piece_per_rank(runs, nranks):
    out = runs / f"split-{nranks}"
    derived = sorted(p.name for p in out.glob("wrfxtrm_*"))
    assert derived == [f"{d}.{r:04d}" for d in DERIVED for r in range(nranks)]
    starts = set()
    for r in range(nranks):
        with netCDF4.Dataset(out / f"{DERIVED[0]}.{r:04d}") as ds:
            assert int(ds.tessera_split_rank) == r and int(ds.tessera_split_nranks) == nranks
            t2 = ds["T2MAX"]
            assert list(t2.tessera_global_shape) == [18, 24]
            start = tuple(int(x) for x in t2.tessera_tile_start)
            # The piece holds its rank's tile of T2 in the history piece, no more.
            with netCDF4.Dataset(out / f"wrfout_d01_2026-01-01_00:00:00.{r:04d}") as hist:
                assert tuple(int(x) for x in hist["T2"].tessera_tile_start) == start
                assert t2.shape == hist["T2"].shape
            starts.add(start)
    assert len(starts) == nranks


def assert_same_file(a, b):
    """Dimensions, variables, attributes (in order) and values, bit for bit."""
    with netCDF4.Dataset(a) as x, netCDF4.Dataset(b) as y:
        for ds in (x, y):
            ds.set_auto_maskandscale(False)
            ds.set_auto_chartostring(False)
        assert [(d.name, len(d), d.isunlimited()) for d in x.dimensions.values()] == \
               [(d.name, len(d), d.isunlimited()) for d in y.dimensions.values()]
        assert {k: x.getncattr(k) for k in x.ncattrs()} == {k: y.getncattr(k) for k in y.ncattrs()}
        assert list(x.variables) == list(y.variables)
        for name, v in x.variables.items():
            w = y.variables[name]
            assert (v.dtype, v.dimensions) == (w.dtype, w.dimensions), name
            assert v.ncattrs() == w.ncattrs(), name
            for k in v.ncattrs():
                np.testing.assert_array_equal(v.getncattr(k), w.getncattr(k), err_msg=f"{name}:{k}")
            assert v[...].tobytes() == w[...].tobytes(), f"{a} {name}: the values differ"


@pytest.mark.parametrize("nranks", [2, 4])
def test_joined_pieces_equal_the_serial_derived_files(runs, nranks, tmp_path):
    pieces = [str(runs / f"split-{nranks}" / f"{d}.0000") for d in DERIVED]
    p = subprocess.run([sys.executable, "-m", "tessera", "join", "--out", str(tmp_path), *pieces],
                       capture_output=True, text=True, timeout=120, env=clean_env())
    assert p.returncode == 0, p.stdout + p.stderr
    for d in DERIVED:
        assert_same_file(runs / "serial-1" / d, tmp_path / d)


RESTART_SPEC = "T2/max@6+T2/min@6+T/mean@6+T/std@6+U/sum@6+T2/count@6"


@pytest.mark.parametrize("nranks", [2, 4])
def test_restart_continues_every_ranks_period(tmp_path, nranks):
    """3 outputs, restart, 3 more == 6 outputs in one job, piece for piece."""
    one, two = tmp_path / "one", tmp_path / "two"
    bench(nranks, one, "strategy=split", RESTART_SPEC, ["--steps", "5"])
    bench(nranks, two, "strategy=split", RESTART_SPEC, ["--steps", "2", "--restart-every", "2"])
    # The incomplete period: one side file with every rank's accumulators, no piece yet.
    assert [p.name for p in two.glob("wrfxtrm_*")] == [f"{DERIVED[0]}.tessera-partial"]
    rst = two / "wrfrst_d01_2026-01-01_00:02:00"
    assert rst.is_file()
    bench(nranks, two, "strategy=split", RESTART_SPEC, ["--steps", "5", "--restart", str(rst)])
    a = sorted(p.name for p in one.glob("wrfxtrm_*"))
    assert a == [f"{DERIVED[0]}.{r:04d}" for r in range(nranks)]
    assert sorted(p.name for p in two.glob("wrfxtrm_*")) == a  # the side file is done with
    for name in a:
        assert filecmp.cmp(one / name, two / name, shallow=False), f"{name} differs after a restart"
