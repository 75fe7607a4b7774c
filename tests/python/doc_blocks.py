"""Commands shown in the documentation, as a reader runs them.

A Markdown file's ```sh blocks hold commands to type; plain ``` blocks hold
output, synopses and excerpts and are not run. The README's blocks of only
`export` lines are the shell setup every example assumes (Open MPI's
oversubscription and root settings); they are applied before every block, of
the README and of the other documents alike. Each block runs in a fresh
`bash` from the repository root, with `set -euo pipefail`, so a command that
fails fails the block.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BENCH = ROOT / "build" / "apps" / "bench" / "tessera-bench"
VENV_TESSERA = ROOT / ".venv" / "bin" / "tessera"
BUILT = BENCH.is_file() and VENV_TESSERA.is_file()
WHY_NOT_BUILT = "documented commands need build/ (make build) and .venv (make venv)"


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
    slurm_up = shutil.which("srun") and os.environ.get("SLURM_CONF")
    if re.search(r"(^|\s)srun\s", cmd) and not slurm_up:
        return "srun: no Slurm cluster here (tests/slurm runs one with SLURM_CONF set)"
    return None


def is_setup(cmds: list) -> bool:
    return bool(cmds) and all(c.startswith("export ") for c in cmds)


def readme_setup() -> list:
    """The README's `export` blocks: the shell every documented command assumes."""
    return [c for cmds in sh_blocks(README.read_text()) if is_setup(cmds) for c in cmds]


def runnable_blocks(path: Path, setup_from_file: bool = False) -> list:
    """(block index, setup lines, commands) for every block with something to run.

    With setup_from_file, the file's own export-only blocks are setup for the
    blocks after them (the README); otherwise the README's setup applies."""
    setup = [] if setup_from_file else readme_setup()
    runs = []
    for i, cmds in enumerate(sh_blocks(path.read_text())):
        if setup_from_file and is_setup(cmds):
            setup += cmds
            continue
        todo = [c for c in cmds if not_run(c) is None]
        if todo:
            runs.append((i, list(setup), todo))
    return runs


def checkout_status() -> str | None:
    """`git status` of the checkout's tracked files (None outside a git
    checkout); untracked files are left out, since tests running beside this
    one may write some."""
    try:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                              cwd=ROOT, capture_output=True,
                              text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def run_block(name: str, setup: list, cmds: list, home: Path) -> str:
    """Runs one block as written; asserts it succeeds and leaves the
    checkout's tracked files as it found them (a documented command must not
    overwrite a shipped file, e.g. a profile); returns its stdout."""
    status = checkout_status()
    script = "set -euo pipefail\n" + "\n".join(setup + cmds) + "\n"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TESSERA_HINTS", "LD_LIBRARY_PATH")}
    env["HOME"] = str(home)
    before = set(ROOT.glob("tessera-tune-*"))
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    for d in set(ROOT.glob("tessera-tune-*")) - before:
        shutil.rmtree(d)   # the tuner's outputs, written in the current directory
    assert proc.returncode == 0, (f"{name} failed:\n{script}\n--- stdout\n"
                                  f"{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
    if status is not None:
        assert checkout_status() == status, (f"{name} changed the checkout:\n{script}\n"
                                             f"--- git status before\n{status}--- after\n"
                                             f"{checkout_status()}")
    out = proc.stdout
    if any("--check" in c for c in cmds):
        assert "check: passed" in out, f"{name}: --check did not pass:\n{out[-3000:]}"
    return out
