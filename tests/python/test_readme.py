"""Every command of README.md's `sh` blocks works exactly as written, from the
repository root, in a fresh shell per block, the way a reader runs them.

Not run: `make demo` and `make test` (the suite itself runs under `make test`;
the demo takes minutes; tests/python/test_bench_tools.py covers it) and `srun`
where Slurm is not installed. A block of only `export` lines is the README's
shell setup and is applied to every block after it. $HOME is a scratch
directory, so `cmake --install ... --prefix $HOME/...` stays inside the test.
Skipped when the build tree the README names (build/) has not been built.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BENCH = ROOT / "build" / "apps" / "bench" / "tessera-bench"
VENV_TESSERA = ROOT / ".venv" / "bin" / "tessera"

pytestmark = pytest.mark.skipif(
    not (BENCH.is_file() and VENV_TESSERA.is_file()),
    reason="README commands need build/ (make build) and .venv (make venv)")


def sh_blocks(text: str) -> list:
    """The ```sh blocks, each as a list of logical commands (continuations joined)."""
    blocks = []
    for body in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        cmds, cur = [], ""
        for line in body.splitlines():
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                cur += line[:-1] + " "
                continue
            cmds.append((cur + line).strip())
            cur = ""
        blocks.append(cmds)
    return blocks


def not_run(cmd: str):
    """Why a command is not run here, or None."""
    if re.match(r"make\s+(demo|test)\b", cmd):
        return "make demo/test: the suite and the demo themselves"
    if re.search(r"(^|\s)srun\s", cmd) and not shutil.which("srun"):
        return "srun: no Slurm here"
    return None


def plan():
    blocks = sh_blocks(README.read_text())
    setup, runs = [], []
    for i, cmds in enumerate(blocks):
        if cmds and all(c.startswith("export ") for c in cmds):
            setup += cmds
            continue
        todo = [c for c in cmds if not_run(c) is None]
        if todo:
            runs.append((i, list(setup), todo))
    return blocks, runs


def test_readme_has_the_commands_we_expect():
    blocks, runs = plan()
    flat = [c for _, _, cmds in runs for c in cmds]
    assert any(c.startswith("cmake --install build") for c in flat)
    assert any("tessera tune" in c for c in flat)
    assert any("tessera-servers-bench" in c for c in flat)
    assert "out/demo/demo.png" not in README.read_text()
    assert "out/demo/tessera-demo.png" in README.read_text()


def _ids():
    try:
        return [f"block{i}" for i, _, _ in plan()[1]]
    except OSError:
        return []


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One $HOME for every block, as one reader has (install, then use)."""
    return tmp_path_factory.mktemp("home")


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_readme_block_runs_as_written(index, home):
    _, runs = plan()
    i, setup, cmds = runs[index]
    script = "set -euo pipefail\n" + "\n".join(setup + cmds) + "\n"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TESSERA_HINTS", "LD_LIBRARY_PATH")}
    env["HOME"] = str(home)
    before = set(ROOT.glob("tessera-tune-*"))
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    for d in set(ROOT.glob("tessera-tune-*")) - before:
        shutil.rmtree(d)   # the tuner's outputs, written in the current directory
    assert proc.returncode == 0, (f"README block {i} failed:\n{script}\n--- stdout\n"
                                  f"{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
    out = proc.stdout
    if any("--check" in c for c in cmds):
        assert "check: passed" in out
    if any(c.endswith("tessera --version") for c in cmds):
        assert re.search(r"^tessera \d+\.\d+\.\d+$", out, re.M)
    if any("tessera tune" in c for c in cmds):
        assert "Ratio to default:" in out
        assert ("Winner: #" in out) or ("no configuration is measurably better" in out) \
            or ("default configuration is the fastest" in out)
