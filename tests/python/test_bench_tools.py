"""tessera table / plot / demo and the command dispatcher, against JSON fixtures
and a stand-in bench (no MPI, no library needed)."""
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures" / "bench"
if str(HERE.parent.parent / "python") not in sys.path:
    sys.path.insert(0, str(HERE.parent.parent / "python"))

import pytest  # noqa: E402

from tessera import __main__ as cli  # noqa: E402
from tessera import demo, plot, table  # noqa: E402
from tessera.bench.results import COLUMNS, ResultsError, case_text, load, ranks_text, value  # noqa: E402

DEMO = FIX / "demo_results.json"
SINGLE = FIX / "bench_direct.json"


@pytest.fixture(autouse=True)
def fake_bench_python(monkeypatch):
    """The stand-in bench (`#!/usr/bin/env python3`) writes the frames row's
    NetCDF files with netCDF4: it runs with this interpreter, which has it."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def test_load_demo_results_and_single_records(tmp_path):
    recs = load([DEMO])
    assert [r["strategy"] for r in recs] == ["serial", "direct", "aggregate", "split", "servers"]
    single = load([SINGLE])
    assert len(single) == 1 and single[0]["strategy"] == "direct"
    # A directory contributes its *.json files in name order.
    d = tmp_path / "runs"
    d.mkdir()
    (d / "b.json").write_text(SINGLE.read_text())
    (d / "a.json").write_text(json.dumps([json.loads(SINGLE.read_text())] * 2))
    assert len(load([d])) == 3


def test_bad_files_name_the_problem(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(ResultsError, match="bad.json: not JSON"):
        load([bad])
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"strategy": "serial", "wall_s": 1.0}))
    with pytest.raises(ResultsError, match="'serial' lacks compute_s"):
        load([partial])
    with pytest.raises(ResultsError, match="missing.json"):
        load([tmp_path / "missing.json"])


def test_cells_format_the_metrics():
    rec = load([DEMO])[0]
    cells = {c.key: value(rec, c) for c in COLUMNS}
    assert cells["strategy"] == "serial"
    assert cells["ranks"] == "4"
    assert cells["wall_s"] == "12.50"
    assert cells["output_blocked_s"] == "4.000"
    assert cells["io_fraction"] == "32.0 %"
    assert cells["effective_bw"] == "46.2"   # 185 MB / 4 s
    assert cells["write_bw"] == "115.6"      # 185 MB / 1.6 s
    assert cells["check"] == "passed"
    assert ranks_text({"ranks": {"model": 3, "io": 1}}) == "3+1"


def test_table_has_every_run_and_names_the_skipped():
    text = table.format_table(load([DEMO]), legend=True)
    lines = text.splitlines()
    header = lines[0].split()
    assert header[:3] == ["strategy", "ranks", "wall"]
    assert "I/O" in lines[0] and "MB/s" in lines[0] and "drain" in lines[0]
    rows = [ln for ln in lines if ln.split() and ln.split()[0] in
            ("serial", "direct", "aggregate", "split")]
    assert len(rows) == 4
    assert "servers: skipped, not built into this library" in text
    # Columns line up: every data row has the header's width or less.
    assert all(len(r) <= len(lines[1]) for r in rows)
    assert "I/O share = blocked / wall" in text
    assert case_text(load([DEMO])).startswith("200 x 200 x 30, 20 steps, 5 history outputs")


def test_table_command(capsys):
    assert table.main([str(DEMO)]) == 0
    out = capsys.readouterr().out
    assert "aggregate" in out and "split" in out and "185.0 MB written" in out
    assert table.main([str(FIX / "nope.json")]) == 1


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = plot.plot(load([DEMO]), str(tmp_path / "sub" / "chart.png"))
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
    assert plot.main([str(DEMO), "-o", str(tmp_path / "c2.png")]) == 0
    with pytest.raises(ResultsError):
        plot.plot([{"strategy": "x", "demo_status": "failed"}], str(tmp_path / "none.png"))


def test_dispatcher(capsys, monkeypatch):
    assert cli.main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err
    monkeypatch.setitem(cli.COMMANDS, "absent", "a command whose module is missing")
    assert cli.main(["absent"]) == 2
    assert "not available" in capsys.readouterr().err
    assert cli.main(["table", str(SINGLE)]) == 0
    assert "direct" in capsys.readouterr().out


def test_demo_with_a_stand_in_bench(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("FAKE_NOT_BUILT", "servers")
    monkeypatch.setenv("TESSERA_HINTS", "strategy=serial")  # the demo must ignore it
    out = tmp_path / "demo"
    stage = tmp_path / "shm-stage"
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(out), "--nx", "20", "--ny", "16",
                    "--nz", "5", "--stage-dir", str(stage)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "[1/5] serial" in text and "[5/5] servers" in text
    assert "skipped: not built into this library" in text
    assert "chart: " in text and (out / "tessera-demo.png").exists()
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert [r["demo_status"] for r in runs] == ["ok"] * 4 + ["not built"]
    assert "TSR_ENOTBUILT" in runs[4]["demo_message"]
    assert [r["strategy"] for r in runs[:4]] == ["serial", "direct", "aggregate", "split"]
    assert not (out / "serial-files").exists()  # history files removed after verification
    assert (out / "serial.log").exists()
    # Every run starts from the one wrfinput_d01, then resumes from its first restart file.
    assert "[0/5] input     writing wrfinput_d01 (strategy=serial) on 4 processes [run 1/18] ... done" \
        in text
    # One overall count over every section (input, 5 strategies, 3 staged, 5
    # formats, the frames row, 3 plain), with the time left from the second run on.
    assert re.search(r"\[1/5\] serial .* \[run 2/18, about \d+ s left\] \.\.\. done", text), text
    assert "[run 18/18" in text and "[run 19/" not in text
    log = (out / "direct.log").read_text()
    assert f"--input {out}/input/wrfinput_d01" in log and "--restart-every 30" in log
    assert f"--restart {out}/direct-files/wrfrst_d01_2026-01-01_00_30_00" in log
    assert "resumed from step 30, verified" in text
    assert not (out / "input").exists() and not (out / "direct-resumed").exists()
    assert runs[0]["restart_read_s"] == 0.08 and runs[0]["restart_read_bytes"] == 38400

    # The plain counterparts run once each; the ratios Tessera / plain follow.
    assert "[plain 1/3] gather" in text and "[plain 3/3] split" in text
    assert "Tessera / plain" in text
    assert re.search(r"^serial\s+gather\s+4( \(oversubscribed\))?\s+4\.000\s+3\.600\s+1\.11\s+one run: no spread",
                     text, re.M), text
    assert re.search(r"^aggregate\s+pnetcdf\s+4( \(oversubscribed\))?\s+1\.200\s+1\.400\s+0\.86", text, re.M)
    plain = json.loads((out / "results.json").read_text())["plain_runs"]
    assert [r["strategy"] for r in plain] == ["plain-gather", "plain-pnetcdf", "plain-split"]
    # Serial, aggregate and split again, staged: each next to its in-place run,
    # blocked time and the time until the files are final in two columns
    # (the stand-in: staged blocked = weight / 2 + drain, drain = weight / 4).
    assert "[staged 1/3] serial" in text and "[staged 3/3] split" in text
    assert f"--stage-dir {stage}" in (out / "serial-staged.log").read_text()
    assert not stage.exists()  # made by the bench, removed once empty
    staged = json.loads((out / "results.json").read_text())["staged_runs"]
    assert [(r["strategy"], r["demo_status"]) for r in staged] == [
        ("serial", "ok"), ("aggregate", "ok"), ("split", "ok")]
    assert f"Staged into {stage}, final files on disk" in text
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("strategy") and "final after s" in ln)
    assert lines[head].split()[:8] == ["strategy", "written", "blocked", "s", "while", "running",
                                       "s", "final"]
    rows = [ln.split() for ln in lines[head + 2:head + 8]]
    assert rows[0] == ["serial", "in", "place", "4.000", "3.900", "0.100"]
    assert rows[1] == ["serial", "staged", "3.000", "2.000", "1.000", "0.75"]
    assert rows[3] == ["aggregate", "staged", "0.900", "0.600", "0.300", "0.75"]
    assert rows[4] == ["split", "in", "place", "0.700", "0.600", "0.100"]
    assert "final after: from the end of the last step until" in text
    # The fastest strategy (split, in the stand-in) writes one history output per
    # format; the stand-in's files hold 4, 1.2 and 2 bytes per value (Zarr 4
    # and, with gzip, 1.25). Zarr's writers hold whole chunks, so its rows take
    # the best of serial, aggregate and servers (aggregate; servers not built).
    assert re.search(r"\[format 1/5\] classic CDF-2      split on 4 processes \[run 10/18, about "
                     r"[^\]]+ left\] \.\.\. done", text), text
    assert re.search(r"^classic CDF-2\s+0\.700\s+\S+\s+0\.0\s+1\.00\s+verified$", text, re.M), text
    assert re.search(r"^NetCDF-4 deflate=1\s+1\.050\s+\S+\s+0\.0\s+0\.30\s+verified$", text, re.M)
    assert re.search(r"^GRIB2\s+1\.400\s+\S+\s+0\.0\s+0\.50\s+written \(not read back\)$",
                     text, re.M)
    assert "[format 4/5] Zarr               aggregate on 4 processes" in text
    assert re.search(r"^Zarr \(aggregate\)\s+1\.320\s+\S+\s+0\.0\s+1\.00\s+written \(not read back\)$",
                     text, re.M), text
    assert re.search(r"^Zarr gzip=1 \(aggregate\)\s+1\.680\s+\S+\s+0\.0\s+0\.31\s+written",
                     text, re.M)
    assert "Zarr (strategy in brackets): the best strategy whose writers hold whole chunks" in text
    fmts = json.loads((out / "results.json").read_text())["format_runs"]
    assert [(r["format"], r["strategy"], r["file_bytes"]) for r in fmts] == [
        ("classic CDF-2", "split", 6400), ("NetCDF-4 deflate=1", "split", 1920),
        ("GRIB2", "split", 3200), ("Zarr", "aggregate", 6400),
        ("Zarr gzip=1", "aggregate", 2000)]
    assert "--check" not in (out / "format-grib2.log").read_text()  # NetCDF cannot read it
    assert "--check" not in (out / "format-zarr.log").read_text()
    assert "strategy=aggregate:aggregators=2:format=zarr:deflate=1 --out" in (
        out / "format-zarr-deflate1.log").read_text()
    assert "format=netcdf4:deflate=1 --out" in (out / "format-netcdf4-deflate1.log").read_text()
    assert not (out / "format-cdf2-files").exists()
    # The frames row: the best strategy that writes whole files (not split: aggregate
    # here) with checksum=crc32 and reduce= on the history files only; every
    # sum and statistic checked (the stand-in writes real sums and statistics).
    assert "[frames] checksum + reduce aggregate on 4 processes [run 15/18" in text
    assert ("strategy=aggregate:aggregators=2,wrfout*:checksum=crc32:reduce=T2/max@7+T2/min@7"
            "+T/mean@7 --check") in (out / "frames.log").read_text()
    assert ("every sum of the 7 history file(s) verified; T2MAX, T2MIN, TMEAN equal NumPy's "
            "over their 7 frame(s)") in text
    assert re.search(r"output blocked 1\.200 s against 1\.200 s without, 1\.00x", text), text
    assert json.loads((out / "results.json").read_text())["frames_run"]["demo_status"] == "ok"
    assert not (out / "frames-files").exists()
    # 4 strategies, 3 staged, 3 plain runs, 2 formats read back (GRIB2 and Zarr
    # are not), the frames row.
    assert "all 13 runs verified" in text


def test_demo_skips_staged_rows_without_the_tier(tmp_path, capsys):
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--strategies",
                    "split", "--no-plain", "--stage-dir", str(tmp_path / "none" / "stage")])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert f"tessera demo: no staged rows: {tmp_path / 'none'} does not exist" in text
    assert "[staged" not in text and "Staged into" not in text
    assert json.loads((tmp_path / "results.json").read_text())["staged_runs"] == []


def test_demo_without_format_rows(tmp_path, capsys):
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--strategies",
                    "serial", "--no-plain", "--no-formats", "--no-stage"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "[format" not in text and "Formats:" not in text
    assert json.loads((tmp_path / "results.json").read_text())["format_runs"] == []
    assert "all 1 runs verified" in text


def test_demo_prints_the_studies_three_rows(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NOT_BUILT", "servers")
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--nx", "20", "--ny",
                    "16", "--nz", "5", "--strategies", "serial,split,servers", "--no-stage"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "the WRF I/O studies' rows: runs from wrfinput_d01, restart files every 30 steps" in text
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split() == ["MB", "serial", "split"])
    rows = [ln.split() for ln in lines[head + 2:head + 5]]
    # 20 x 16 x 5 x 4 bytes x 6 fields per state file (the stand-in's figures);
    # the stand-in's times scale with the strategy: serial 4, split 0.7.
    assert rows[0] == ["Input", "0.0", "0.080", "0.014"]
    assert rows[1] == ["Output", "0.1", "4.000", "0.700"]
    assert rows[2] == ["Restart", "0.1", "/", "0.0", "0.400", "/", "0.080", "0.070", "/", "0.014"]
    assert "Restart: writing the restart files / reading one back to resume" in text


def test_demo_reports_a_failed_resume(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL_RESUMED", "split")
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--strategies",
                    "serial,split", "--stage-dir", str(tmp_path / "stage")])
    captured = capsys.readouterr()
    assert rc == 1
    assert ("FAILED: resumed from wrfrst_d01_2026-01-01_00_30_00: exit 1: check: FAILED"
            in captured.out)
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert [r["demo_status"] for r in runs] == ["ok", "failed"]


def test_demo_stops_without_its_input_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "serial")  # the input is written with strategy=serial
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "[0/5] input" in captured.out and "[1/5]" not in captured.out
    assert "tessera demo: cannot write the input file: exit 1: check: FAILED" in captured.err


def test_demo_reports_a_failed_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "split")
    rc = demo.main(["--bench", str(FIX / "fake_bench.py"), "--mpiexec",
                    str(FIX / "fake_mpiexec.sh"), "--out", str(tmp_path), "--strategies",
                    "serial,split", "--stage-dir", str(tmp_path / "stage")])
    captured = capsys.readouterr()
    assert rc == 1
    assert "FAILED: exit 1: check: FAILED" in captured.out
    assert "1 run(s) failed" in captured.err


def test_demo_rejects_unknown_strategies(capsys):
    assert demo.main(["--strategies", "serial,bogus", "--bench", sys.executable]) == 2
    assert "unknown strategy bogus" in capsys.readouterr().err
