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
    # One overall count of the 32 runs (CDF-2, then per strategy NetCDF-4 with
    # and without deflate=1 and Zarr with no codec, gzip=1 and zstd=1), the
    # repeat and the time left on each line.
    order = re.findall(r"^\[(\d+)/32\] (\S+)\s+(\S+) .*\(repeat (\d)/2(, about .* left)?\)$",
                       text, re.M)
    assert [int(o[0]) for o in order] == list(range(1, 33))
    assert [o[2] for o in order[:6]] == ["cdf2", "netcdf4", "netcdf4-deflate1", "zarr",
                                         "zarr-gzip1", "zarr-zstd1"]
    assert order[0][1:4] == ("serial", "cdf2", "1") and order[15][1:4] == ("servers", "zarr-zstd1", "1")
    assert order[16][1:4] == ("servers", "zarr-zstd1", "2") and order[31][1:4] == ("serial", "cdf2", "2")
    assert order[1][4].startswith(", about") and order[31][4] == ""
    # The stand-in: serial blocks 4 s, aggregate 1.2, servers 0.1; deflate 1.5x;
    # 1600 values of 4 bytes, 1.2 compressed. One figure: no spread.
    assert re.search(r"^serial\s+netcdf4-deflate1\s+6\.000 \(6\.000-6\.000\)\s+0 \(0-0\)\s+0\.0$",
                     text, re.M), text
    # Zarr: the stand-in's store is a directory; its chunk holds 1.25 bytes per
    # value with gzip, written 1.4x as slowly as with no compressor.
    assert re.search(r"^aggregate\s+zarr-gzip1\s+1\.680 \(1\.680-1\.680\)", text, re.M), text
    rows = dict(re.findall(r"^(\S.*?)\s{2,}(\d\.\d\d \(\S+\))", text, re.M))
    assert rows["size NetCDF-4 deflate=1 / CDF-2 (serial's files)"] == "0.30 (0.30-0.30)"
    assert rows["aggregate: blocked deflate=1 / uncompressed NetCDF-4"] == "1.50 (1.50-1.50)"
    assert rows["blocked serial deflate=1 / aggregate deflate=1"] == "3.33 (3.33-3.33)"
    assert rows["size Zarr / CDF-2 (serial's files)"] == "1.00 (1.00-1.00)"
    assert rows["size Zarr gzip=1 / NetCDF-4 deflate=1 (serial's files)"] == "1.04 (1.04-1.04)"
    assert rows["servers: blocked Zarr / NetCDF-4"] == "1.10 (1.10-1.10)"
    assert rows["serial: blocked Zarr gzip=1 / NetCDF-4 deflate=1"] == "0.93 (0.93-0.93)"
    assert ">= 2 (aggregate's writers)" in text
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["runs"]) == 32 and saved["runs"][0]["file_bytes"] == 6400
    by = {(r["strategy"], r["format"]): r["file_bytes"] for r in saved["runs"]}
    assert by[("servers", "zarr")] == 6400 and by[("serial", "zarr-zstd1")] == 2400
    assert "--check" not in (tmp_path / "serial-cdf2.log").read_text()
    assert not (tmp_path / "serial-cdf2-files").exists()
    assert not (tmp_path / "serial-zarr-files").exists()


def test_formats_leaves_zarr_out_when_not_built(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NOT_BUILT", "zarr")
    assert run(tmp_path, "--repeat", "1") == 0
    text = capsys.readouterr().out
    assert "serial    zarr              not built" in text
    assert not re.search(r"^\S+\s+zarr\S*\s+-", text, re.M)  # no empty rows
    assert "size Zarr" not in text


def test_formats_reports_a_failed_pair(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "aggregate")
    assert run(tmp_path, "--repeat", "1", "--check") == 1
    captured = capsys.readouterr()
    assert "aggregate netcdf4           failed: exit 1: check: FAILED" in captured.out
    assert "5 run(s) failed" in captured.err  # NetCDF-4 twice, Zarr three times
    # The ratios that need aggregate have no figures; the others still do.
    assert re.search(r"^blocked serial deflate=1 / aggregate deflate=1\s+-", captured.out, re.M)
    assert re.search(r"^servers: blocked deflate=1 / uncompressed NetCDF-4\s+1\.50", captured.out,
                     re.M)


def test_formats_rejects_bad_arguments(capsys):
    assert formats.main(["--repeat", "0", "--bench", sys.executable]) == 2
    assert "--repeat >= 1" in capsys.readouterr().err


def test_formats_writer_counts_no_shuffle_and_what_the_targets_need(tmp_path, capsys):
    assert run(tmp_path, "--repeat", "1", "--aggregators", "4", "--io-tasks", "2",
               "--no-shuffle", "--no-zarr") == 0
    text = capsys.readouterr().out
    assert "aggregate 4 writers, servers 1 group of 2 task(s)" in text
    assert "strategy=aggregate:aggregators=4:format=netcdf4 " in (
        tmp_path / "aggregate-netcdf4.log").read_text()
    assert "strategy=servers:io_groups=1:io_tasks=2:format=netcdf4:deflate=1 " in (
        tmp_path / "servers-netcdf4-deflate1.log").read_text()
    assert "format=netcdf4:deflate=1:shuffle=0 " in (
        tmp_path / "serial-netcdf4-deflate1-noshuffle.log").read_text()
    order = re.findall(r"^\[\d+/8\] (\S+)\s+(\S+)", text, re.M)
    assert order[3] == ("serial", "netcdf4-deflate1-noshuffle") and len(order) == 8
    # The stand-in compresses to the same size with or without shuffle, as fast.
    rows = dict(re.findall(r"^(\S.*?)\s{2,}(\d\.\d\d \(\S+\))", text, re.M))
    assert rows["size deflate=1 (shuffled) / deflate=1 shuffle=0 (serial's files)"] == "1.00 (1.00-1.00)"
    assert rows["serial: blocked deflate=1 (shuffled) / deflate=1 shuffle=0"] == "1.00 (1.00-1.00)"
    assert ">= 4 (aggregate's writers)" in text
    # What the targets need, from the stand-in's figures: serial 4 s, 6 s with
    # deflate (C = 2 s over 7 outputs); aggregate 1.2 s and 1.8 s; servers
    # 0.1 s; compute 8 s over 60 steps, an output every 10.
    need = {ln.split("  ")[0]: re.split(r"\s{2,}", ln) for ln in text.splitlines()}
    assert need["compression cost C"][2] == "2.000 s (0.286 s per output)"
    assert need["aggregate deflate <= 2 x uncompressed"][2:] == [
        "C / U_a = 1.67, W = 4", "reachable at W = 4"]
    assert need["serial deflate / aggregate deflate >= W"][2] == "U_s = 4.000 s, 4 x U_a = 4.800 s"
    assert need["parallel compression efficiency"][2] == "0.83"
    assert need["servers deflate <= 1.2 x uncompressed"][2:] == [
        "0.143 s vs 0.020 s", "not at T = 2: needs T >= 15"]
    assert need["servers keep up with the model"][2:] == ["0.143 s vs 1.333 s", "yes at T = 2"]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert (saved["aggregators"], saved["io_tasks"], len(saved["runs"])) == (4, 2, 8)
    assert saved["targets"]["medians"]["frames"] == 7
    assert saved["targets"]["bounds"]["c"] == 2.0


def test_formats_rejects_writer_counts_the_processes_cannot_hold(capsys):
    assert formats.main(["--aggregators", "5", "--bench", sys.executable]) == 2
    assert "--aggregators 5 must be 1..4" in capsys.readouterr().err
    assert formats.main(["--io-tasks", "4", "--bench", sys.executable]) == 2
    assert "--io-tasks 4 1..3 (the model keeps a rank)" in capsys.readouterr().err


def test_formats_says_when_the_targets_table_lacks_a_core_per_rank(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.setattr(formats.os, "cpu_count", lambda: 2)
    assert run(tmp_path, "--repeat", "1") == 0
    assert ("a core each; not so here: 4 processes on 2 cores, so the verdicts hold for these "
            "figures, not for a core per rank):") in capsys.readouterr().out
    monkeypatch.setattr(formats.os, "cpu_count", lambda: 16)
    assert run(tmp_path, "--repeat", "1") == 0
    assert "that compress, a core each):" in capsys.readouterr().out
