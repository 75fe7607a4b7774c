"""`tessera convert` (python/tessera/convert.py): its usage errors and the
error when the converter program is missing. The log conversions themselves
are tested end to end by the CTest stage.kill_log (tests/stage/stage_kill.sh).

`tessera convert INPUT --to FORMAT --out PATH` (tessera-convert --to): a
bench CDF-2 file to a Zarr store and back to CDF-2 (one rank and two, with
and without zstd/gzip, through netCDF-4 too): ncdump of the result equals the
original's (values, types, attributes), and xarray reads the store with the
same values. Programs under $TESSERA_BUILD_DIR (default <repo>/build); those
tests are skipped when they are not built."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tessera import convert
from tessera.bench.launch import mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
CONVERTER = BUILD / "apps" / "convert" / "tessera-convert"
MPIEXEC = shutil.which("mpiexec")
NCDUMP = shutil.which("ncdump")
FILE = "wrfout_d01_2026-01-01_00_00_00"
built = pytest.mark.skipif(
    not all(p.is_file() and os.access(p, os.X_OK) for p in (BENCH, CONVERTER))
    or MPIEXEC is None or NCDUMP is None,
    reason=f"tessera-bench or tessera-convert not built under {BUILD}, or no mpiexec/ncdump")


def test_not_a_log_directory(tmp_path, capsys):
    assert convert.main([str(tmp_path / "missing")]) == 2
    assert "is not a log directory" in capsys.readouterr().err


def test_log_without_marker_needs_out(tmp_path, capsys):
    log = tmp_path / "f.nc.0123-1-0"
    log.mkdir()
    assert convert.main([str(log)]) == 2
    assert "name the output with --out" in capsys.readouterr().err


def test_missing_program_keeps_the_log(tmp_path, capsys, monkeypatch):
    log = tmp_path / "f.nc.0123-1-0"
    log.mkdir()
    (log / "schema").write_bytes(b"TSRLOG01")
    monkeypatch.setenv("TESSERA_CONVERT", str(tmp_path / "no-such-program"))
    assert convert.main([str(log), "--out", str(tmp_path / "out.nc")]) == 1
    assert "tessera-convert not found" in capsys.readouterr().err
    assert (log / "schema").exists() and not (tmp_path / "out.nc").exists()


def test_marker_follows_the_recover_protocol(tmp_path):
    """`tessera convert MARKER` is recover for one marker: no log directory is
    a usage error; a log whose size is not the marker's is kept, exit 1."""
    final = tmp_path / "f.nc"
    final.write_bytes(b"CDF\x02")
    log = tmp_path / "f.nc.0123-1-0"
    marker = tmp_path / "f.nc.0123-1-0.tessera-dest"
    marker.write_text(f"{final}\n4\n")
    assert convert.main([str(marker)]) == 2  # no log directory: nothing to convert
    log.mkdir()
    assert convert.main([str(marker)]) == 1  # empty log (size 0, marker says 4): kept
    assert marker.exists() and log.exists()


def test_to_needs_out(tmp_path, capsys):
    (tmp_path / "f.nc").write_bytes(b"CDF\x02")
    assert convert.main([str(tmp_path / "f.nc"), "--to", "zarr"]) == 2
    assert "--to needs --out" in capsys.readouterr().err


def _env():
    e = dict(os.environ)
    e.pop("TESSERA_HINTS", None)
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return e


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """A bench CDF-2 file: two frames, 3-D and 2-D fields, char Times, float
    and int attributes."""
    out = tmp_path_factory.mktemp("nc")
    cmd = mpiexec_command(MPIEXEC, 2) + [
        str(BENCH), "--nx", "23", "--ny", "17", "--nz", "4", "--steps", "2",
        "--output-every", "1", "--frames-per-file", "2", "--nocolons", "--quiet",
        "--out", str(out), "--hints", "strategy=serial:format=cdf2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=_env())
    assert r.returncode == 0, r.stderr
    return out / FILE


def _dump(path):
    r = subprocess.run([NCDUMP, str(path)], capture_output=True, text=True, check=True)
    return r.stdout.split("\n", 1)[1]  # without the first line, which names the file


def _convert(monkeypatch, src, to, out, hints=None, np_=1):
    monkeypatch.setenv("TESSERA_CONVERT", str(CONVERTER))
    monkeypatch.delenv("TESSERA_HINTS", raising=False)
    argv = [str(src), "--to", to, "--out", str(out), "--np", str(np_)]
    assert convert.main(argv + (["--hints", hints] if hints else [])) == 0


@built
@pytest.mark.parametrize("hints,np_", [(None, 1), ("zstd=3", 2), ("deflate=1:chunks=2x9x8", 1)])
def test_cdf2_to_zarr_and_back_is_identical(tmp_path, monkeypatch, original, hints, np_):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    store, back = tmp_path / "store.zarr", tmp_path / "back.nc"
    _convert(monkeypatch, original, "zarr", store, hints, np_)
    assert (store / "zarr.json").is_file()
    _convert(monkeypatch, store, "cdf2", back, np_=np_)
    assert _dump(back) == _dump(original)
    with xr.open_dataset(original, decode_times=False) as a, \
            xr.open_zarr(store, zarr_format=3, consolidated=False, decode_times=False) as z:
        assert sorted(a.data_vars) == sorted(z.data_vars)
        for name in a.data_vars:
            assert a[name].dims == z[name].dims, name
            assert a[name].equals(z[name]), name


@built
def test_through_netcdf4_and_cdf5(tmp_path, monkeypatch, original):
    store = tmp_path / "s.zarr"
    _convert(monkeypatch, original, "zarr", store)
    _convert(monkeypatch, store, "netcdf4", tmp_path / "n4.nc")
    _convert(monkeypatch, tmp_path / "n4.nc", "cdf5", tmp_path / "c5.nc")
    _convert(monkeypatch, tmp_path / "c5.nc", "cdf2", tmp_path / "c2.nc")
    assert _dump(tmp_path / "c2.nc") == _dump(original)


@built
def test_a_bad_format_hint_leaves_nothing(tmp_path, monkeypatch, original, capsys):
    monkeypatch.setenv("TESSERA_CONVERT", str(CONVERTER))
    out = tmp_path / "x.zarr"
    assert convert.main([str(original), "--to", "zarr", "--out", str(out),
                         "--hints", "zstd=99"]) == 1
    assert "TSR_EHINT" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())
