"""`tessera join` keeps each variable's NetCDF-4 storage (join_storage.py).

First on pieces made here with netCDF4 (no MPI: quantization modes, explicit
and contiguous chunks, bit-exact values), then on tessera-bench's own split
output with `format=netcdf4:deflate=1`, against strategy=serial with the same
hints: the same filters and chunk shapes per variable and a size within 10 %
(before, the joined file was 4.6 times larger). The bench part is skipped when
tessera-bench ($TESSERA_BUILD_DIR, default <repo>/build) or mpiexec is missing,
or the library was built without NetCDF-4.
"""
import os
import shutil
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from tessera import join as tj
from tessera.bench.launch import BENCH_EXIT_NOTBUILT, mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")

NY, NX = 6, 11
# Two ranks split west_east at an odd column, so a tile's positions change
# parity in the joined frame (what makes re-grooming BitGroom values unsafe).
TILES = [(0, 5), (5, 6)]


def make_pieces(base, variables):
    """Split pieces as src/strategy/split.c writes them, with per-variable
    storage: variables = [(name, createVariable kwargs, global data)]."""
    for rank, (x0, nx) in enumerate(TILES):
        with netCDF4.Dataset(tj.piece_path(base, rank), "w", format="NETCDF4") as ds:
            ds.createDimension("Time", None)
            ds.createDimension("south_north", NY)
            ds.createDimension("west_east", nx)
            ds.createDimension("bottom_top", 3)
            for name, kw, data in variables:
                if data.ndim == 1:  # replicated, fixed: whole in every piece
                    v = ds.createVariable(name, data.dtype, ("bottom_top",), **kw)
                    v[:] = data
                    continue
                if kw.get("chunksizes") == "level":  # chunks=auto: one level of the tile
                    kw = dict(kw, chunksizes=(1, NY, nx))
                v = ds.createVariable(name, data.dtype, ("Time", "south_north", "west_east"),
                                      **kw)
                v.tessera_global_shape = np.array([NY, NX], "i4")
                v.tessera_tile_start = np.array([0, x0], "i4")
                v[:] = data[:, :, x0:x0 + nx]
            ds.tessera_split_rank = np.int32(rank)
            ds.tessera_split_nranks = np.int32(len(TILES))


def piece_values(base, name):
    """The variable as the pieces hold it (already quantized), reassembled."""
    parts = []
    for rank in range(len(TILES)):
        with netCDF4.Dataset(tj.piece_path(base, rank)) as ds:
            ds.set_auto_maskandscale(False)
            parts.append(ds[name][:])
    return np.concatenate(parts, axis=-1)


def test_storage_kept_per_variable(tmp_path, capsys):
    rng = np.random.default_rng(3)
    field = (rng.normal(size=(2, NY, NX)) * 280).astype("f4")
    level = {"chunksizes": "level"}
    variables = [
        ("GROOMED", dict(compression="zlib", complevel=2, shuffle=True,
                         significant_digits=3, quantize_mode="BitGroom", **level), field),
        ("ROUNDED", dict(compression="zlib", complevel=1, shuffle=True,
                         significant_digits=9, quantize_mode="BitRound", **level), field),
        ("GRANULAR", dict(compression="zlib", complevel=1, shuffle=False,
                          significant_digits=4, quantize_mode="GranularBitRound", **level),
         field),
        ("SMALLCHUNK", dict(compression="zlib", complevel=4, chunksizes=(1, 2, 3)), field),
        ("PLAIN", {}, field.astype("f8")),
        ("ZNU", dict(contiguous=True), np.linspace(1, 0, 3).astype("f4")),
    ]
    base = str(tmp_path / "pieces" / "wrfout")
    (tmp_path / "pieces").mkdir()
    make_pieces(base, variables)
    out = tmp_path / "joined.nc"
    assert tj.main(["-o", str(out), base]) == 0
    line = capsys.readouterr().out
    assert "storage kept: " in line and "deflate=2:shuffle:quantize=bitgroom:3 (1 variable)" in line
    assert "contiguous (1 variable)" in line, line

    with netCDF4.Dataset(out) as ds:
        ds.set_auto_maskandscale(False)
        v = {name: ds[name] for name, _, _ in variables}
        assert v["GROOMED"].quantization() == (3, "BitGroom")
        assert v["ROUNDED"].quantization() == (9, "BitRound")
        assert v["GRANULAR"].quantization() == (4, "GranularBitRound")
        assert v["PLAIN"].quantization() is None
        f = v["GROOMED"].filters()
        assert f["zlib"] and f["complevel"] == 2 and f["shuffle"]
        assert not v["GRANULAR"].filters()["shuffle"]
        assert v["SMALLCHUNK"].filters()["complevel"] == 4
        # A chunk spanning each tile's west_east spans the joined dimension;
        # an explicit shorter one stays as it was.
        assert v["GROOMED"].chunking() == [1, NY, NX]
        assert v["SMALLCHUNK"].chunking() == [1, 2, 3]
        assert v["ZNU"].chunking() == "contiguous"
        assert not v["PLAIN"].filters()["zlib"]
        # Bit for bit the pieces' values: quantized once, when they were written.
        for name, _, data in variables:
            want = piece_values(base, name) if data.ndim > 1 else data
            assert v[name][:].tobytes() == np.asarray(want).tobytes(), name


def test_classic_pieces_say_nothing_of_storage(tmp_path, capsys):
    base = str(tmp_path / "pieces" / "f")
    (tmp_path / "pieces").mkdir()
    for rank in range(2):
        with netCDF4.Dataset(tj.piece_path(base, rank), "w",
                             format="NETCDF3_64BIT_OFFSET") as ds:
            ds.createDimension("x", 2)
            v = ds.createVariable("a", "f4", ("x",))
            v.tessera_global_shape = np.array([4], "i4")
            v.tessera_tile_start = np.array([2 * rank], "i4")
            v[:] = [rank, rank]
            ds.tessera_split_rank = np.int32(rank)
            ds.tessera_split_nranks = np.int32(2)
    assert tj.main(["-o", str(tmp_path / "j.nc"), base]) == 0
    line = capsys.readouterr().out
    assert "NETCDF3_64BIT_OFFSET)" in line and "storage" not in line, line


def run_bench(out, hints):
    # Hints come from --hints alone: TESSERA_HINTS would override them.
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_HINTS"}
    cmd = mpiexec_command(MPIEXEC, 2) + [
        str(BENCH), "--nx", "32", "--ny", "24", "--nz", "4", "--steps", "2",
        "--output-every", "2", "--quiet", "--out", str(out), "--hints", hints]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    log = p.stdout + p.stderr
    if p.returncode == BENCH_EXIT_NOTBUILT or "TSR_ENOTBUILT" in log:
        pytest.skip(f"NetCDF-4 not built: {log.strip()[-200:]}")
    assert p.returncode == 0, f"{' '.join(cmd)}\n{log}"
    return sorted(out.iterdir())


@pytest.mark.skipif(not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
                    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")
def test_joined_split_matches_serial(tmp_path, capsys):
    hints = "format=netcdf4:deflate=1"
    serial = run_bench(tmp_path / "serial", f"strategy=serial:{hints}")
    pieces = run_bench(tmp_path / "split", f"strategy=split:{hints}")
    assert tj.main(["--out", str(tmp_path / "joined")] + [str(p) for p in pieces]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(serial) and all("storage kept: deflate=1:shuffle" in ln
                                             for ln in lines), lines
    for ref in serial:
        got = tmp_path / "joined" / ref.name
        with netCDF4.Dataset(ref) as a, netCDF4.Dataset(got) as b:
            assert list(a.variables) == list(b.variables)
            for name, va in a.variables.items():
                vb = b.variables[name]
                assert vb.filters() == va.filters(), name
                assert vb.chunking() == va.chunking(), name
                assert vb.quantization() == va.quantization(), name
        ratio = got.stat().st_size / ref.stat().st_size
        assert 0.9 <= ratio <= 1.1, f"{got}: {got.stat().st_size} bytes, serial's " \
                                    f"{ref.stat().st_size} (ratio {ratio:.2f})"
