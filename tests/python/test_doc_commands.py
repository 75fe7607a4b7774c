"""Every command the documents under docs/ and apps/bench/README.md show in
```sh blocks works exactly as written, from the repository root, in the shell
the README sets up (its `export` blocks), one fresh shell per block.

Output, synopses with placeholders and job scripts are in plain ``` (or
```bash) blocks and are not run; `make demo`/`make test` and `srun` without
Slurm are skipped as in test_readme.py. The README's own blocks are
test_readme.py's.
"""
import pytest

from doc_blocks import BUILT, ROOT, WHY_NOT_BUILT, run_block, runnable_blocks

pytestmark = pytest.mark.skipif(not BUILT, reason=WHY_NOT_BUILT)

DOCS = sorted(ROOT.glob("docs/*.md")) + [ROOT / "apps" / "bench" / "README.md"]


def plan():
    return [(doc, i, setup, cmds) for doc in DOCS for i, setup, cmds in runnable_blocks(doc)]


def _ids():
    return [f"{doc.relative_to(ROOT)}:block{i}" for doc, i, _, _ in plan()]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


def test_every_document_with_commands_is_covered():
    """The documents that show commands to type show them in ```sh blocks."""
    covered = {doc.name for doc, _, _, _ in plan()}
    for name in ("join.md", "tuning.md", "servers.md", "staging.md", "model.md"):
        assert name in covered, f"docs/{name} shows no ```sh block"


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_doc_block_runs_as_written(index, home):
    doc, i, setup, cmds = plan()[index]
    run_block(f"{doc.relative_to(ROOT)} block {i}", setup, cmds, home)
