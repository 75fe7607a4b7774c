"""tessera-bench --plain writes the files Tessera writes, and `tessera overhead`
prints its paired ratios.

Each plain method against the strategy it stands for, at 3 processes on the
default fields and on tests/bench/schemas/unusual.cdl (empty tiles, scalars,
fixed and double fields): same dimensions, variables, attributes (in order)
and values, file by file (split: piece by piece). Then `tessera overhead` run
tiny: its table has a row per strategy with a median ratio, its spread and a
verdict. Skipped without tessera-bench or mpiexec; a method or strategy the
build lacks (PnetCDF, exit 3) is skipped.
"""
import os
import re
import subprocess
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from bench_runs import BENCH, MPIEXEC, ROOT, needs_bench
from tessera import overhead
from tessera.bench.launch import BENCH_EXIT_NOTBUILT, mpiexec_command


SCHEMAS = {
    "default": ["--nx", "24", "--ny", "20", "--nz", "4", "--steps", "4", "--output-every", "2",
                "--frames-per-file", "2"],
    "unusual": ["--schema", str(ROOT / "tests" / "bench" / "schemas" / "unusual.cdl"),
                "--nx", "13", "--ny", "9", "--nz", "4", "--steps", "3", "--output-every", "1",
                "--frames-per-file", "2"],
}
PAIRS = [("serial", "gather"), ("direct", "pnetcdf"), ("direct", "pnetcdf-bput"),
         ("direct", "pnetcdf-vara"), ("split", "split")]


def env():
    e = {k: v for k, v in os.environ.items() if k != "TESSERA_HINTS"}
    e.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return e


def bench(out: Path, args: list) -> None:
    cmd = mpiexec_command(MPIEXEC, 3) + [str(BENCH), "--check", "--quiet", "--out", str(out)]
    proc = subprocess.run(cmd + args, capture_output=True, text=True, timeout=120, env=env())
    if proc.returncode == BENCH_EXIT_NOTBUILT:
        pytest.skip(f"not built: {' '.join(args)}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check: passed" in proc.stdout


def same_file(a: Path, b: Path) -> None:
    with netCDF4.Dataset(a) as x, netCDF4.Dataset(b) as y:
        assert x.data_model == y.data_model
        assert [(d.name, len(d), d.isunlimited()) for d in x.dimensions.values()] == \
               [(d.name, len(d), d.isunlimited()) for d in y.dimensions.values()]
        assert x.ncattrs() == y.ncattrs()
        for k in x.ncattrs():
            assert np.array_equal(np.asarray(x.getncattr(k)), np.asarray(y.getncattr(k))), k
        assert list(x.variables) == list(y.variables)
        for name, v in x.variables.items():
            w = y.variables[name]
            assert (v.dimensions, v.dtype) == (w.dimensions, w.dtype), name
            assert v.ncattrs() == w.ncattrs(), name
            for k in v.ncattrs():
                assert np.array_equal(np.asarray(v.getncattr(k)), np.asarray(w.getncattr(k)))
            v.set_auto_mask(False)
            w.set_auto_mask(False)
            assert np.array_equal(v[...], w[...]), f"{b}: {name} differs"


@needs_bench
@pytest.mark.parametrize("schema", list(SCHEMAS))
@pytest.mark.parametrize("strategy,method", PAIRS, ids=[f"{s}-{m}" for s, m in PAIRS])
def test_plain_files_equal_tessera_files(tmp_path, schema, strategy, method):
    bench(tmp_path / "tessera", SCHEMAS[schema] + ["--hints", f"strategy={strategy}"])
    bench(tmp_path / "plain", SCHEMAS[schema] + ["--plain", method])
    files = sorted(p.name for p in (tmp_path / "tessera").iterdir())
    assert files and files == sorted(p.name for p in (tmp_path / "plain").iterdir())
    for name in files:
        same_file(tmp_path / "tessera" / name, tmp_path / "plain" / name)


def test_verdict_follows_the_spread():
    within = overhead.paired([{"t": 1.1}, {"t": 0.9}], [{"t": 1.0}, {"t": 1.0}], "t")
    assert (within["min"], within["max"]) == (0.9, 1.1)
    assert overhead.verdict(within) == "within spread"
    slower = overhead.paired([{"t": 1.2}, {"t": 1.4}], [{"t": 1.0}, {"t": 1.0}], "t")
    assert overhead.verdict(slower) == "+30 %"
    assert overhead.ratio_text(slower) == "1.30 (1.20-1.40)"
    assert overhead.verdict(overhead.paired([{"t": 2.0}], [{"t": 1.0}], "t")) == \
        "one run: no spread"


@needs_bench
def test_overhead_prints_paired_ratios(tmp_path, capsys):
    js = tmp_path / "o.json"
    rc = overhead.main(["--bench", str(BENCH), "--out", str(tmp_path), "--np", "2",
                        "--repeat", "2", "--strategies", "serial,split", "--nx", "24",
                        "--ny", "20", "--nz", "4", "--json", str(js)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "blocked ratio (spread)" in out and "wall ratio (spread)" in out
    ratio = r"\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)"
    verdict = r"(within spread|[+-]\d+ %)"
    for strategy, method in (("serial", "gather"), ("split", "split")):
        row = re.search(rf"^{strategy}\s+{method}\s+2\s+\S+\s+\S+\s+{ratio}\s+{verdict}\s+"
                        rf"{ratio}\s+{verdict}$", out, re.M)
        assert row, out
    # Interleaved: the first repeat runs Tessera first, the second plain first.
    runs = [ln.split()[5] for ln in out.splitlines() if re.match(r"  \[\d+/\d+\] np 2 repeat", ln)]
    assert runs == ["serial", "split", "plain:gather", "plain:split",
                    "plain:split", "plain:gather", "split", "serial"]
    assert js.is_file()


def test_against_refuses_different_bytes():
    """--against: an older build whose default schema writes other bytes is
    no pair; the table says so instead of printing a ratio."""
    new = [{"output_blocked_s": 1.6, "bytes": 3523953405}, {"output_blocked_s": 1.7, "bytes": 3523953405}]
    old = [{"output_blocked_s": 1.1, "bytes": 2756346621}, {"output_blocked_s": 1.2, "bytes": 2756346621}]
    records = {(2, "split"): new, (2, "old:split"): old}
    text = overhead.pairs_table(records, ["split"], [2], 2, "", "old:", ("this build", "other build"))
    assert "not the same bytes (3.52 GB against 2.76 GB)" in text, text
    assert "1.45" not in text, text
    same = {(2, "split"): new, (2, "old:split"): [dict(r, bytes=3523953405) for r in old]}
    text = overhead.pairs_table(same, ["split"], [2], 2, "", "old:", ("this build", "other build"))
    assert "not the same bytes" not in text and "1.45" in text, text
