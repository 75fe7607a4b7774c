"""`tessera overhead --yardstick`: the hand-written program of ../shared/bench/
(code we did not write) on the same bytes as the bench.

The pure parts (process grid, RESULT line, schema form) always run; the run
itself builds the yardstick with mpicc from ../shared/bench/wrfout_bench.c
and is skipped where that source, mpicc, mpiexec or tessera-bench is missing.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tessera import overhead
from tessera import overhead_yardstick as hand

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
SHARED = ROOT.parent / "shared" / "bench"
ANCHOR = SHARED / "anchor12x30.cdl"
NC_MPI_INCLUDE = "/usr/lib/x86_64-linux-gnu/netcdf/mpi/include"


def test_process_grid_is_the_yardsticks():
    # MPI_Dims_create's most balanced pair, fewer tasks in x.
    assert [hand.process_grid(n) for n in (1, 2, 4, 6, 8, 16)] == \
        [(1, 1), (1, 2), (2, 2), (2, 3), (2, 4), (4, 4)]


def test_result_line():
    text = ("noise\nRESULT,gather,-,2,1,2,3,3833856,3844224,0.0015,0.0026,0.0001,0.0041,"
            "0.0000,0.0041,0.924,0.924,0.0010,0.0008,0.0008\n")
    rec = hand.parse(text)
    assert rec["output_blocked_s"] == 0.0041 and rec["t_def"] == 0.0015
    assert rec["data_bytes"] == 3833856
    assert "error" in hand.parse("no result here")


def test_schema_form(tmp_path):
    cdl = tmp_path / "s.cdl"
    cdl.write_text("netcdf s {\nvariables:\n char Times(Time, DateStrLen) ;\n"
                   " float T(Time, bottom_top, south_north, west_east) ;\n"
                   " float T2(Time, south_north, west_east) ;\n}\n")
    assert hand.schema_counts(cdl) == (1, 1)
    cdl.write_text(cdl.read_text().replace("}\n", " float U(Time, bottom_top, south_north, "
                                                  "west_east_stag) ;\n}\n"))
    with pytest.raises(ValueError, match="no counterpart"):
        hand.schema_counts(cdl)


@pytest.mark.skipif(not ANCHOR.is_file(), reason="../shared/bench is not beside the checkout")
def test_anchor_schema_is_the_yardsticks():
    assert hand.schema_counts(ANCHOR) == (12, 30)


def test_refuses_without_schema(tmp_path, capsys):
    prog = tmp_path / "yard"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    fake_bench = tmp_path / "bench"
    fake_bench.write_text("#!/bin/sh\n")
    fake_bench.chmod(0o755)
    rc = overhead.main(["--bench", str(fake_bench), "--out", str(tmp_path / "o"),
                        "--yardstick", str(prog)])
    assert rc == 2
    assert "--yardstick needs --schema" in capsys.readouterr().err


NEEDS_RUN = pytest.mark.skipif(
    not (ANCHOR.is_file() and shutil.which("mpicc") and shutil.which("mpiexec")
         and shutil.which("ncdump") and BENCH.is_file()),
    reason="needs ../shared/bench, mpicc, mpiexec, ncdump and tessera-bench")


@pytest.fixture(scope="module")
def yardstick(tmp_path_factory):
    """wrfout_bench built from ../shared/bench/, once for the module."""
    prog = tmp_path_factory.mktemp("yardstick") / "wrfout_bench"
    build = subprocess.run(["mpicc", "-O2", f"-I{NC_MPI_INCLUDE}", "-o", str(prog),
                            str(SHARED / "wrfout_bench.c"), "-lnetcdf_mpi", "-lpnetcdf"],
                           capture_output=True, text=True)
    if build.returncode != 0:
        pytest.skip(f"the yardstick does not build here: {build.stderr[-300:]}")
    return prog


def mpiexec(n):
    return overhead.mpiexec_command("mpiexec", n)  # --allow-run-as-root where root


@NEEDS_RUN
@pytest.mark.parametrize("method,plain", [("pnc_nb", "pnetcdf"), ("gather", "gather"),
                                          ("split", "split")])
def test_bench_replays_the_yardsticks_header(tmp_path, yardstick, method, plain):
    # The header the yardstick writes, replayed by the bench: the same header
    # byte for byte (so the data lies at the same offsets) and the same file
    # sizes. The shared schema alone put PnetCDF's data at 3,584, not 10,240.
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    case = {"nx": 16, "ny": 12, "nz": 3, "n3d": 12, "n2d": 30, "frames": 1}
    cdl = hand.own_header(mpiexec(1), str(yardstick), method, case, tmp_path, env, 120)
    empty, _, _ = hand.run(mpiexec(2), str(yardstick), method, dict(case, frames=0),
                           tmp_path / "empty", env, 120)
    rec, _, text = hand.run(mpiexec(2), str(yardstick), method, case, tmp_path / "hand", env, 120)
    assert "error" not in rec and "error" not in empty, text
    bench = subprocess.run(mpiexec(2) + [str(BENCH), "--nx", "16", "--ny", "12", "--nz", "3",
                                         "--steps", "0", "--sweeps", "0", "--halo", "0",
                                         "--px", "1", "--py", "2", "--quiet",
                                         "--schema", str(cdl), "--plain", plain,
                                         "--start", "2024-01-01_00:00:00",
                                         "--out", str(tmp_path / "bench")],
                           capture_output=True, text=True, env=env)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    theirs = sorted((tmp_path / "hand").glob("wrfout_*"))
    ours = sorted((tmp_path / "bench").glob("wrfout_*"))
    headers = sorted((tmp_path / "empty").glob("wrfout_*"))
    assert len(theirs) == len(ours) == len(headers) == (2 if method == "split" else 1)
    if method == "split":
        # Each rank's file adds the attributes `tessera join` reads (the tile's
        # place, the rank): what split adds over io_form=102, 3.5 KB of
        # header. Everything else is the yardstick's.
        def header(path):
            text = subprocess.run(["ncdump", "-h", str(path)], capture_output=True,
                                  text=True).stdout
            return [ln for ln in text.splitlines()[1:]
                    if "tessera_" not in ln and "_PATCH_" not in ln]
        for t, o in zip(theirs, ours):
            assert header(t) == header(o), (t, o)
        return
    for t, o, h in zip(theirs, ours, headers):
        # The header: the file with no frame, less the zeros NetCDF-C pads it
        # with (the header ends with the last variable's nonzero offset).
        n = len(h.read_bytes().rstrip(b"\0"))
        assert t.stat().st_size == o.stat().st_size, (t, o)
        assert t.read_bytes()[:n] == o.read_bytes()[:n], (t, o)


@NEEDS_RUN
def test_overhead_against_the_yardstick(tmp_path, capsys, yardstick):
    prog = yardstick
    rc = overhead.main(["--bench", str(BENCH), "--out", str(tmp_path / "o"), "--np", "2",
                        "--repeat", "2", "--strategies", "serial,split,split_deferred", "--nx", "32",
                        "--ny", "24", "--nz", "4", "--steps", "2", "--output-every", "1",
                        "--sweeps", "0", "--frames-per-file", "3", "--halo", "0",
                        "--schema", str(ANCHOR), "--yardstick", str(prog), "--no-check"])
    out = capsys.readouterr().out
    assert rc == 0, out
    ratio = r"\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)"
    for side, method, goal in (("serial", "gather", "1.10"), ("split", "split", "1.10"),
                               ("split_deferred", "split", "1.10"),
                               ("plain:gather", "gather", "1.05"),
                               ("plain:split", "split", "1.05")):
        assert re.search(rf"^{re.escape(side)}\s+{method}\s+2\s+\S+\s+\S+\s+{ratio}\s+{goal}\s+"
                         rf"(met|not met);", out, re.M), out
    assert "hand:gather" in out and "hand:split" in out
