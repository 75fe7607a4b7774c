"""What the tests that run tessera-bench under mpiexec share: where the bench
is ($TESSERA_BUILD_DIR, default <repo>/build), the skip mark when it or
mpiexec is missing, the environment without the caller's hints, and one
run that must succeed."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tessera.bench.launch import mpiexec_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "apps" / "bench" / "tessera-bench"
MPIEXEC = shutil.which("mpiexec")

needs_bench = pytest.mark.skipif(
    not (BENCH.is_file() and os.access(BENCH, os.X_OK)) or MPIEXEC is None,
    reason=f"tessera-bench not built ({BENCH}) or no mpiexec")


# The verify tests' case: 3 outputs, 2 per file (a file of 2 frames and one
# of 1), every frame checksummed.
FRAMES_CASE = ["--nx", "40", "--ny", "30", "--nz", "4", "--steps", "4", "--output-every", "2",
               "--frames-per-file", "2", "--quiet"]
FRAMES_SUM = "checksum=crc32,frames_per_outfile=2"


def clean_env():
    """This environment less TESSERA_HINTS and TESSERA_STATS, which would
    change what the bench writes."""
    return {k: v for k, v in os.environ.items() if k not in ("TESSERA_HINTS", "TESSERA_STATS")}


def run_bench(np_, args, timeout=180):
    """tessera-bench ARGS on NP processes: the finished process."""
    cmd = mpiexec_command(MPIEXEC, np_) + [str(BENCH)] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=clean_env())
    p.command = " ".join(cmd)
    return p
