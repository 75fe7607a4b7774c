"""checksum=crc32, `tessera verify` and `tessera follow` (docs/verify.md).

- Every strategy (1-6 processes, CDF-2, netCDF-4 with deflate, staged) records
  the same per-frame sums, and each equals zlib's CRC-32 of the values read
  back with netCDF4 (the computation spelled out here, not tessera's).
- `tessera verify` passes on every file, and catches one flipped byte in any
  variable of any frame of a classic file, naming that variable and frame.
- Backends without attributes (grib2) and staged logs are refused at
  tsr_enddef; Zarr stores keep their sums (test_verify_zarr.py).
- `tessera follow` run beside a writing bench never yields a frame before
  its file is complete: each yielded frame verifies at the moment it is
  yielded, and every frame of the run is yielded once, in order.
"""
import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from bench_runs import (BENCH, FRAMES_CASE, FRAMES_SUM, MPIEXEC, ROOT, clean_env, needs_bench,
                        run_bench)
from tessera import follow as tf
from tessera import manifest
from tessera.bench.launch import mpiexec_command

pytestmark = needs_bench

RUNS = {  # name -> (processes, hints)
    "serial-1": (1, "strategy=serial"),
    "direct-2": (2, "strategy=direct"),
    "aggregate-3": (3, "strategy=aggregate,aggregators=2"),
    "split-4": (4, "strategy=split"),
    "servers-5": (5, "strategy=servers,io_tasks=2"),
    "direct-6-netcdf4-deflate": (6, "strategy=direct,format=netcdf4,deflate=1"),
    "aggregate-4-staged": (4, "strategy=aggregate,stage_dir={stage}"),
}


def bench(np_, out, hints, extra=(), check=True):
    p = run_bench(np_, FRAMES_CASE + list(extra) + ["--out", out, "--hints", hints])
    if check:
        assert p.returncode == 0, f"{p.command}\n{p.stdout}{p.stderr}"
    return p


def tessera(*args):
    return subprocess.run([sys.executable, "-m", "tessera", *args], capture_output=True,
                          text=True, timeout=300, env=clean_env() | {"PYTHONPATH": str(ROOT / "python")})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    top = tmp_path_factory.mktemp("sums")
    out = {}
    for name, (np_, hints) in RUNS.items():
        stage = top / f"{name}.stage"
        stage.mkdir()
        bench(np_, top / name, f"{hints.format(stage=stage)},{FRAMES_SUM}")
        out[name] = top / name
    return out


def sums_by_file(directory):
    """(file, frame) -> {variable: sum} from a manifest, split pieces aside."""
    return {(Path(fr.path).name, fr.frame): fr.sums for fr in manifest.read_frames(str(directory))}


def numpy_sum(values):
    a = np.ascontiguousarray(values)
    return f"{zlib.crc32(a.astype(a.dtype.newbyteorder('<')).tobytes()) & 0xFFFFFFFF:08x}"


def test_every_strategy_records_the_same_sums(runs):
    ref = sums_by_file(runs["serial-1"])
    assert sorted({f for f, _ in ref}) == ["wrfout_d01_2026-01-01_00:00:00",
                                          "wrfout_d01_2026-01-01_00:04:00"]
    assert sorted(fr for _, fr in ref) == [0, 0, 1]
    for name, d in runs.items():
        if name.startswith("split"):
            continue  # a file per rank: its own sums, checked by verify below
        assert sums_by_file(d) == ref, name


def test_sums_are_crc32_of_the_values_read_back(runs):
    for (fname, frame), sums in sums_by_file(runs["direct-2"]).items():
        with netCDF4.Dataset(runs["direct-2"] / fname) as ds:
            ds.set_auto_maskandscale(False)
            assert set(sums) == set(ds.variables)
            for var, want in sums.items():
                v = ds.variables[var]
                values = v[frame] if v.dimensions[0] == "Time" else v[...]
                assert numpy_sum(values) == want, (fname, frame, var)
                # and in the file, as its attribute
                assert v.getncattr("tessera_crc32").split()[frame if v.dimensions[0] == "Time" else 0] == want


def test_verify_passes_on_every_file(runs):
    for name, d in runs.items():
        files = sorted(str(f) for f in d.iterdir() if f.name.startswith("wrfout"))
        assert files, name
        p = tessera("verify", *files)
        assert p.returncode == 0, f"{name}\n{p.stdout}{p.stderr}"
        assert p.stdout.count(": ok,") == len(files)


def offsets(path):
    """variable -> (file offset of record 0, bytes of one record, record stride)
    of a classic file, from PnetCDF's ncoffsets."""
    text = subprocess.run(["ncoffsets", "-s", str(path)], capture_output=True, text=True,
                          check=True).stdout
    out, var = {}, None
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and "(" in words[1] and words[0] in ("char", "float", "int", "double"):
            var = words[1].split("(")[0]
        elif var and "start file offset" in line:
            out[var] = [int(words[4])]
        elif var and "size in bytes" in line:
            out[var].append(int(words[4]))
    return out


@pytest.mark.skipif(shutil.which("ncoffsets") is None, reason="no ncoffsets (pnetcdf-bin)")
def test_verify_catches_one_flipped_byte_in_any_variable_and_frame(runs, tmp_path):
    src = runs["serial-1"] / "wrfout_d01_2026-01-01_00:00:00"
    with netCDF4.Dataset(src) as ds:
        record = {n for n, v in ds.variables.items() if v.dimensions and v.dimensions[0] == "Time"}
    offs = offsets(src)
    # The record stride is the sum of the record variables' sizes (each padded to 4).
    recsize = sum((offs[n][1] + 3) // 4 * 4 for n in record)
    rng = np.random.default_rng(7)
    for var, (start, size) in sorted(offs.items()):
        for frame in ([0, 1] if var in record else [0]):
            bad = tmp_path / "flipped.nc"
            shutil.copyfile(src, bad)
            at = start + frame * recsize + int(rng.integers(size))
            with open(bad, "r+b") as fh:
                fh.seek(at)
                b = fh.read(1)
                fh.seek(at)
                fh.write(bytes([b[0] ^ 0x10]))
            p = tessera("verify", "--quiet", str(bad))
            assert p.returncode == 1, (var, frame, p.stdout, p.stderr)
            assert f"variable {var} frame {frame}:" in p.stdout, (var, frame, p.stdout)
            assert p.stdout.count("variable ") == 1, p.stdout


def test_verify_refuses_bad_input(tmp_path):
    p = tessera("verify", str(tmp_path / "nope.nc"))
    assert p.returncode == 2 and p.stderr.strip() == f"tessera verify: {tmp_path / 'nope.nc'}: no such file"
    plain = tmp_path / "plain"
    bench(1, plain, "strategy=serial")
    f = sorted(plain.iterdir())[0]
    p = tessera("verify", str(f))
    assert p.returncode == 1
    assert p.stdout.strip() == f"{f}: no checksums to verify (written without the hint checksum=crc32)"


@pytest.mark.parametrize("hints,culprit", [
    # Zarr stores keep the sums (test_verify_zarr.py); GRIB2 messages have no attributes.
    ("strategy=serial,format=grib2", "backend grib2: the sums are kept in the file's attributes "
                                     "at close (use backend netcdf, pnetcdf, netcdf4 or zarr)"),
    ("strategy=serial,stage_dir={stage},stage_format=log",
     "stage_format=log: the sums are kept in the file's attributes at close (use backend "
     "netcdf, pnetcdf or netcdf4, stage_format=native)"),
])
def test_refused_where_sums_cannot_be_kept(tmp_path, hints, culprit):
    stage = tmp_path / "stage"
    stage.mkdir()
    p = bench(2, tmp_path / "out", f"{hints.format(stage=stage)},checksum=crc32", check=False)
    log = p.stdout + p.stderr
    if "TSR_ENOTBUILT" in log:
        pytest.skip("grib2 not built")
    assert p.returncode != 0
    assert f"TSR_EHINT" in log and f"checksum=crc32 cannot be used with {culprit}" in log, log
    assert not any(f.name.startswith("wrfout") for f in (tmp_path / "out").iterdir())


def test_follow_never_yields_a_frame_before_its_file_is_complete(tmp_path):
    out = tmp_path / "live"
    out.mkdir()
    # 12 outputs, one per file, each a few MB, while we follow.
    cmd = mpiexec_command(MPIEXEC, 3) + [str(BENCH), "--nx", "200", "--ny", "150", "--nz", "10",
                                          "--steps", "11", "--output-every", "1", "--quiet",
                                          "--out", str(out), "--hints",
                                          "strategy=aggregate,checksum=crc32"]
    writer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=clean_env())
    seen = []
    try:
        for fr in tf.follow_frames(str(out), count=12, timeout=120):
            # Complete now: the sums verify, read while later files are written.
            p = tessera("verify", "--quiet", fr.path)
            assert p.returncode == 0, (fr, p.stdout, p.stderr)
            seen.append((Path(fr.path).name, fr.frame, writer.poll() is None))
    finally:
        log = writer.communicate(timeout=180)[0].decode()
    assert writer.returncode == 0, log
    assert len(seen) == 12 and len({s[0] for s in seen}) == 12
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    assert any(running for *_, running in seen), "every frame was seen after the run ended"


def test_follow_command_line(runs):
    d = runs["serial-1"]
    p = tessera("follow", str(d), "--timeout", "0.5")
    assert p.returncode == 0
    assert p.stdout.splitlines() == [
        f"{d}/wrfout_d01_2026-01-01_00:00:00 frame 0 of 2",
        f"{d}/wrfout_d01_2026-01-01_00:00:00 frame 1 of 2",
        f"{d}/wrfout_d01_2026-01-01_00:04:00 frame 0 of 1"]
    p = tessera("follow", str(d), "--count", "2", "--exec", "echo got")
    assert p.returncode == 0 and p.stdout.splitlines() == [
        f"got {d}/wrfout_d01_2026-01-01_00:00:00 0", f"got {d}/wrfout_d01_2026-01-01_00:00:00 1"]
    p = tessera("follow", str(d), "--count", "1", "--exec", "echo {frame} of {file}")
    assert p.returncode == 0 and p.stdout == f"0 of {d}/wrfout_d01_2026-01-01_00:00:00\n"
    p = tessera("follow", str(d), "--count", "1", "--exec", "false")
    assert p.returncode == 1 and "exited with status 1" in p.stderr
    p = tessera("follow", str(d / "nope"), "--count", "1")
    assert p.returncode == 2 and p.stderr.strip() == f"tessera follow: {d / 'nope'}: no such directory"
    p = tessera("follow", str(d), "--timeout", "0")
    assert p.returncode == 2 and "argument --timeout: expected seconds > 0, got 0" in p.stderr


def test_follow_python_api_yields_datasets(runs):
    pytest.importorskip("xarray")
    frames = list(tf.follow(str(runs["direct-2"]), timeout=0.3))
    assert len(frames) == 3
    with netCDF4.Dataset(runs["direct-2"] / "wrfout_d01_2026-01-01_00:00:00") as ds:
        want = ds.variables["T"][1]
    np.testing.assert_array_equal(frames[1]["T"].values, want)
