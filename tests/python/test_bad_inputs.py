"""Every `tessera` command answers bad paths and bad values with one sentence
naming the culprit and exit 1 or 2: never a Python traceback (issue 31's "no
tracebacks"; unwritable outputs are test_output_paths.py's, mpiexec's refusals
test_launch_refusals.py's). Each case runs the command as a user would."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("advise --procs x", "argument --procs: expected a whole number >= 1, got 'x'"),
    ("advise --procs -4", "argument --procs: expected a whole number >= 1, got -4"),
    ("advise --procs 4 --nx 0", "argument --nx: expected a whole number >= 1, got 0"),
    ("advise --procs 4 --profile /nope.json", "profile '/nope.json': no such file, and not a shipped profile"),
    ("advise --procs 4 --profile {junk}", "not JSON (Expecting value, line 1)"),
    ("advise --procs 4 --mem-limit lots", "--mem-limit: expected a size such as 512m (k, m or g), got 'lots'"),
    ("clean /nope", "tessera clean: /nope: not a directory"),
    ("convert /nope", "tessera convert: /nope is not a log directory"),
    ("demo --np 0", "argument --np: expected a whole number >= 1, got 0"),
    ("demo --nx -1", "argument --nx: expected a whole number >= 1, got -1"),
    ("demo --bench /nope", "tessera demo: tessera-bench not found"),
    ("formats --repeat 0", "tessera formats: --repeat >= 1 and --np >= 2"),
    ("formats --steps -1", "argument --steps: expected a whole number >= 0, got -1"),
    ("join /nope", "tessera join: /nope.0000: missing piece 0 (no such file)"),
    ("model calibrate --np x", "tessera model: --np: expected process counts such as 1,2 or 1-6, got 'x'"),
    ("model predict --profile /nope", "tessera model: profile '/nope': no such file"),
    ("overhead --np x", "tessera overhead: choose strategies from"),
    ("overhead --nx 0", "argument --nx: expected a whole number >= 1, got 0"),
    ("plot /nope", "tessera plot: /nope: No such file or directory"),
    ("plot {junk}", "not JSON (Expecting value, line 1)"),
    ("stage recover /nope", "tessera stage: /nope is not a directory"),
    ("stats /nope", "tessera stats: cannot read /nope: No such file or directory"),
    ("table {junk}", "not JSON (Expecting value, line 1)"),
    ("tune --budget 0 -- true", "tessera tune: --budget, --repeat, --keep and --finalists must be at least 1"),
    ("tune --space /nope -- true", "tessera tune: /nope: No such file or directory"),
    ("tune --resume /nope -- true", "tessera tune: cannot resume: /nope: No such file or directory"),
    ("tune --resume {junk} -- true", "tessera tune: cannot resume: "),
    ("wrf install /nope", "tessera wrf install: /nope is not a directory"),
]


@pytest.fixture(scope="module")
def junk(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "junk.json"
    path.write_text("junk\n")
    return path


@pytest.mark.parametrize("line,sentence", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_sentence(line, sentence, junk, tmp_path):
    args = [a.replace("{junk}", str(junk)) for a in line.split()]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.run([sys.executable, "-m", "tessera", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    assert proc.returncode in (1, 2), f"exit {proc.returncode}: {text}"
    assert sentence in text, text
