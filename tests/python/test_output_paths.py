"""An output path a command cannot write is refused before any work starts:
one sentence on stderr naming the path, exit 2, no traceback (tessera.outpath).

The paths lie under a regular file (`<file>/sub/out`), which fails for root
too (NotADirectoryError), where permission bits would not. The commands get
the fixtures' fake bench and mpiexec, and the test checks that nothing ran:
no output on stdout, so the check came before the first MPI run.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parent / "fixtures"
FAKE = ["--bench", str(FIX / "bench" / "fake_bench.py"),
        "--mpiexec", str(FIX / "bench" / "fake_mpiexec.sh")]
STATS = str(FIX / "stats" / "records.jsonl")


def tessera(*argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "tessera", *argv], capture_output=True,
                          text=True, timeout=60, env=env)


@pytest.fixture
def blocked(tmp_path):
    """A path whose parent is a regular file: no one can create it."""
    f = tmp_path / "a-file"
    f.write_text("not a directory\n")
    return f / "sub" / "out"


CASES = {
    "demo": lambda b, t: ["demo", *FAKE, "--out", str(b)],
    "overhead": lambda b, t: ["overhead", *FAKE, "--out", str(b)],
    "overhead --json": lambda b, t: ["overhead", *FAKE, "--out", str(t / "ok"),
                                     "--json", str(b / "o.json")],
    "formats": lambda b, t: ["formats", *FAKE, "--out", str(b)],
    "stats --png": lambda b, t: ["stats", STATS, "--png", str(b / "s.png")],
    "stats --png DIR": lambda b, t: ["stats", STATS, "--png", str(t)],
}


@pytest.mark.parametrize("case", CASES)
def test_unwritable_output_is_one_sentence(case, blocked, tmp_path):
    argv = CASES[case](blocked, tmp_path)
    p = tessera(*argv)
    command = argv[0]
    named = argv[argv.index("--png") + 1] if "--png" in argv else (
        argv[argv.index("--json") + 1] if "--json" in argv else str(blocked))
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"tessera {command}: cannot write {named}: "), lines[0]
    assert p.stdout == "", f"{case} started work before checking its output: {p.stdout}"


def test_writable_png_still_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "s.png"
    p = tessera("stats", STATS, "--png", str(png), "--no-advice")
    assert p.returncode == 0, p.stderr
    assert png.stat().st_size > 0 and f"chart: {png}" in p.stdout
