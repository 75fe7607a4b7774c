"""GRIB2 metadata a GRIB reader relies on (docs/grib2.md): every message's
time is its output's, its grid is WRF's projection, and WRF's perturbation
fields arrive as the full fields.

- time: a run of two files of two frames each, written as NetCDF and as
  GRIB2 (serial, aggregate with 2 writers, I/O servers with 2 tasks: the
  last two see Times on one writer only and share it); cfgrib's valid_time
  of every field equals the NetCDF file's Times, frame by frame, the
  reference time is SIMULATION_START_DATE, and the three GRIB2 files are
  byte for byte the same;
- grid: the bench replays WRF's schema with MAP_PROJ 1, 2, 3 and 6 (its
  XLAT/XLONG computed from the projection, as WRF's are); cfgrib's latitudes
  and longitudes of mass fields (T2) and of the staggered U and V lie within
  one grid spacing of the file's XLAT/XLONG, XLAT_U/XLONG_U, XLAT_V/XLONG_V;
- values: pt = T + 300, pres = P + PB, z = PH + PHB within the packing's
  precision (test_grib2_cfgrib checks the same for every field).
"""
import os
import re
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
SCHEMA = ROOT / "apps" / "bench" / "schemas" / "wrfout_d01.cdl"
MPIEXEC = shutil.which("mpiexec")
DX = 12000.0
START = "2026-01-01_00:00:00"

pytestmark = pytest.mark.skipif(
    not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")


def run_bench(out, hints, nranks=2, schema=None, extra=()):
    cmd = mpiexec_command(MPIEXEC, nranks) + [
        str(BENCH), "--nx", "32", "--ny", "24", "--nz", "3", "--dx", str(DX), "--dy", str(DX),
        "--nocolons", "--out", str(out), "--hints", hints, "--quiet", *extra]
    if schema:
        cmd += ["--schema", str(schema)]
    subprocess.run(cmd, check=True, timeout=240)
    return sorted(out.iterdir())


def datasets(path):
    return cfgrib.open_datasets(str(path), backend_kwargs={"indexpath": ""})


def field(path, short):
    found = [ds for ds in datasets(path) if short in ds.data_vars]
    assert len(found) == 1, f"{short} in {len(found)} datasets of {path}"
    return found[0][short]


def wrf_times(nc):
    return [np.datetime64(b"".join(t).decode().replace("_", "T")) for t in nc["Times"][:]]


# --- time ------------------------------------------------------------------

TIME_RUN = ["--steps", "6", "--output-every", "2", "--frames-per-file", "2"]


@pytest.fixture(scope="module")
def time_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("time")
    runs = {"nc": run_bench(base / "nc", "strategy=serial:format=cdf2", extra=TIME_RUN)}
    for name, hints, n in [("serial", "strategy=serial", 2),
                           ("aggregate", "strategy=aggregate:aggregators=2", 2),
                           ("servers", "strategy=servers:io_groups=1:io_tasks=2", 4)]:
        runs[name] = run_bench(base / name, hints + ":format=grib2", n, extra=TIME_RUN)
    return runs


def test_valid_time_is_the_netcdf_times(time_runs):
    assert len(time_runs["nc"]) == 2
    for nc_path, grib_path in zip(time_runs["nc"], time_runs["serial"]):
        with netCDF4.Dataset(nc_path) as nc:
            want = wrf_times(nc)
        assert len(want) == 2
        for short in ("t2m", "pt", "u", "sp"):
            da = field(grib_path, short)
            got = np.atleast_1d(da["valid_time"].values).astype("datetime64[s]")
            assert list(got) == want, f"{short} in {grib_path.name}: {got} != {want}"
            assert da["time"].values.astype("datetime64[s]") == np.datetime64(
                START.replace("_", "T")), "reference time is not SIMULATION_START_DATE"


def test_writers_agree_on_times(time_runs):
    """Several writers (one sees Times) give the single writer's bytes."""
    for name in ("aggregate", "servers"):
        for ref, other in zip(time_runs["serial"], time_runs[name]):
            assert ref.name == other.name
            assert ref.read_bytes() == other.read_bytes(), f"{name}: {other.name} differs"


# --- grid ------------------------------------------------------------------

# MAP_PROJ -> (gridType, attributes), domains in each projection's home.
PROJECTIONS = {
    1: ("lambert", {"TRUELAT1": 30.0, "TRUELAT2": 60.0, "STAND_LON": -98.0,
                    "CEN_LAT": 40.0, "CEN_LON": -98.0}),
    2: ("polar_stereographic", {"TRUELAT1": 60.0, "TRUELAT2": 60.0, "STAND_LON": -150.0,
                                "CEN_LAT": 70.0, "CEN_LON": -140.0}),
    3: ("mercator", {"TRUELAT1": 20.0, "TRUELAT2": 0.0, "STAND_LON": -60.0,
                     "CEN_LAT": 15.0, "CEN_LON": -60.0}),
    6: ("regular_ll", {"TRUELAT1": 0.0, "TRUELAT2": 0.0, "STAND_LON": 30.0,
                       "CEN_LAT": 10.0, "CEN_LON": 30.0}),
}


def schema_with(tmp_path, proj):
    """WRF's schema with MAP_PROJ and its attributes set to @p proj."""
    text = SCHEMA.read_text()
    atts = dict(PROJECTIONS[proj][1], MOAD_CEN_LAT=PROJECTIONS[proj][1]["CEN_LAT"])
    text, n = re.subn(r"(\t\t:MAP_PROJ = )\d+ ;", rf"\g<1>{proj} ;", text)
    assert n == 1
    for name, value in atts.items():
        text, n = re.subn(rf"(\t\t:{name} = )[-0-9.e]+f ;", rf"\g<1>{value}f ;", text)
        assert n == 1, name
    path = tmp_path / f"wrfout_proj{proj}.cdl"
    path.write_text(text)
    return path


def assert_near(lat, lon, xlat, xlon, what):
    """Within one grid spacing (DX metres) of WRF's points."""
    if lat.ndim == 1 and lat.size == xlat.size:  # cfgrib's "values" (Mercator): rows S to N
        lat, lon = lat.reshape(xlat.shape), lon.reshape(xlat.shape)
    elif lat.ndim == 1:  # regular_ll: distinct latitudes and longitudes
        lat, lon = np.broadcast_arrays(lat[:, None], lon[None, :])
    assert lat.shape == xlat.shape, f"{what}: {lat.shape} != {xlat.shape}"
    dlon = (lon - xlon + 180.0) % 360.0 - 180.0
    metres = 111195.0 * np.hypot(lat - xlat, dlon * np.cos(np.radians(xlat)))
    assert metres.max() < DX, f"{what}: {metres.max():.0f} m from XLAT/XLONG"
    return metres.max()


@pytest.mark.parametrize("proj", sorted(PROJECTIONS))
def test_grid_matches_xlat_xlong(tmp_path, proj):
    schema = schema_with(tmp_path, proj)
    extra = ["--steps", "0"]
    nc = run_bench(tmp_path / "nc", "strategy=serial:format=cdf2", schema=schema, extra=extra)[0]
    grb = run_bench(tmp_path / "grib", "strategy=serial:format=grib2", schema=schema,
                    extra=extra)[0]
    grid_type = PROJECTIONS[proj][0]
    with netCDF4.Dataset(nc) as f:
        assert int(f.MAP_PROJ) == proj
        for short, suffix in (("t2m", ""), ("u", "_U"), ("v", "_V")):
            da = field(grb, short)
            assert da.attrs["GRIB_gridType"] == grid_type
            xlat = np.asarray(f["XLAT" + suffix][0], dtype=np.float64)
            xlon = np.asarray(f["XLONG" + suffix][0], dtype=np.float64)
            worst = assert_near(da["latitude"].values, da["longitude"].values, xlat, xlon,
                                f"MAP_PROJ={proj} {short}")
            # Far closer than the promise: both follow WRF's formulas.
            assert worst < 0.05 * DX, f"MAP_PROJ={proj} {short}: {worst:.0f} m"


# --- values ----------------------------------------------------------------

def test_perturbations_become_full_fields(tmp_path):
    extra = ["--steps", "0"]
    nc = run_bench(tmp_path / "nc", "strategy=serial:format=cdf2", extra=extra)[0]
    grb = run_bench(tmp_path / "grib", "strategy=serial:format=grib2:grib_bits=16",
                    extra=extra)[0]
    with netCDF4.Dataset(nc) as f:
        var = {n: np.asarray(f[n][0], dtype=np.float64) for n in ("T", "P", "PB", "PH", "PHB")}
    for short, want in (("pt", var["T"] + 300.0), ("pres", var["P"] + var["PB"]),
                        ("z", var["PH"] + var["PHB"])):
        have = field(grb, short).values.astype(np.float64)
        assert have.shape == want.shape, short
        for k, (w, h) in enumerate(zip(want, have)):
            tol = (w.max() - w.min()) / (2 ** 16 - 1) + np.finfo(np.float32).eps * np.abs(w).max()
            assert np.abs(h - w).max() <= tol, f"{short} level {k}"
