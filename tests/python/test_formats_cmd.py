"""`tessera formats` against the stand-in bench (tests/python/fixtures/bench):
every (strategy, format) pair runs once per repeat, interleaved, and the table
prints the stand-in's figures and the paired ratios exactly."""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from tessera import formats  # noqa: E402

FIX = Path(__file__).resolve().parent / "fixtures" / "bench"


def run(tmp_path, *extra):
    return formats.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                         str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--nx", "20",
                         "--ny", "16", "--nz", "5", *extra])


def test_formats_prints_sizes_medians_and_ratios(tmp_path, capsys):
    assert run(tmp_path, "--repeat", "2") == 0
    text = capsys.readouterr().out
    # Interleaved: the second repeat runs the pairs in reverse order.
    order = re.findall(r"^\[(\d)/2\] (\S+)\s+(\S+)", text, re.M)
    assert order[0] == ("1", "serial", "cdf2") and order[6] == ("1", "servers", "netcdf4-deflate1")
    assert order[7] == ("2", "servers", "netcdf4-deflate1") and order[13] == ("2", "serial", "cdf2")
    # The stand-in: serial blocks 4 s, aggregate 1.2, servers 0.1; deflate 1.5x;
    # 1600 values of 4 bytes, 1.2 compressed. One figure: no spread.
    assert re.search(r"^serial\s+netcdf4-deflate1\s+6\.000 \(6\.000-6\.000\)\s+0 \(0-0\)\s+0\.0$",
                     text, re.M), text
    rows = dict(re.findall(r"^(\S.*?)\s{2,}(\d\.\d\d \(\S+\))", text, re.M))
    assert rows["size NetCDF-4 deflate=1 / CDF-2 (serial's files)"] == "0.30 (0.30-0.30)"
    assert rows["aggregate: blocked deflate=1 / uncompressed NetCDF-4"] == "1.50 (1.50-1.50)"
    assert rows["blocked serial deflate=1 / aggregate deflate=1"] == "3.33 (3.33-3.33)"
    assert ">= 2 (aggregate's writers)" in text
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["runs"]) == 14 and saved["runs"][0]["file_bytes"] == 6400
    assert "--check" not in (tmp_path / "serial-cdf2.log").read_text()
    assert not (tmp_path / "serial-cdf2-files").exists()


def test_formats_reports_a_failed_pair(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "aggregate")
    assert run(tmp_path, "--repeat", "1", "--check") == 1
    captured = capsys.readouterr()
    assert "aggregate netcdf4           failed: exit 1: check: FAILED" in captured.out
    assert "2 run(s) failed" in captured.err
    # The ratios that need aggregate have no figures; the others still do.
    assert re.search(r"^blocked serial deflate=1 / aggregate deflate=1\s+-", captured.out, re.M)
    assert re.search(r"^servers: blocked deflate=1 / uncompressed NetCDF-4\s+1\.50", captured.out,
                     re.M)


def test_formats_rejects_bad_arguments(capsys):
    assert formats.main(["--repeat", "0", "--bench", sys.executable]) == 2
    assert "--repeat >= 1" in capsys.readouterr().err
