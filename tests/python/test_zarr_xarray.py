"""format=zarr: the Zarr v3 stores Tessera writes read back with zarr-python
and xarray exactly as the same run's classic NetCDF file reads.

The benchmark runs twice with the same ranks, decomposition and steps (so the
same fields): once `format=cdf2`, once `format=zarr`, through each strategy
that gives writers whole chunks (serial; aggregate with one writer and with
two; servers with one and two tasks), with and without a compressor, with
and without shards (the sharding_indexed codec). Every
store must open with zarr-python (zarr_format=3: node types, dimension_names,
the codecs asked for) and with `xarray.open_zarr(..., consolidated=False)`,
and show the NetCDF file's variables, dimension names, attributes, global
attributes, decoded times and values, exactly (no lossy codec). Failures
leave no store under a final name: a path that is no store is refused at
create and left alone, and a killed run leaves only `*.tessera-tmp`, which
`tessera clean` removes. The bench is found under $TESSERA_BUILD_DIR
(default <repo>/build); the module is skipped when it is not built.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("netCDF4")

from tessera.bench.launch import mpiexec_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")
NAMES = ["wrfout_d01_2026-01-01_00_00_00", "wrfout_d01_2026-01-01_00_02_00"]

pytestmark = [
    pytest.mark.skipif(not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
                       reason=f"tessera-bench not built ({BENCH}) or no mpiexec"),
    # zarr-python calls the char type (null_terminated_bytes) unstable.
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


def bench_cmd(np_, out, hints, extra=()):
    return mpiexec_command(MPIEXEC, np_) + [
        str(BENCH), "--nx", "32", "--ny", "24", "--nz", "4", "--steps", "2",
        "--output-every", "2", "--nocolons", "--out", str(out), "--hints", hints, "--quiet",
        *extra]


def env():
    e = dict(os.environ)
    e.pop("TESSERA_HINTS", None)
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return e


def run_bench(np_, out, hints):
    subprocess.run(bench_cmd(np_, out, hints), check=True, timeout=240, env=env())
    assert sorted(p.name for p in out.iterdir()) == NAMES
    return [out / n for n in NAMES]


# (strategy hints, ranks, compressor hints, codec name in the documents)
CASES = [
    ("strategy=serial", 1, "", None),
    ("strategy=serial", 3, ":zstd=3", "zstd"),
    ("strategy=serial:chunks=3x10x7", 2, ":deflate=4", "gzip"),  # edge chunks, levels deep
    ("strategy=aggregate:aggregators=1", 2, ":zstd=1", "zstd"),
    ("strategy=aggregate:aggregators=2", 4, "", None),
    ("strategy=aggregate:aggregators=2:chunks=10x10", 3, ":zstd=5", "zstd"),
    ("strategy=servers:io_groups=1:io_tasks=1", 2, "", None),
    ("strategy=servers:io_groups=1:io_tasks=1", 3, ":zstd=3", "zstd"),
    ("strategy=servers:io_groups=1:io_tasks=2", 4, "", None),
    ("strategy=servers:io_groups=1:io_tasks=2", 4, ":zstd=3", "zstd"),
    # 5 and 6 ranks: the range.
    ("strategy=serial", 5, "", None),
    ("strategy=aggregate:aggregators=3", 6, ":deflate=1", "gzip"),
    ("strategy=servers:io_groups=1:io_tasks=2", 5, ":zstd=1", "zstd"),
    ("strategy=servers:io_groups=2:io_tasks=1", 6, "", None),
    # Sharded (sharding_indexed; the shard index has no crc32c): shards
    # several levels deep with one writer, one level deep with several; 12 x
    # 16 inner chunks leave edge chunks, and inner chunks past the staggered
    # edge (33 = 2 x 16 + 1) that have no data, only index entries.
    ("strategy=serial:shards=4x100x100", 1, "", None),  # 100: the whole dimension
    ("strategy=serial:chunks=12x16:shards=2x24x32", 3, ":zstd=3", "zstd"),
    ("strategy=aggregate:aggregators=1:shards=contiguous", 2, ":zstd=1", "zstd"),
    ("strategy=aggregate:aggregators=2:chunks=12x16:shards=24x32", 4, "", None),
    ("strategy=aggregate:aggregators=3:chunks=12x16:shards=24x48", 6, ":zstd=1", "zstd"),
    ("strategy=servers:io_groups=1:io_tasks=2:chunks=12x16:shards=24x32", 5, ":zstd=3", "zstd"),
    ("strategy=servers:io_groups=1:io_tasks=1:shards=contiguous", 3, "", None),
]


def same_attr(a, b):
    if isinstance(b, str) or isinstance(a, str):
        return a == b
    return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def check_codecs(name, meta, codec, sharded):
    """The codecs asked for; with shards=, sharding_indexed around them in the
    arrays whose shard holds more than one inner chunk (T always here), its
    index little-endian bytes at the end, no crc32c."""
    codecs = meta["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        assert sharded, name
        conf = codecs[0]["configuration"]
        assert conf["index_codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}]
        assert conf["index_location"] == "end"
        shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
        assert all(s % c == 0 for s, c in zip(shard, conf["chunk_shape"])), name
        assert np.prod(shard) > np.prod(conf["chunk_shape"]), name
        codecs = conf["codecs"]
    else:
        assert not sharded or name != "T", (name, codecs)
    names = [c["name"] for c in codecs]
    assert names == ["bytes"] + ([codec] if codec else []), (name, names)


def check_zarr_python(store, codec, sharded=False):
    """The store as zarr-python sees it: a v3 group of arrays, each with
    dimension_names and the codecs asked for."""
    root = zarr.open_group(str(store), mode="r", zarr_format=3)
    doc = json.loads((store / "zarr.json").read_text())
    assert doc["zarr_format"] == 3 and doc["node_type"] == "group"
    arrays = dict(root.arrays())
    assert arrays, f"{store}: no arrays"
    for name, arr in arrays.items():
        meta = json.loads((store / name / "zarr.json").read_text())
        assert meta["node_type"] == "array" and meta["chunk_grid"]["name"] == "regular"
        assert len(meta["dimension_names"]) == arr.ndim
        check_codecs(name, meta, codec, sharded)
        if arr.ndim and meta["dimension_names"][0] == "Time":
            assert meta["chunk_grid"]["configuration"]["chunk_shape"][0] == 1
    return arrays


def compare(nc_path, store, codec, sharded=False):
    arrays = check_zarr_python(store, codec, sharded)
    with xr.open_dataset(nc_path) as ref, \
            xr.open_zarr(str(store), consolidated=False, zarr_format=3) as got:
        assert set(got.variables) == set(ref.variables)
        assert set(arrays) == set(ref.variables)
        assert dict(got.sizes) == dict(ref.sizes)
        assert set(got.coords) == set(ref.coords)
        assert set(got.attrs) == set(ref.attrs)
        for k, v in ref.attrs.items():
            assert same_attr(got.attrs[k], v), (k, got.attrs[k], v)
        for name, var in ref.variables.items():
            z = got[name]
            assert z.dims == var.dims, name
            assert z.dtype == var.dtype, (name, z.dtype, var.dtype)
            assert set(z.attrs) == set(var.attrs), name
            for k, v in var.attrs.items():
                assert same_attr(z.attrs[k], v), (name, k, z.attrs[k], v)
            assert z.encoding.get("units") == var.encoding.get("units"), name
            a, b = z.values, var.values
            if a.dtype.kind == "f":
                assert np.array_equal(a, b, equal_nan=True), name
            else:
                assert np.array_equal(a, b), name
            # The same values straight from zarr-python, undecoded.
            if b.dtype.kind in "fiu":
                assert np.array_equal(arrays[name][...], b, equal_nan=b.dtype.kind == "f"), name
        # Times decoded as CF times, as from the NetCDF file.
        assert got["XTIME"].dtype.kind == "M"
        assert np.array_equal(got["XTIME"].values, ref["XTIME"].values)


@pytest.mark.parametrize("strategy,np_,codec_hint,codec", CASES,
                         ids=[f"{c[0].split('=', 1)[1]}{c[2]}-np{c[1]}" for c in CASES])
def test_zarr_reads_as_netcdf(tmp_path, strategy, np_, codec_hint, codec):
    ref = run_bench(np_, tmp_path / "nc", f"{strategy}:format=cdf2")
    got = run_bench(np_, tmp_path / "zarr", f"{strategy}:format=zarr{codec_hint}")
    for nc_path, store in zip(ref, got):
        assert store.is_dir() and (store / "zarr.json").is_file()
        compare(nc_path, store, codec, "shards=" in strategy)
    assert not list((tmp_path / "zarr").glob("*.tessera-*"))


def test_store_replaced_whole(tmp_path):
    """A second run replaces the stores: no old chunk or aside copy stays."""
    out = tmp_path / "z"
    run_bench(2, out, "strategy=serial:format=zarr:zstd=3")
    stale = out / NAMES[0] / "T" / "c" / "9"
    stale.mkdir()
    (stale / "0").write_bytes(b"old")
    run_bench(2, out, "strategy=serial:format=zarr")
    assert not stale.exists()
    assert sorted(p.name for p in out.iterdir()) == NAMES
    ref = run_bench(2, tmp_path / "nc", "strategy=serial:format=cdf2")
    compare(ref[0], out / NAMES[0], None)


@pytest.mark.parametrize("hints,np_,words", [
    ("strategy=direct:format=zarr", 2, "whole horizontal levels"),
    ("strategy=split:format=zarr", 2, "strategy=split"),
    ("strategy=aggregate:aggregators=2:format=zarr:chunks=2x10x10", 2, "one level deep"),
    ("strategy=serial:format=zarr:zstd=3:deflate=1", 2, "one compressor"),
    ("strategy=serial:format=zarr:shuffle=1:zstd=1", 1, "shuffle"),
])
def test_refused_at_create(tmp_path, hints, np_, words):
    """What the backend cannot write is a clear error on every rank, and no
    store (nor a temporary) is left."""
    out = tmp_path / "z"
    r = subprocess.run(bench_cmd(np_, out, hints), capture_output=True, text=True,
                       timeout=120, env=env())
    assert r.returncode != 0
    assert "TSR_EHINT" in r.stderr and words in r.stderr, r.stderr
    assert not out.exists() or not list(out.iterdir())


@pytest.mark.parametrize("hints,np_,message", [
    ("strategy=aggregate:aggregators=2:format=zarr:shards=2x100x100", 2,
     "Zarr: shards=: U would get shards 2 levels deep, but each of the 2 writers holds whole "
     "horizontal levels, so a shard must be one level deep (give at most two shard lengths, or "
     "one writer)"),
    ("strategy=serial:format=zarr:chunks=10x10:shards=15x20", 1,
     "Zarr: shards=: XLAT: a shard of 15 along dimension 0 is no multiple of its chunk length "
     "10; a shard holds whole chunks"),
])
def test_bad_shard_shape_refused(tmp_path, hints, np_, message):
    """A shard shape the strategy's writers cannot hold whole, or one that is
    no whole number of chunks: TSR_EHINT at create with this message, and
    nothing is left."""
    out = tmp_path / "z"
    r = subprocess.run(bench_cmd(np_, out, hints), capture_output=True, text=True,
                       timeout=120, env=env())
    assert r.returncode != 0
    assert "TSR_EHINT" in r.stderr and message in r.stderr, r.stderr
    assert not out.exists() or not list(out.iterdir())


def test_path_that_is_no_store(tmp_path):
    """A file (or a directory that holds no store) at the final name is
    refused at create and left as it was; nothing else appears."""
    out = tmp_path / "z"
    out.mkdir()
    (out / NAMES[0]).write_text("precious")
    other = out / NAMES[1]
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = subprocess.run(bench_cmd(2, out, "strategy=aggregate:aggregators=2:format=zarr"),
                       capture_output=True, text=True, timeout=120, env=env())
    assert r.returncode != 0
    assert "is not a Zarr store" in r.stderr, r.stderr
    assert (out / NAMES[0]).read_text() == "precious"
    assert (other / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir()) == NAMES


def session_members(sid):
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.getsid(int(d.name)) == sid:
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def zombie(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")
    except OSError:
        return True  # gone


def kill_session(sid):
    """SIGKILL to mpiexec and every rank (the launcher puts ranks in process
    groups of their own, all in mpiexec's session), then wait until they are
    gone, so their locks are released."""
    deadline = time.time() + 30
    while time.time() < deadline:
        alive = [p for p in session_members(sid) if not zombie(p)]
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def kill_midway(out):
    """Start a long run and kill it as soon as a store is being written."""
    cmd = mpiexec_command(MPIEXEC, 2) + [
        str(BENCH), "--nx", "96", "--ny", "96", "--nz", "30", "--steps", "400",
        "--output-every", "1", "--nocolons", "--out", str(out), "--hints",
        "strategy=serial:format=zarr:zstd=19", "--quiet"]
    p = subprocess.Popen(cmd, env=env(), start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    try:
        while time.time() < deadline and p.poll() is None:
            if out.is_dir() and list(out.glob("*.tessera-tmp")):
                break
            time.sleep(0.01)
        assert p.poll() is None, "the run ended before a store was in progress"
    finally:
        kill_session(p.pid)
        p.wait(timeout=60)
    left = sorted(out.iterdir())
    tmps = [x for x in left if x.name.endswith(".tessera-tmp")]
    finals = [x for x in left if not x.name.endswith((".tessera-tmp", ".tessera-lock"))]
    assert tmps, left
    for store in finals:  # complete stores only: every array has its document
        root = zarr.open_group(str(store), mode="r", zarr_format=3)
        assert "T" in dict(root.arrays()), store


def test_killed_run_leaves_no_store(tmp_path):
    """A job killed while a store is written leaves it only under its
    temporary name: every store under a final name is complete, the next run
    writes over the leftover, and `tessera clean` removes one."""
    out = tmp_path / "z"
    kill_midway(out)
    subprocess.run(bench_cmd(2, out, "strategy=serial:format=zarr"), check=True, timeout=120,
                   env=env())
    assert not (out / (NAMES[0] + ".tessera-tmp")).exists()
    zarr.open_group(str(out / NAMES[0]), mode="r", zarr_format=3)["T"][...]
    kill_midway(out)
    subprocess.run([sys.executable, "-m", "tessera", "clean", str(out)], check=True,
                   timeout=60, env=env())
    assert not list(out.glob("*.tessera-*"))


def test_trash_removed_not_followed(tmp_path):
    """A replaced store's trash name (`<store>.tessera-old-<pid>-<n>`) that a
    killed run left is removed by the next run of the same name, without
    following a link in it; `tessera clean` removes one too."""
    out = tmp_path / "z"
    run_bench(1, out, "strategy=serial:format=zarr")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("mine")
    trash = out / (NAMES[0] + ".tessera-old-999999-1")
    shutil.copytree(out / NAMES[0], trash)
    (trash / "T" / "link").symlink_to(outside, target_is_directory=True)
    (out / (NAMES[1] + ".tessera-old-999999-2")).symlink_to(outside)
    run_bench(1, out, "strategy=serial:format=zarr")
    assert sorted(p.name for p in out.iterdir()) == NAMES
    assert (outside / "keep").read_text() == "mine"
    shutil.copytree(out / NAMES[0], trash)
    r = subprocess.run([sys.executable, "-m", "tessera", "clean", str(out)], check=True,
                       capture_output=True, text=True, timeout=60, env=env())
    assert f"removed {trash}" in r.stdout, r.stdout
    assert sorted(p.name for p in out.iterdir()) == NAMES


def tree(store):
    return {p.relative_to(store): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def test_every_writer_count_same_bytes(tmp_path):
    """serial and aggregate's two writers write byte-identical stores (every
    chunk and document), and so does a second identical run."""
    hints = ":format=zarr:zstd=3"
    a = run_bench(3, tmp_path / "a", "strategy=serial" + hints)
    b = run_bench(3, tmp_path / "b", "strategy=aggregate:aggregators=2" + hints)
    c = run_bench(3, tmp_path / "c", "strategy=aggregate:aggregators=2" + hints)
    for x, y, z in zip(a, b, c):
        assert tree(x) == tree(y) == tree(z)
