"""Open MPI's usual refusals to start, as the `tessera` commands report them:
one sentence with the flag to add, instead of a banner cut mid-sentence
(python/tessera/bench/launch.py mpiexec_refusal; demo, overhead, formats and tune
all report through it). The banners are Open MPI 4.1's, as printed here."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from tessera.bench.launch import bench_message, mpiexec_refusal  # noqa: E402

RULE = "-" * 74
ROOT_BANNER = f"""{RULE}
mpiexec has detected an attempt to run as root.

Running as root is *strongly* discouraged as any mistake (e.g., in
defining TMPDIR) or bug can result in catastrophic damage to the OS
file system, leaving your system in an unusable state.
{RULE}
"""
SLOTS_BANNER = f"""{RULE}
There are not enough slots available in the system to satisfy the 5
slots that were requested by the application:

  true

Either request fewer slots for your application, or make more slots
available for use.
{RULE}
"""
EXEC_BANNER = f"""{RULE}
mpiexec was unable to launch the specified application as it could not access
or execute an executable:

Executable: /nonexistent/prog
Node: vm

while attempting to start process rank 0.
{RULE}
"""


def test_root_refusal_names_the_flag():
    assert mpiexec_refusal(ROOT_BANNER) == (
        "mpiexec refuses to run as root: add --allow-run-as-root to the mpiexec command (or "
        "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)")


def test_slots_refusal_names_the_flag_and_the_count():
    assert mpiexec_refusal(SLOTS_BANNER) == (
        "mpiexec has fewer slots (cores) than the 5 processes asked for: add --oversubscribe "
        "to the mpiexec command (or export OMPI_MCA_rmaps_base_oversubscribe=1), or ask for fewer")


def test_missing_executable_is_named():
    assert mpiexec_refusal(EXEC_BANNER) == "mpiexec cannot run /nonexistent/prog: no such executable file"


def test_other_text_is_no_refusal_and_the_bench_keeps_its_own_words():
    assert mpiexec_refusal("tessera-bench: --nx needs an integer >= 1, got 'x'") is None
    # The bench's own sentence wins over a banner printed beside it.
    assert bench_message(ROOT_BANNER + "tessera-bench: out of memory\n") == "tessera-bench: out of memory"
    assert bench_message(SLOTS_BANNER).startswith("mpiexec has fewer slots")


@pytest.mark.skipif(shutil.which("mpiexec") is None or not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="the root refusal is seen only as root")
def test_tune_around_a_bare_mpiexec_says_what_to_add(tmp_path):
    """`tessera tune -- mpiexec ...` without --allow-run-as-root, as root: the
    failed default is one sentence naming the flag, no traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_")}
    proc = subprocess.run([sys.executable, "-m", "tessera", "tune", "--budget", "1", "--repeat",
                           "1", "--no-plot", "--out", str(tmp_path / "t"), "--", "mpiexec", "-n",
                           "1", "true"], capture_output=True, text=True, env=env, timeout=120,
                          cwd=ROOT / "python")
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text
    assert "tessera tune: the default configuration fails (failed): mpiexec refuses to run as " \
           "root: add --allow-run-as-root" in text
