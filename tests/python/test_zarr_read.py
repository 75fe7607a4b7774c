"""format=zarr read back by Tessera (tsr_open on a store): the benchmark writes
the same case twice, `format=cdf2` and `format=zarr` (serial; aggregate with
two writers; servers with two tasks; no codec, gzip, zstd; sharded), and
tests/formats/test_zarr_read reads every value of every variable and frame of
each store through tsr_open's read strategies (serial, aggregate, direct) and
compares it with the NetCDF file, with names, types, dimensions and
attributes. The programs are found under $TESSERA_BUILD_DIR (default
<repo>/build); the module is skipped when they are not built.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tessera.bench.launch import mpiexec_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
READER = BUILD / "tests" / "formats" / "test_zarr_read"
MPIEXEC = shutil.which("mpiexec")
FILE = "wrfout_d01_2026-01-01_00_00_00"

pytestmark = pytest.mark.skipif(
    not all(p.is_file() and os.access(p, os.X_OK) for p in (BENCH, READER)) or MPIEXEC is None,
    reason=f"tessera-bench or test_zarr_read not built under {BUILD}, or no mpiexec")


def env():
    e = dict(os.environ)
    e.pop("TESSERA_HINTS", None)
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return e


def bench(np_, out, hints):
    """Two history outputs in one file (frames 0 and 1), 3-D and 2-D fields."""
    cmd = mpiexec_command(MPIEXEC, np_) + [
        str(BENCH), "--nx", "30", "--ny", "22", "--nz", "4", "--steps", "2",
        "--output-every", "1", "--frames-per-file", "2", "--nocolons", "--quiet",
        "--out", str(out), "--hints", hints]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env())
    if r.returncode == 3 and "TSR_ENOTBUILT" in r.stderr:
        pytest.skip(f"not built: {hints}")
    assert r.returncode == 0, r.stderr
    return out / FILE


def read(np_, store, ref, hints):
    r = subprocess.run(mpiexec_command(MPIEXEC, np_) + [str(READER), str(store), str(ref), hints],
                       capture_output=True, text=True, timeout=240, env=env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "every value equal" in r.stdout and "2 frames" in r.stdout, r.stdout
    return r.stdout


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return bench(3, tmp_path_factory.mktemp("nc"), "strategy=serial:format=cdf2")


@pytest.mark.parametrize("writer,codec", [
    ("strategy=serial", ""),
    ("strategy=aggregate:aggregators=2", ":deflate=1"),
    ("strategy=servers:io_groups=1:io_tasks=2", ":zstd=1"),
    ("strategy=serial:chunks=3x10x7", ":deflate=4"),  # edge chunks, chunks 3 levels deep
    # Shards: 2 x 2 inner chunks of 11 x 16, inner chunks past the edges with
    # no data; 4 levels of one-level chunks a shard.
    ("strategy=aggregate:aggregators=2:chunks=11x16:shards=22x32", ":zstd=1"),
    ("strategy=serial:shards=4x100x100", ""),
])
def test_every_value_of_a_store_reads_back(tmp_path, reference, writer, codec):
    # servers take two of the ranks: the model runs on the other three, as
    # the reference's does.
    np_ = 5 if "servers" in writer else 3
    store = bench(np_, tmp_path / "zarr", f"{writer}:format=zarr{codec}")
    for how, n in (("strategy=serial", 3), ("strategy=aggregate:aggregators=2", 4),
                   ("strategy=direct", 2)):
        read(n, store, reference, f"backend=zarr:{how}")


def test_a_store_reads_without_naming_the_backend(tmp_path, reference):
    """tsr_open finds a store by its zarr.json, as it finds a NetCDF file by
    its first bytes (a staged log, also a directory, has a format of its
    own: the two once shared a number, and stores went to the log reader)."""
    store = bench(3, tmp_path / "zarr", "strategy=serial:format=zarr")
    read(2, store, reference, "strategy=direct")


def test_a_path_that_is_no_store_is_refused(tmp_path, reference):
    r = subprocess.run(mpiexec_command(MPIEXEC, 1) + [str(READER), str(tmp_path), str(reference),
                                                      "backend=zarr"],
                       capture_output=True, text=True, timeout=60, env=env())
    assert r.returncode != 0 and "tsr_open" in r.stderr
