"""CDO and NCO, the command-line tools WRF users run on wrfout files, read the
bench's history, restart and input files (the real WRF schema, physical values,
written by several strategies) and agree with the exact values netCDF4 reads:
the dates CDO decodes from XTIME are the files' Times (those xarray decodes,
tests/bench/test_wrf_python.py), the values `cdo outputf` and `ncks` print are
the stored float32 values bit for bit, the extremes of `cdo fldmin/fldmax` and
`ncwa -y min/max` are exact, and the time means of `cdo timmean` and `ncra`
match NumPy's to rounding. Every strategy's files give the tools the same
answers.

The tools come from Debian's cdo and nco packages (scripts/install-deps.sh);
a test whose tool is missing is skipped, naming it.
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

# serial and servers write with NetCDF (one writer, a server), direct and
# aggregate with PnetCDF (all ranks, two aggregators): four writers of the
# same bytes. split's pieces are not WRF files until joined (tests/python/test_join.py).
STRATEGIES = {
    "serial": "strategy=serial",
    "direct": "strategy=direct",
    "aggregate": "strategy=aggregate:aggregators=2",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",
}
NX, NY, NZ = 30, 24, 10
CASE = ["--schema", str(SCHEMA), "--nx", str(NX), "--ny", str(NY), "--nz", str(NZ),
        "--steps", "4", "--output-every", "2", "--restart-every", "2", "--write-input",
        "--dt", "60", "--start", "2026-06-22_00:00:00", "--quiet"]
DATES = ["2026-06-22_00:00:00", "2026-06-22_00:02:00", "2026-06-22_00:04:00"]
# WRF's own names, colons included: both tools take them as plain paths.
HISTORY = [f"wrfout_d01_{d}" for d in DATES]
RESTART = "wrfrst_d01_2026-06-22_00:02:00"
INPUT = "wrfinput_d01"
# A surface field, a mass-point 3-D field and a staggered one (31 x 24 points).
FIELDS = ["T2", "PSFC", "T", "U"]


def tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian package "
                    f"{'cdo' if name == 'cdo' else 'nco'}; scripts/install-deps.sh)")
    return path


def run(*cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


def cdo(*args):
    # -s: no progress; -w: no warnings. On real wrfout files CDO warns about
    # XLAT/XLONG carrying a Time dimension and skips the char Times: WRF's
    # layout, which these files reproduce.
    return run(tool("cdo"), "-s", "-w", *args)


def numbers(text, dtype=np.float32):
    """The values a tool printed, one a line. Nine significant digits (%.9g)
    name a float32 exactly: parsed back to float32 they are the stored bits."""
    return np.array([float(x) for x in text.split()]).astype(dtype)


def stored(path, var):
    """The variable's values as netCDF4 reads them (frame 0), float32."""
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_mask(False)
        return np.asarray(ds.variables[var][0])


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """strategy -> its output directory (strategies not built are left out)."""
    top = tmp_path_factory.mktemp("cdonco")
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
        dirs[name] = out
    assert "serial" in dirs
    return dirs


def files(out):
    return [out / f for f in HISTORY + [RESTART, INPUT]]


def test_cdo_decodes_the_dates(outputs):
    # The input file is the simulation start, the restart file its step.
    dates = dict(zip(HISTORY, DATES), **{RESTART: DATES[1], INPUT: DATES[0]})
    for out in outputs.values():
        for path in files(out):
            with netCDF4.Dataset(path) as ds:
                times = netCDF4.chartostring(ds.variables["Times"][:]).tolist()
            assert times == [dates[path.name]]
            want = dates[path.name].replace("_", "T")
            assert cdo("showtimestamp", path).split() == [want], path.name


def test_cdo_values_are_the_stored_values(outputs):
    printed = {}
    for name, out in outputs.items():
        for path in files(out):
            with netCDF4.Dataset(path) as ds:
                order = [v for v in ds.variables if v in FIELDS]
            # outputf takes one horizontal grid a call (U is staggered) and
            # prints the variables in file order, each level by level and each
            # level row by row: C order.
            for grid in (["T2", "PSFC", "T"], ["U"]):
                text = cdo("outputf,%.9g,1", f"-selname,{','.join(grid)}", path)
                want = np.concatenate([stored(path, v).ravel() for v in order if v in grid])
                got = numbers(text)
                assert got.size == want.size, (name, path.name, grid)
                assert np.array_equal(got, want), (name, path.name, grid)
                printed[name, path.name, grid[0]] = text
    for (name, fname, grid), text in printed.items():
        assert text == printed["serial", fname, grid], f"{name}: cdo differs on {fname}"


def test_cdo_statistics(outputs, tmp_path):
    # CDO's own arithmetic, on one strategy's files (the values tests show
    # that every strategy's files hold the same values).
    out = outputs["serial"]
    path = out / HISTORY[1]
    for var in FIELDS:
        want = stored(path, var)
        # fldmin/fldmax per level: exact (no arithmetic on the values).
        axes = (want.ndim - 2, want.ndim - 1)
        for op, ref in (("fldmin", want.min(axis=axes)), ("fldmax", want.max(axis=axes))):
            got = numbers(cdo("outputf,%.9g,1", f"-{op}", f"-selname,{var}", path))
            assert np.array_equal(got, np.atleast_1d(ref)), (op, var)
    # The time mean over the three history files, kept in double (-b F64).
    hist = [out / f for f in HISTORY]
    mean = tmp_path / "timmean.nc"
    cdo("-b", "F64", "timmean", "-selname,T2", "-mergetime", *hist, mean)
    want = np.mean([stored(p, "T2").astype(np.float64) for p in hist], axis=0)
    np.testing.assert_allclose(stored(mean, "T2"), want, rtol=1e-12, atol=0)


def test_nco_values_are_the_stored_values(outputs):
    ncks = tool("ncks")
    printed = {}
    for name, out in outputs.items():
        for path in files(out):
            for var in FIELDS:
                text = run(ncks, "-C", "-H", "--trd", "-v", var, "-s", r"%.9g\n", path)
                got = numbers(text)
                want = stored(path, var).ravel()
                assert np.array_equal(got, want), (name, path.name, var)
                printed[name, path.name, var] = text
            # The restart file's step counter, which only the bench writes.
            if path.name == RESTART:
                step = run(ncks, "-C", "-H", "--trd", "-v", "BENCH_STEP", "-s", r"%d\n", path)
                assert step.split() == ["2"]
    for (name, fname, var), text in printed.items():
        assert text == printed["serial", fname, var], f"{name}: ncks differs on {fname} {var}"


def test_nco_record_operators(outputs, tmp_path):
    ncwa, ncra, ncrcat = tool("ncwa"), tool("ncra"), tool("ncrcat")
    for name, out in outputs.items():
        hist = [out / f for f in HISTORY]
        # ncrcat: one file of the three outputs, in order, values unchanged.
        cat = tmp_path / f"{name}_cat.nc"
        run(ncrcat, "-O", "-v", "Times,XTIME,T2,U", *hist, cat)
        with netCDF4.Dataset(cat) as ds:
            ds.set_auto_mask(False)
            assert netCDF4.chartostring(ds.variables["Times"][:]).tolist() == DATES
            assert ds.variables["XTIME"][:].tolist() == [0.0, 2.0, 4.0]
            for t, p in enumerate(hist):
                assert np.array_equal(ds.variables["T2"][t], stored(p, "T2"))
                assert np.array_equal(ds.variables["U"][t], stored(p, "U"))
        # ncwa -y min/max over the horizontal: exact, per level.
        for op, fn in (("min", np.min), ("max", np.max)):
            red = tmp_path / f"{name}_{op}.nc"
            run(ncwa, "-O", "-y", op, "-a", "south_north,west_east_stag", "-v", "U", hist[1], red)
            with netCDF4.Dataset(red) as ds:
                got = np.asarray(ds.variables["U"][:]).ravel()
            assert np.array_equal(got, fn(stored(hist[1], "U"), axis=(1, 2))), (name, op)
        # ncra: the record mean, XTIME included.
        avg = tmp_path / f"{name}_avg.nc"
        run(ncra, "-O", "-v", "T2,XTIME", *hist, avg)
        with netCDF4.Dataset(avg) as ds:
            assert ds.variables["XTIME"][:].tolist() == [2.0]
            got = np.asarray(ds.variables["T2"][0], dtype=np.float64)
        want = np.mean([stored(p, "T2").astype(np.float64) for p in hist], axis=0)
        # NCO averages float32 in float32 unless told otherwise: float32 rounding.
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)
