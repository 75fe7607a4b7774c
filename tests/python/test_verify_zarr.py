"""checksum=crc32 on Zarr stores (format=zarr; docs/verify.md, docs/zarr.md).

- The same bench case written as a CDF-2 file (serial) and as stores
  (serial, aggregate with two writers, servers with two tasks; no codec,
  gzip, zstd, shards) records the same sums: the manifests are equal line
  for line, and each array's `tessera_crc32` in its zarr.json holds the
  NetCDF attribute's sums.
- `tessera verify STORE` passes on every store, and catches one flipped
  byte in any variable of any frame: in an uncompressed chunk as a sum that
  differs, in a gzip chunk as a sum that differs or a chunk that cannot be
  decoded, naming the variable and frame either way.
- `tessera follow` takes stores from the manifest, and its Python API yields
  the frames of a store with the NetCDF file's values.
"""
import io
import json
import shutil
import subprocess
import sys
from contextlib import redirect_stdout

import netCDF4
import numpy as np
import pytest

from bench_runs import FRAMES_CASE, FRAMES_SUM, clean_env, needs_bench, run_bench
from tessera import follow as tf
from tessera import manifest, verify

pytest.importorskip("zarr")
pytestmark = needs_bench

RUNS = {  # name -> (processes, hints)
    "netcdf-serial-1": (1, "strategy=serial"),
    "zarr-serial-1": (1, "strategy=serial,format=zarr"),
    "zarr-aggregate-3": (3, "strategy=aggregate,aggregators=2,format=zarr"),
    "zarr-servers-4-gzip": (4, "strategy=servers,io_tasks=2,format=zarr,deflate=1"),
    "zarr-serial-2-zstd-shards": (2, "strategy=serial,format=zarr,zstd=3,chunks=1x8x8,"
                                     "shards=2x16x16"),
}
FILES = ["wrfout_d01_2026-01-01_00:00:00", "wrfout_d01_2026-01-01_00:04:00"]


def bench(np_, out, hints):
    p = run_bench(np_, FRAMES_CASE + ["--out", out, "--hints", hints])
    if "TSR_ENOTBUILT" in p.stdout + p.stderr:
        return None
    assert p.returncode == 0, f"{p.command}\n{p.stdout}{p.stderr}"
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    top = tmp_path_factory.mktemp("zsums")
    out = {name: bench(np_, top / name, f"{hints},{FRAMES_SUM}")
           for name, (np_, hints) in RUNS.items()}
    return {name: d for name, d in out.items() if d is not None}  # zstd may be unbuilt


def verify_here(*args):
    """tessera verify in this process (the flip tests run it often)."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = verify.main(list(args))
    return rc, buf.getvalue()


def test_stores_record_the_netcdf_files_sums(runs):
    ref = (runs["netcdf-serial-1"] / manifest.MANIFEST_NAME).read_text()
    assert ref.count("\n") == 3
    for name, d in runs.items():
        assert sorted(p.name for p in d.iterdir()) == [manifest.MANIFEST_NAME] + FILES, name
        assert (d / manifest.MANIFEST_NAME).read_text() == ref, name
        if name.startswith("netcdf"):
            continue
        for fname in FILES:
            with netCDF4.Dataset(runs["netcdf-serial-1"] / fname) as ds:
                for var, v in ds.variables.items():
                    doc = json.loads((d / fname / var / "zarr.json").read_text())
                    # The classic file pads its attribute to the placeholder's length.
                    assert doc["attributes"]["tessera_crc32"] == v.tessera_crc32.strip(), \
                        (name, fname, var)


def test_verify_passes_on_every_store(runs):
    for name, d in runs.items():
        p = subprocess.run([sys.executable, "-m", "tessera", "verify", *(str(d / f) for f in FILES)],
                           capture_output=True, text=True, timeout=300, env=clean_env())
        assert p.returncode == 0, f"{name}\n{p.stdout}{p.stderr}"
        assert p.stdout.splitlines() == [f"{d / FILES[0]}: ok, 72 sums of 36 variables matched",
                                         f"{d / FILES[1]}: ok, 36 sums of 36 variables matched"]


def chunk_files(store, var, frame, record):
    top = store / var / "c" / str(frame) if record else store / var / "c"
    if top.is_file():  # a scalar's one chunk (per frame: XTIME's c/<t>)
        return [top]
    return sorted(p for p in top.rglob("*") if p.is_file())


def read_frame(store, var, frame, record):
    import zarr
    a = zarr.open_group(str(store), mode="r", zarr_format=3)[var]
    return a[frame] if record else a[...]


def flip_each(runs, name, tmp_path, where, compressed=False):
    """Flip one byte (at where(chunk length, rng)) in one chunk of each
    variable and frame of the first store; verify must name exactly that
    one (variable, frame). In a compressed chunk a flip may decode to the
    same values (a match copied from another distance in a run of zeros):
    verify checks values, so it must pass then, and only then. Returns the
    problem lines and the (variable, frame) whose flip changed nothing."""
    src = runs[name] / FILES[0]
    with netCDF4.Dataset(runs["netcdf-serial-1"] / FILES[0]) as ds:
        frames = {n: (2 if v.dimensions and v.dimensions[0] == "Time" else 1)
                  for n, v in ds.variables.items()}
    rng = np.random.default_rng(11)
    lines, harmless = [], []
    bad = tmp_path / FILES[0]  # the same name: its manifest lines still apply
    shutil.copytree(src, bad)
    shutil.copyfile(runs[name] / manifest.MANIFEST_NAME, tmp_path / manifest.MANIFEST_NAME)
    for var, nframes in sorted(frames.items()):
        for frame in range(nframes):
            chunks = chunk_files(bad, var, frame, nframes == 2)
            chunk = chunks[int(rng.integers(len(chunks)))]
            good = chunk.read_bytes()
            data = bytearray(good)
            data[where(len(data), rng)] ^= 0x10
            chunk.write_bytes(bytes(data))
            rc, out = verify_here("--quiet", str(bad))
            chunk.write_bytes(good)  # the next flip is the only one
            if compressed and rc == 0:
                want = read_frame(src, var, frame, nframes == 2)
                got = read_frame(bad, var, frame, nframes == 2)
                assert got.tobytes() == want.tobytes(), (var, frame, chunk, "passed, values differ")
                harmless.append((var, frame))
                continue
            assert rc == 1, (var, frame, out)
            problems = out.splitlines()
            assert len(problems) == 1 and f": variable {var} frame {frame}: " in problems[0], \
                (var, frame, chunk, out)
            lines.append(problems[0])
    return lines, harmless


def test_verify_catches_one_flipped_byte_in_any_variable_and_frame(runs, tmp_path):
    lines, _ = flip_each(runs, "zarr-aggregate-3", tmp_path, lambda n, rng: int(rng.integers(n)))
    # Uncompressed: every byte of a chunk is a value, so each flip is a sum that differs.
    assert len(lines) == 72 and all("the values differ from what was written" in ln
                                    for ln in lines), lines


def test_verify_catches_one_flipped_byte_in_a_compressed_chunk(runs, tmp_path):
    # Inside the deflate data: past gzip's 10-byte header and before the
    # data's last byte and the 8-byte CRC and length. (The header's time and
    # OS bytes, and the unused high bits of the last byte, are read by no
    # decoder: a flip there changes no value.)
    lines, harmless = flip_each(runs, "zarr-servers-4-gzip", tmp_path,
                                lambda n, rng: 10 + int(rng.integers(n - 19)), compressed=True)
    assert len(lines) + len(harmless) == 72 and len(harmless) < 12, harmless
    undecodable = [ln for ln in lines if "cannot be read (" in ln]
    assert undecodable, "gzip's own CRC should stop some chunks from decoding"
    assert all(ln in undecodable or "the values differ" in ln for ln in lines), lines


def test_verify_refuses_a_directory_that_is_no_store(tmp_path):
    p = subprocess.run([sys.executable, "-m", "tessera", "verify", str(tmp_path)],
                       capture_output=True, text=True, timeout=60, env=clean_env())
    assert p.returncode == 2
    assert p.stderr.strip() == (f"tessera verify: {tmp_path}: a directory without zarr.json: "
                                f"verify reads NetCDF files and Zarr stores")


def test_follow_takes_stores(runs):
    d = runs["zarr-aggregate-3"]
    p = subprocess.run([sys.executable, "-m", "tessera", "follow", str(d), "--timeout", "0.5"],
                       capture_output=True, text=True, timeout=60, env=clean_env())
    assert p.returncode == 0
    assert p.stdout.splitlines() == [f"{d}/{FILES[0]} frame 0 of 2", f"{d}/{FILES[0]} frame 1 of 2",
                                     f"{d}/{FILES[1]} frame 0 of 1"]
    pytest.importorskip("xarray")
    frames = list(tf.follow(str(d), timeout=0.3))
    assert len(frames) == 3
    with netCDF4.Dataset(runs["netcdf-serial-1"] / FILES[0]) as ds:
        want_t, want_times = ds.variables["T"][1], bytes(ds.variables["Times"][1])
    np.testing.assert_array_equal(frames[1]["T"].values, want_t)
    assert frames[1]["Times"].values.tobytes() == want_times
