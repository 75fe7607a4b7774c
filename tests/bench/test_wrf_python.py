"""WRF's own tools on the bench's files: wrf-python's getvar computes slp, z,
ua, tc and times on history files of the real WRF schema, written by several
strategies, and gets the same values from each; xarray decodes XTIME to the
simulation's dates.

Runs tessera-bench without --check, so the files hold the model's physical
state (a standard atmosphere). wrf-python comes from
tests/bench/install_wrf_python.sh (PyPI has only its source distribution);
without it the wrf-python checks are skipped, the xarray check still runs.
"""
import os
import shutil
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from tessera.bench.launch import BENCH_EXIT_NOTBUILT, mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")
SCHEMA = ROOT / "apps" / "bench" / "schemas" / "wrfout_d01.cdl"

pytestmark = pytest.mark.skipif(
    not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")

# wrf-python 1.3.4.1, the last release on PyPI, predates NumPy 2 (it uses the
# removed alias np.float_) and netCDF4 1.7.3 (whose Dataset looks iterable,
# wrf-python issue #290); both are bridged here rather than pinning old
# versions of NumPy and netCDF4 for the whole environment.
if not hasattr(np, "float_"):
    np.float_ = np.float64
try:
    import wrf
except ImportError:  # pragma: no cover - depends on the environment
    wrf = None


class WrfFile:
    """A netCDF4.Dataset that wrf-python 1.3.4.1 treats as one file."""

    def __init__(self, ds):
        self._ds = ds

    def __getattr__(self, name):
        return getattr(self._ds, name)


STRATEGIES = {
    "serial": "strategy=serial",
    "aggregate": "strategy=aggregate:aggregators=2",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",  # 2 model ranks + 1 server
}
CASE = ["--schema", str(SCHEMA), "--nx", "30", "--ny", "24", "--nz", "10", "--steps", "4",
        "--output-every", "2", "--dt", "60", "--dx", "4000", "--dy", "4000",
        "--start", "2026-06-22_00:00:00", "--quiet"]
NAMES = ["wrfout_d01_2026-06-22_00:00:00", "wrfout_d01_2026-06-22_00:02:00",
         "wrfout_d01_2026-06-22_00:04:00"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """strategy -> its output directory (strategies not built are left out)."""
    top = tmp_path_factory.mktemp("wrfpy")
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_HINTS"}
    dirs = {}
    for name, hints in STRATEGIES.items():
        out = top / name
        cmd = mpiexec_command(MPIEXEC, 3) + [str(BENCH)] + CASE + ["--out", str(out),
                                                                   "--hints", hints]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
        if r.returncode == BENCH_EXIT_NOTBUILT:
            continue
        assert r.returncode == 0, f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
        assert sorted(p.name for p in out.glob("wrfout_d01_*")) == NAMES
        dirs[name] = out
    assert "serial" in dirs
    return dirs


def test_wrf_attributes(outputs):
    with netCDF4.Dataset(outputs["serial"] / NAMES[1]) as ds:
        assert ds.dimensions["DateStrLen"].size == 19
        assert ds.getncattr("DX") == 4000.0 and ds.getncattr("DY") == 4000.0
        assert ds.getncattr("DT") == 60.0
        assert ds.getncattr("START_DATE") == "2026-06-22_00:00:00"
        assert ds.getncattr("SIMULATION_START_DATE") == "2026-06-22_00:00:00"
        assert ds.variables["XTIME"].units == "minutes since 2026-06-22 00:00:00"
        assert ds.variables["XTIME"][:].tolist() == [2.0]
        assert ds.variables["ITIMESTEP"][:].tolist() == [2]
        assert netCDF4.chartostring(ds.variables["Times"][:]).tolist() == ["2026-06-22_00:02:00"]
        # A standard atmosphere: pressure falls and geopotential rises with height.
        p = ds.variables["P"][0] + ds.variables["PB"][0]
        ph = ds.variables["PH"][0] + ds.variables["PHB"][0]
        assert np.all(np.diff(p, axis=0) < 0)
        assert np.all(np.diff(ph, axis=0) > 0)
        theta = ds.variables["T"][0] + 300.0
        temp = theta * (p / 1e5) ** (287.0 / 1004.5)
        assert 200.0 < temp.min() and temp.max() < 310.0


def test_xarray_decodes_times_to_the_simulation(outputs):
    xr = pytest.importorskip("xarray")
    for i, name in enumerate(NAMES):
        with xr.open_dataset(outputs["serial"] / name) as ds:
            expect = np.datetime64("2026-06-22T00:00:00") + np.timedelta64(2 * i, "m")
            assert ds["XTIME"].dtype.kind == "M", "XTIME not decoded to dates"
            assert ds["XTIME"].values.tolist() == [expect.astype("datetime64[ns]").astype(int)]


@pytest.mark.skipif(wrf is None, reason="wrf-python is not installed: run "
                    "tests/bench/install_wrf_python.sh with the environment's python (PyPI "
                    "has only its source distribution, which builds with numpy.distutils)")
def test_wrf_python_getvar_agrees_across_strategies(outputs):
    results = {}
    for name, out in outputs.items():
        values = {}
        for i, fname in enumerate(NAMES):
            with netCDF4.Dataset(out / fname) as ds:
                f = WrfFile(ds)
                for var in ("slp", "z", "ua", "tc"):
                    values[var, i] = np.asarray(wrf.getvar(f, var, meta=False))
                values["times", i] = np.asarray(wrf.getvar(f, "times", meta=False))
        results[name] = values
    ref = results["serial"]
    for i in range(len(NAMES)):
        expect = np.datetime64("2026-06-22T00:00:00") + np.timedelta64(2 * i, "m")
        assert ref["times", i] == expect
        slp, z, ua, tc = (ref[v, i] for v in ("slp", "z", "ua", "tc"))
        assert slp.shape == (24, 30) and z.shape == ua.shape == tc.shape == (10, 24, 30)
        assert np.all((slp > 1000.0) & (slp < 1030.0)), (slp.min(), slp.max())
        assert np.all(np.diff(z, axis=0) > 0)
        assert 900.0 < z.min() and z.max() < 20000.0
        assert np.all((ua > 0.0) & (ua < 20.0))
        assert np.all((tc > -80.0) & (tc < 40.0))
    # Every strategy wrote the same model state, so WRF's diagnostics agree exactly.
    for name, values in results.items():
        for key, v in values.items():
            assert np.array_equal(v, ref[key]), f"{name}: {key} differs from serial"
