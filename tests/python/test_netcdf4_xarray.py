"""xarray reads the netCDF-4 files Tessera writes: compressed in parallel
(aggregate over 2 ranks: deflate, shuffle, 1x4x8 chunks) and quantized
(direct), with every NetCDF type, and sees the values the C test wrote, the
dtypes and the storage (chunks, zlib, shuffle) in each variable's encoding.

The files come from tests/formats/test_formats (the C test of every type
and strategy) under $TESSERA_BUILD_DIR (default <repo>/build); the module is
skipped when it is not built.
"""
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

from tessera.bench.launch import mpiexec_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
PROG = BUILD / "tests" / "formats" / "test_formats"
MPIEXEC = shutil.which("mpiexec")
NP = 2
NZ, NY, NX, NT = 3, 9, 10, 2

pytestmark = pytest.mark.skipif(
    not (PROG.is_file() and os.access(PROG, os.X_OK)) or MPIEXEC is None,
    reason=f"test_formats not built ({PROG}) or no mpiexec")

# Variable name -> (numpy dtype, index in the test's type table).
TYPES = {
    "v_byte": ("int8", 0), "v_char": ("S1", 1), "v_short": ("int16", 2),
    "v_int": ("int32", 3), "v_float": ("float32", 4), "v_double": ("float64", 5),
    "v_ubyte": ("uint8", 6), "v_ushort": ("uint16", 7), "v_uint": ("uint32", 8),
    "v_int64": ("int64", 9), "v_uint64": ("uint64", 10),
}


def check_value(v, t, k, j, i):
    """tu_value of tests/c/test_util.h."""
    return (i + 7 * j + 131 * k + 8191 * t + 524287 * v) % 16777216


def expected(name, v):
    """The test's value() for the 3-D variable over the whole grid."""
    t, k, j, i = np.meshgrid(np.arange(NT), np.arange(NZ), np.arange(NY), np.arange(NX),
                             indexing="ij")
    c = check_value(v, t, k, j, i).astype(np.int64)
    if name == "v_int":
        return c - 8000000
    if name == "v_float":
        return (c * 0.25).astype(np.float32)
    if name == "v_double":
        return c + 0.125
    if name == "v_int64":
        return -(c * 1000003 + 5000000000)
    if name == "v_uint64":
        return np.uint64(10000000000000000000) + c.astype(np.uint64)
    if name == "v_short":
        return c % 65521 - 32760
    return None


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("nc4")
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_HINTS"}
    paths = {}
    for scenario in ("nc4z-aggregate", "nc4q-direct"):
        cmd = mpiexec_command(MPIEXEC, NP) + [str(PROG), str(out), scenario]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}{p.stderr}"
        paths[scenario] = out / f"fmt_{scenario}_np{NP}.nc"
    return paths


def test_types_and_values(files):
    with xr.open_dataset(files["nc4z-aggregate"], mask_and_scale=False) as ds:
        for name, (dtype, v) in TYPES.items():
            assert name in ds, name
            da = ds[name]
            assert da.dims == ("Time", "z", "y", "x")
            assert da.shape == (NT, NZ, NY, NX)
            assert da.dtype == np.dtype(dtype), (name, da.dtype)
            want = expected(name, v)
            if want is not None:
                np.testing.assert_array_equal(da.values, want.astype(dtype), err_msg=name)
        assert ds["v_uint"].values.min() >= 3000000000  # above int32: really unsigned


def test_storage_in_encoding(files):
    with xr.open_dataset(files["nc4z-aggregate"]) as ds:
        enc = ds["v_float"].encoding
        assert enc["chunksizes"] == (1, 1, 4, 8)
        assert enc["zlib"] is True and enc["complevel"] == 1
        assert enc["shuffle"] is True
        assert ds["v_double_2d"].encoding["chunksizes"] == (4, 8)


def test_quantized_within_kept_bits(files):
    with xr.open_dataset(files["nc4q-direct"]) as ds:
        da = ds["v_double"]
        assert da.attrs.get("_QuantizeBitRoundNumberOfSignificantBits") == 12
        want = expected("v_double", 5)
        got = da.values
        assert np.all(np.abs(got - want) <= np.abs(want) * 2.0 ** -12)
        assert not np.array_equal(got, want)  # quantization really happened
        np.testing.assert_array_equal(ds["v_int"].values, expected("v_int", 3))
