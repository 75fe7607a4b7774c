"""Every strategy writes the same file: tessera-bench on the real WRF schema,
6 processes, once per strategy, then `tessera join` on the split pieces, then
every output compared with serial's, variable by variable and frame by frame.

servers runs 5 model ranks + 1 server, so the same domain is decomposed
differently (5 x 1 instead of 3 x 2): equality also shows that the data does
not depend on the decomposition. A strategy the library was built without
(TSR_ENOTBUILT, exit 3) is left out. The bench is $TESSERA_BUILD_DIR (default
<repo>/build)/apps/bench/tessera-bench; the module is skipped without it.
"""
import os
import shutil
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from tessera import join as tj
from tessera.bench.launch import BENCH_EXIT_NOTBUILT, mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")
NPROCS = 6

pytestmark = pytest.mark.skipif(
    not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")

STRATEGIES = {
    "serial": "strategy=serial",
    "direct": "strategy=direct",
    "aggregate": "strategy=aggregate:aggregators=3",
    "split": "strategy=split",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",
}
# The real 202-variable WRF header, tiny domain: 3 history outputs (one file each).
CASE = ["--schema", str(ROOT / "apps" / "bench" / "schemas" / "wrfout_d01.cdl"),
        "--nx", "24", "--ny", "18", "--nz", "5", "--steps", "2", "--output-every", "1",
        "--check", "--quiet"]
# WRF's global attributes recording the model's process grid: the one thing
# that differs by design when servers take a process away from the model.
GRID_ATTS = ("NTASKS_X", "NTASKS_Y", "NTASKS_TOTAL")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """strategy -> sorted list of its output files (split: joined ones)."""
    top = tmp_path_factory.mktemp("cross")
    # Hints come from --hints alone: TESSERA_HINTS would override them.
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_HINTS"}
    files, notbuilt = {}, []
    for name, hints in STRATEGIES.items():
        out = top / name
        out.mkdir()
        cmd = mpiexec_command(MPIEXEC, NPROCS) + [str(BENCH)] + CASE + [
            "--out", str(out), "--hints", hints]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        log = p.stdout + p.stderr
        if p.returncode == BENCH_EXIT_NOTBUILT or "TSR_ENOTBUILT" in log:
            notbuilt.append(name)
            continue
        assert p.returncode == 0 and "check: passed" in log, f"{name}: {' '.join(cmd)}\n{log}"
        if name == "split":
            pieces = sorted(str(f) for f in out.iterdir())
            assert pieces and all(tj.PIECE_RE.match(f) for f in pieces), pieces
            # Joined into a directory of their own: never beside the pieces.
            assert tj.main(["-q", "--out", str(top / "split-joined")] + pieces) == 0
            files[name] = sorted((top / "split-joined").iterdir())
        else:
            files[name] = sorted(f for f in out.iterdir() if not tj.PIECE_RE.match(f.name))
    if "serial" not in files or "split" not in files:
        pytest.skip(f"serial or split not built (not built: {notbuilt})")
    return files


def test_same_file_names(outputs):
    names = {s: [f.name for f in fs] for s, fs in outputs.items()}
    assert len(names["serial"]) == 3, names["serial"]
    for s, n in names.items():
        assert n == names["serial"], s


def test_ncdump_reads_every_file(outputs):
    ncdump = shutil.which("ncdump")
    if ncdump is None:
        pytest.skip("no ncdump")
    for s, fs in outputs.items():
        for f in fs:
            p = subprocess.run([ncdump, "-h", str(f)], capture_output=True, text=True)
            assert p.returncode == 0 and "dimensions:" in p.stdout, f"{s}: {f}: {p.stderr}"
        p = subprocess.run([ncdump, str(fs[-1])], capture_output=True, text=True)
        assert p.returncode == 0 and "data:" in p.stdout, f"{s}: {fs[-1]}: {p.stderr}"


def open_raw(path):
    ds = netCDF4.Dataset(path)
    ds.set_auto_maskandscale(False)  # compare stored values, bit for bit
    ds.set_auto_chartostring(False)
    return ds


def atts(obj, ignore=()):
    """Attributes without Tessera's own, as (type, bytes) so 1 and 1.0f differ."""
    out = {}
    for a in obj.ncattrs():
        if not a.startswith("tessera_") and a not in ignore:
            v = obj.getncattr(a)
            out[a] = v if isinstance(v, str) else (np.asarray(v).dtype.str, np.asarray(v).tobytes())
    return out


def first_difference(name, t, a, b):
    """Where two equally shaped arrays first differ, as a readable line."""
    ua = a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "S" else a
    ub = b.view(f"u{b.dtype.itemsize}") if b.dtype.kind != "S" else b
    idx = tuple(int(i) for i in np.argwhere(ua != ub)[0])
    count = int(np.count_nonzero(ua != ub))
    return f"{name} frame {t} at {idx}: {a[idx]!r} vs serial {b[idx]!r} ({count} values differ)"


def compare(path, ref_path, ignore=()):
    """Every difference between a file and serial's, as lines (empty: identical);
    @p ignore: global attributes left out."""
    diffs = []
    with open_raw(path) as ds, open_raw(ref_path) as ref:
        # Lists, not dicts: the order of the dimensions must match too.
        dims = [(n, len(d), d.isunlimited()) for n, d in ds.dimensions.items()]
        ref_dims = [(n, len(d), d.isunlimited()) for n, d in ref.dimensions.items()]
        if dims != ref_dims:
            diffs.append(f"dimensions {dims} vs serial {ref_dims}")
        ga, gr = atts(ds, ignore), atts(ref, ignore)
        if ga != gr:
            diffs.append("global attributes differ: " + ", ".join(
                sorted(ga.keys() ^ gr.keys() or {k for k in gr if ga[k] != gr[k]})))
        if list(ds.variables) != list(ref.variables):
            diffs.append(f"variables {list(ds.variables)} vs serial {list(ref.variables)}")
        for name in ref.variables:
            if name not in ds.variables:
                continue
            v, r = ds.variables[name], ref.variables[name]
            if (v.dtype, v.dimensions, v.shape) != (r.dtype, r.dimensions, r.shape):
                diffs.append(f"{name}: {v.dtype} {v.dimensions} {v.shape} vs serial "
                             f"{r.dtype} {r.dimensions} {r.shape}")
                continue
            if atts(v) != atts(r):
                diffs.append(f"{name}: attributes {atts(v)} vs serial {atts(r)}")
            rec = bool(v.dimensions) and ref.dimensions[v.dimensions[0]].isunlimited()
            for t in range(v.shape[0]) if rec else [None]:
                a = v[...] if t is None else v[t]
                b = r[...] if t is None else r[t]
                if a.tobytes() != b.tobytes():
                    diffs.append(first_difference(name, t, np.asarray(a), np.asarray(b)))
    return diffs


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "serial"])
def test_same_data_as_serial(outputs, strategy):
    if strategy not in outputs:
        pytest.skip(f"strategy={strategy} not built into this library")
    report = []
    ignore = GRID_ATTS if strategy == "servers" else ()
    for f, ref in zip(outputs[strategy], outputs["serial"]):
        report += [f"{strategy}: {f.name}: {d}" for d in compare(f, ref, ignore)]
        if strategy == "servers":  # 5 model ranks (5 x 1) + 1 server
            with open_raw(f) as ds:
                assert (int(ds.NTASKS_TOTAL), int(ds.NTASKS_X)) == (NPROCS - 1, NPROCS - 1)
    assert not report, "\n".join(report[:30])
