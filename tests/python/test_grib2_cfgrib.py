"""xarray + cfgrib read the GRIB2 files Tessera writes, and see the values of
the same run written as classic NetCDF, within the packing's precision.

The benchmark runs twice with the same decomposition and steps (so the same
fields): once `format=cdf2`, once `format=grib2`, through a strategy that
writes GRIB2 (serial; aggregate with one writer and with two, which
append their whole-level messages at agreed offsets). Every mapped WRF field
(the backend's built-in table) must appear under its GRIB2 short name with
the NetCDF shape, and each horizontal level must agree (WRF's perturbations
as the full fields: pt = T + 300, pres = P + PB, z = PH + PHB) within
(max - min) / (2^grib_bits - 1) of that level, as docs/hints.md promises
for simple packing. The bench is found under $TESSERA_BUILD_DIR (default
<repo>/build); the module is skipped when it is not built.
"""
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
cfgrib = pytest.importorskip("cfgrib")
netCDF4 = pytest.importorskip("netCDF4")

from tessera.bench.launch import mpiexec_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")
GRIB_BITS = 16

pytestmark = pytest.mark.skipif(
    not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")

# cfgrib short name -> WRF variable (the grib2 backend's built-in table).
FIELDS = {
    "t2m": "T2", "u10": "U10", "v10": "V10", "sp": "PSFC", "skt": "TSK", "orog": "HGT",
    "blh": "PBLH", "u": "U", "v": "V", "pt": "T", "pres": "P", "z": "PH", "wz": "W",
}
# What the messages hold of WRF's perturbation fields (docs/grib2.md).
def _f64(nc, name):
    return np.asarray(nc[name][0], dtype=np.float64)


FULL = {"T": lambda nc: _f64(nc, "T") + 300.0, "P": lambda nc: _f64(nc, "P") + _f64(nc, "PB"),
        "PH": lambda nc: _f64(nc, "PH") + _f64(nc, "PHB")}


def run_bench(out, hints):
    cmd = mpiexec_command(MPIEXEC, 2) + [str(BENCH), "--nx", "32", "--ny", "24", "--nz", "4",
                                "--steps", "2", "--output-every", "2", "--nocolons",
                                "--out", str(out), "--hints", hints, "--quiet"]
    subprocess.run(cmd, check=True, timeout=240)
    files = sorted(out.iterdir())
    assert [f.name for f in files] == ["wrfout_d01_2026-01-01_00_00_00",
                                       "wrfout_d01_2026-01-01_00_02_00"]
    return files


def grib_fields(path):
    """Every data variable cfgrib finds in the file, by short name."""
    found = {}
    for ds in cfgrib.open_datasets(str(path), backend_kwargs={"indexpath": ""}):
        for name in ds.data_vars:
            if name in FIELDS:
                assert name not in found, f"{name} appears twice in {path}"
                found[name] = ds[name].values.astype(np.float64)
    return found


@pytest.mark.parametrize("strategy", ["serial", "aggregate:aggregators=1",
                                      "aggregate:aggregators=2"])
def test_cfgrib_reads_what_netcdf_holds(tmp_path, strategy):
    ref = run_bench(tmp_path / "nc", f"strategy={strategy}:format=cdf2")
    grb = run_bench(tmp_path / "grib", f"strategy={strategy}:format=grib2:grib_bits={GRIB_BITS}")
    for nc_path, grib_path in zip(ref, grb):
        got = grib_fields(grib_path)
        assert sorted(got) == sorted(FIELDS), f"{grib_path}: fields {sorted(got)}"
        with netCDF4.Dataset(nc_path) as nc:
            for short, wrf in FIELDS.items():
                want = FULL.get(wrf, lambda nc, wrf=wrf: _f64(nc, wrf))(nc)
                have = got[short]
                assert have.shape == want.shape, f"{wrf}: {have.shape} != {want.shape}"
                levels = want.reshape(-1, *want.shape[-2:])
                for k, (w, h) in enumerate(zip(levels, have.reshape(levels.shape))):
                    # The packing's step, plus float32 rounding of the values.
                    tol = (w.max() - w.min()) / (2 ** GRIB_BITS - 1)
                    tol += np.finfo(np.float32).eps * np.abs(w).max()
                    err = np.abs(h - w).max()
                    assert err <= tol, f"{wrf} level {k} in {grib_path.name}: {err} > {tol}"
