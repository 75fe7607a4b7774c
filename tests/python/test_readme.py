"""Every command of README.md's `sh` blocks works exactly as written, from the
repository root, in a fresh shell per block, the way a reader runs them.

Not run: `make demo` and `make test` (the suite itself runs under `make test`;
the demo takes minutes; tests/python/test_bench_tools.py covers it) and `srun`
where Slurm is not installed. A block of only `export` lines is the README's
shell setup and is applied to every block after it. $HOME is a scratch
directory, so `cmake --install ... --prefix $HOME/...` stays inside the test.
Skipped when the build tree the README names (build/) has not been built.
"""
import re

import pytest

from doc_blocks import (BUILT, README, WHY_NOT_BUILT, run_block, runnable_blocks,
                        sh_blocks)

pytestmark = pytest.mark.skipif(not BUILT, reason=WHY_NOT_BUILT)


def plan():
    return sh_blocks(README.read_text()), runnable_blocks(README, setup_from_file=True)


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
    out = run_block(f"README block {i}", setup, cmds, home)
    if any(c.endswith("tessera --version") for c in cmds):
        assert re.search(r"^tessera \d+\.\d+\.\d+$", out, re.M)
    if any("tessera tune" in c for c in cmds):
        assert "Ratio to default:" in out
        assert ("Winner: #" in out) or ("no configuration is measurably better" in out) \
            or ("default configuration is the fastest" in out)
