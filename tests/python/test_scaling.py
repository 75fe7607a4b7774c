"""`tessera scaling` (python/tessera/scaling.py): the monitoring file and GNU
time parsers, the per-output difference, the growth fit, and a small real run
(2 and 4 processes) whose figures say what serial and split must: the serial
root receives from every rank, split sends nothing point to point."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from tessera import scaling  # noqa: E402

FIX = Path(__file__).resolve().parent / "fixtures" / "scaling"
BENCH = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build")) / "apps" / "bench" / "tessera-bench"


def test_monitoring_file_of_a_serial_sender():
    """Open MPI 4.1's pml monitoring output of rank 1 (serial, 4 ranks, 1 output):
    it sends its tiles to the root, rank 0, and takes part in collectives."""
    p = scaling.parse_prof(str(FIX / "prof.1.prof"))
    assert set(p["to"]) == {0}                     # E lines: rank 1 -> rank 0 only
    assert p["to"][0][0] > 0 and p["to"][0][1] > 0
    assert p["coll_msgs"] > 0                      # I lines


def test_received_counts_come_from_the_senders_files():
    ranks = {0: {"to": {1: (3, 30)}, "coll_msgs": 1},
             1: {"to": {0: (5, 50)}, "coll_msgs": 2},
             2: {"to": {0: (7, 70)}, "coll_msgs": 2}}
    fig = scaling.rank_figures(ranks)
    assert fig[0]["recv_msgs"] == 12 and fig[0]["recv_bytes"] == 120 and fig[0]["sent_msgs"] == 3
    assert fig[1]["recv_msgs"] == 3 and fig[2]["recv_msgs"] == 0


def test_gnu_time_files_by_rank(tmp_path):
    (tmp_path / "rss.0").write_text("4200\n")
    (tmp_path / "rss.1").write_text("Command exited with non-zero status 1\n3100\n")
    (tmp_path / "rss.x").write_text("junk\n")
    assert scaling.parse_rss(tmp_path) == {0: 4200, 1: 3100}


def test_growth_exponent():
    assert scaling.exponent([16, 32, 64], [10, 20, 40]) == pytest.approx(1.0)
    assert scaling.exponent([16, 32, 64], [5, 5, 5]) == pytest.approx(0.0)
    assert scaling.exponent([16, 32], [0, 5]) is None


@pytest.mark.skipif(not BENCH.is_file() or shutil.which("mpiexec") is None
                    or not os.access("/usr/bin/time", os.X_OK),
                    reason="needs the bench, Open MPI's mpiexec and GNU time")
def test_small_run_serial_root_and_split(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tessera", "scaling", "--np", "2,4",
                           "--strategies", "serial,split", "--nx", "16", "--ny", "16", "--nz", "2",
                           "--bench", str(BENCH), "--out", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=600, cwd=ROOT / "python")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads((tmp_path / "s" / "scaling.json").read_text())["results"]
    # The serial root receives every other rank's tiles: more senders, more messages.
    assert res["serial"]["4"]["recv_msgs"] > res["serial"]["2"]["recv_msgs"] > 0
    # Split writes a file per rank: no point-to-point message at all.
    assert res["split"]["2"]["sent_msgs"] == 0 and res["split"]["4"]["recv_msgs"] == 0
    assert "growth as P^k" in proc.stdout and "Traceback" not in proc.stderr
