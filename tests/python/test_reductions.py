"""reduce=: time statistics into a derived wrfxtrm_* stream (docs/reductions.md).

- For serial, direct, aggregate and servers at 1 to 6 processes, with box,
  index-map (cells) and i,k,j decompositions, each derived
  file holds what NumPy computes over the history frames of its period: min,
  max and count exactly, sum and mean exactly as the documented double sum in
  frame order (cast to float at the end), std to float rounding; Times is the
  period's last frame's.
- The derived files of every run are bit-identical to each other (each
  element is folded by the rank that owns it, in frame order).
- Without @N a period is a file's frames.
- Malformed values, missing and text variables, a period that ends inside
  a file, and a restart with another rank count are refused with a sentence
  naming the culprit. (split writes a derived file per rank:
  test_reductions_split.py.)
- 6 outputs in one job give the same derived bytes (cmp) as 3 outputs, a
  restart, and 3 more: the incomplete period travels in a side file.
"""
import filecmp
import json
import subprocess

import netCDF4
import numpy as np
import pytest

from bench_runs import BENCH, MPIEXEC, clean_env, needs_bench
from tessera.bench.launch import mpiexec_command

pytestmark = needs_bench

# 6 history outputs (steps 0..5), one frame per file unless a run says otherwise.
CASE = ["--nx", "24", "--ny", "18", "--nz", "3", "--steps", "5", "--output-every", "1", "--quiet"]
SPEC = "T2/max@3+T2/min@3+T2/sum@3+T2/count@3+T/mean@3+T/std@3+U/max@3"
RUNS = {  # name -> (processes, hints, extra bench options)
    "serial-1": (1, "strategy=serial", []),
    "direct-2": (2, "strategy=direct", []),
    "aggregate-3": (3, "strategy=aggregate,aggregators=2", []),
    "servers-4": (4, "strategy=servers,io_tasks=1", []),
    "direct-6-fpf3": (6, "strategy=direct", ["--frames-per-file", "3"]),
    # Maps and another memory order reach reduce= through their canon.
    "direct-3-cells": (3, "strategy=direct", ["--decomp", "cells"]),
    "servers-3-xzy": (3, "strategy=servers,io_tasks=1", ["--memory-order", "xzy"]),
}


def bench(np_, out, hints, spec, extra=(), case=CASE, check=True, env=None):
    out.mkdir(parents=True, exist_ok=True)
    cmd = mpiexec_command(MPIEXEC, np_) + [str(BENCH)] + case + list(extra) + [
        "--out", str(out), "--hints", hints, "--reduce", spec]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=clean_env() | (env or {}))
    if check:
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}{p.stderr}"
    return p


def history_frames(out):
    """(file name, frame, dataset variables) of every history frame, in order."""
    frames = []
    for path in sorted(out.glob("wrfout_d01_*")):
        with netCDF4.Dataset(path) as ds:
            ds.set_auto_mask(False)
            for k in range(len(ds.dimensions["Time"])):
                frames.append((path.name, {v: ds[v][k] for v in ("T2", "T", "U", "Times")}))
    return frames


def expected(frames, var, op):
    """The statistic as docs/reductions.md defines it, spelled out in NumPy."""
    stack = np.stack([f[1][var] for f in frames])
    if op == "MAX":
        return stack.max(axis=0)
    if op == "MIN":
        return stack.min(axis=0)
    if op == "COUNT":
        return np.full(stack.shape[1:], len(frames), dtype=np.int32)
    total = stack[0].astype(np.float64)  # a double sum in frame order
    for s in stack[1:]:
        total = total + s.astype(np.float64)
    if op == "SUM":
        return total.astype(stack.dtype)
    if op == "MEAN":
        return (total / len(frames)).astype(stack.dtype)
    return np.std(stack.astype(np.float64), axis=0).astype(stack.dtype)  # STD


def derived_values(path):
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_mask(False)
        return {v: ds[v][:] for v in ds.variables}, ds.getncattr("tessera_reduce_source")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    top = tmp_path_factory.mktemp("reduce")
    for name, (np_, hints, extra) in RUNS.items():
        spec = SPEC.replace("@3", "") if "fpf3" in name else SPEC
        bench(np_, top / name, hints, spec, extra)
    return top


@pytest.mark.parametrize("name", list(RUNS))
def test_derived_equal_numpy(runs, name):
    out = runs / name
    frames = history_frames(out)
    assert len(frames) == 6
    derived = sorted(out.glob("wrfxtrm_d01_*"))
    # Two periods of 3 frames: named after the files of frames 0 and 3.
    firsts = [frames[0][0], frames[3][0]]
    assert [p.name for p in derived] == [n.replace("wrfout", "wrfxtrm", 1) for n in firsts]
    assert not list(out.glob("*.tessera-partial"))  # both periods complete
    for k, path in enumerate(derived):
        period = frames[3 * k:3 * k + 3]
        values, source = derived_values(path)
        assert f"over 3 frames: from {period[0][0]} frame" in source
        for item in SPEC.split("+"):
            var, op = item.split("@")[0].split("/")
            got = values[var + op.upper()][0]
            want = expected(period, var, op.upper())
            assert got.dtype == want.dtype, (var, op)
            if op == "std":
                np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=f"{path} {var}")
            else:
                np.testing.assert_array_equal(got, want, err_msg=f"{path} {var}{op.upper()}")
        assert bytes(values["Times"][0]) == bytes(period[-1][1]["Times"])
        with netCDF4.Dataset(path) as ds:
            assert ds["T2MAX"].cell_methods == "Time: maximum"
            assert ds["TSTD"].cell_methods == "Time: standard_deviation"
            assert ds["T2COUNT"].dtype == np.int32


def test_bit_identical_across_strategies(runs):
    """Every strategy and rank count folds each element the same way: the
    same history gives the same derived bytes. (The cells model computes on
    shuffled points, so its history, and with it its statistics, differ.)"""
    def history(name):
        return b"".join(f[1][v].tobytes() for f in history_frames(runs / name) for v in ("T2", "T", "U"))
    base_history = history("serial-1")
    base = {p.name: derived_values(p)[0] for p in (runs / "serial-1").glob("wrfxtrm_*")}
    same = [n for n in RUNS if "fpf3" not in n and history(n) == base_history]
    assert {"direct-2", "aggregate-3", "servers-4", "servers-3-xzy"} <= set(same), same
    for name in same:
        for path in (runs / name).glob("wrfxtrm_*"):
            values = derived_values(path)[0]
            for v, a in values.items():
                assert a.tobytes() == base[path.name][v].tobytes(), (name, path.name, v)


REFUSALS = [  # (spec, hints, extra options, the sentence)
    ("T2/median", "strategy=direct", [],
     "hint 'reduce=T2/median': expected none or items VAR/OP[@N] joined by '+' (OP mean, min, "
     "max, sum, count or std; N >= 1, the same for all; at most 16, none twice)"),
    ("T2/max@2+T2/min@3", "strategy=direct", [], "hint 'reduce=T2/max@2+T2/min@3': expected"),
    ("T2/max@0", "strategy=direct", [], "hint 'reduce=T2/max@0': expected"),
    ("NOPE/max", "strategy=direct", [], "hint 'reduce=NOPE/max': the file has no variable 'NOPE'"),
    ("Times/max", "strategy=direct", [],
     "hint 'reduce=Times/max': variable 'Times' is text (char), not a number"),
    ("T2/max@3", "strategy=direct", ["--frames-per-file", "2"],
     "hint 'reduce=T2/max@3': 'T2' gets a frame past the end of its period inside a file; a "
     "period must end with a file (make N a multiple of the frames per file)"),
]


@pytest.mark.parametrize("spec,hints,extra,sentence", REFUSALS)
def test_refusals(tmp_path, spec, hints, extra, sentence):
    p = bench(2, tmp_path / "out", hints, spec, extra, check=False)
    assert p.returncode != 0
    assert "TSR_EHINT" in p.stderr and sentence in p.stderr, p.stderr


def test_memory_counted(tmp_path):
    """The accumulators are in the statistics: bytes per element of each item
    (max/min: the type's 4, sum and mean 8, std 16, count none) times the
    elements of the rank's tile."""
    stats = tmp_path / "stats.jsonl"
    bench(2, tmp_path / "out", "strategy=direct", SPEC, ["--steps", "2"],
          env={"TESSERA_STATS_FILE": str(stats)})
    nx, ny, nz = 24, 18, 3
    total = (4 + 4 + 8) * nx * ny + (8 + 16) * nx * ny * nz + 4 * (nx + 1) * ny * nz
    records = [json.loads(line) for line in stats.read_text().splitlines()]
    sources = [r for r in records if "/wrfout_" in r["file"]]
    assert len(sources) == 3 and all("reduce_bytes" in r for r in sources)
    assert sources[0]["reduce_bytes"]["mean"] * 2 == total
    assert not any("reduce_bytes" in r for r in records if "/wrfxtrm_" in r["file"])


RESTART_SPEC = "T2/max@6+T2/min@6+T/mean@6+T/std@6+U/sum@6+T2/count@6"


@pytest.mark.parametrize("hints,servers", [
    ("strategy=direct", 0),
    # The I/O servers hold the accumulators: server 0 saves and loads the period.
    ("strategy=servers,io_groups=2,io_tasks=1", 2)])
def test_restart_byte_identical(tmp_path, hints, servers):
    """3 outputs, restart, 3 more == 6 outputs in one job, byte for byte."""
    case = ["--nx", "24", "--ny", "18", "--nz", "3", "--output-every", "1", "--quiet"]
    one = tmp_path / "one"
    bench(3 + servers, one, hints, RESTART_SPEC, ["--steps", "5"], case=case)
    two = tmp_path / "two"
    bench(3 + servers, two, hints, RESTART_SPEC, ["--steps", "2", "--restart-every", "2"], case=case)
    partial = list(two.glob("wrfxtrm_*.tessera-partial"))
    assert len(partial) == 1 and not list(two.glob("wrfxtrm_*0")), sorted(two.iterdir())
    rst = sorted(two.glob("wrfrst_d01_*"))[-1]
    # Another rank count cannot continue the period: the tiles differ.
    p = bench(2 + servers, two, hints, RESTART_SPEC, ["--steps", "5", "--restart", str(rst)],
              case=case, check=False)
    assert p.returncode != 0 and "was saved by 3 model ranks and this job has 2" in p.stderr, p.stderr
    bench(3 + servers, two, hints, RESTART_SPEC, ["--steps", "5", "--restart", str(rst)], case=case)
    a = sorted(one.glob("wrfxtrm_*"))
    b = sorted(two.glob("wrfxtrm_*"))
    assert [x.name for x in a] == [x.name for x in b] and len(a) == 1
    assert filecmp.cmp(a[0], b[0], shallow=False), "derived files differ after a restart"
    assert not list(two.glob("*.tessera-partial"))  # the side file is done with


def test_restart_where_folded(tmp_path):
    """A period folded on the model ranks does not continue on the servers."""
    case = ["--nx", "24", "--ny", "18", "--nz", "3", "--output-every", "1", "--quiet"]
    out = tmp_path / "out"
    bench(2, out, "strategy=direct", RESTART_SPEC, ["--steps", "2", "--restart-every", "2"], case=case)
    rst = sorted(out.glob("wrfrst_d01_*"))[-1]
    p = bench(3, out, "strategy=servers,io_tasks=1", RESTART_SPEC,
              ["--steps", "5", "--restart", str(rst)], case=case, check=False)
    assert p.returncode != 0 and ("holds a period folded on the model ranks, and this job folds on "
                                  "the I/O servers") in p.stderr, p.stderr


@pytest.mark.parametrize("hints", ["strategy=serial,format=grib2",
                                   "strategy=servers,io_groups=2,io_tasks=1,format=grib2"])
def test_grib2_stream_derives_netcdf(runs, tmp_path, hints):
    """GRIB2 keeps only variables it has a parameter for, and a statistic
    over a period has none: a GRIB2 stream's derived files are NetCDF,
    holding the same values as the NetCDF stream's (the history values do
    not depend on the format)."""
    out = tmp_path / "grib2"
    bench(3, out, hints, SPEC)
    derived = sorted(out.glob("wrfxtrm_d01_*"))
    want = sorted((runs / "serial-1").glob("wrfxtrm_d01_*"))
    assert [p.name for p in derived] == [p.name for p in want]
    assert list(out.glob("wrfout_d01_*"))[0].read_bytes()[:4] == b"GRIB"
    for got_path, want_path in zip(derived, want):
        assert got_path.read_bytes()[:3] == b"CDF"
        got, want_values = derived_values(got_path)[0], derived_values(want_path)[0]
        assert got.keys() == want_values.keys()
        for v in got:
            assert got[v].tobytes() == want_values[v].tobytes(), (got_path.name, v)
