"""The model's picture of each strategy's data movement against the C code:
tessera-bench runs with TESSERA_STATS_FILE, and for every file the writers,
write requests and rearranged bytes the library counted must equal what the
model's geometry (model_counts) says. Exact counts, no timing. Skipped when
tessera-bench is not built (TESSERA_BUILD_DIR, else build/)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tessera.model.case import bench_case
from tessera.model.counts import library_counts
from tessera.model.strategy import Strategy

ROOT = Path(__file__).resolve().parent.parent.parent


def bench():
    env = os.environ.get("TESSERA_BUILD_DIR")
    dirs = [Path(env) if Path(env).is_absolute() else ROOT / env] if env else []
    cwd = Path.cwd()
    if cwd.name == "python" and cwd.parent.name == "tests":
        dirs.append(cwd.parent.parent)
    dirs.append(ROOT / "build")
    for d in dirs:
        exe = d / "apps" / "bench" / "tessera-bench"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def stats_of(tmp_path, np_, hints, nx, ny, nz):
    exe, mpiexec = bench(), shutil.which("mpiexec")
    if exe is None or mpiexec is None:
        pytest.skip("tessera-bench not built (set TESSERA_BUILD_DIR) or no mpiexec")
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    sf = tmp_path / "stats.jsonl"
    env = dict(os.environ, TESSERA_STATS_FILE=str(sf))
    env.pop("TESSERA_HINTS", None)
    p = subprocess.run([mpiexec, *flags, "-n", str(np_), str(exe), "--nx", str(nx), "--ny",
                        str(ny), "--nz", str(nz), "--steps", "1", "--output-every", "1",
                        "--hints", hints, "--out", str(tmp_path / "o"), "--quiet"],
                       capture_output=True, text=True, timeout=120, env=env)
    if p.returncode == 3:
        pytest.skip(f"{hints}: not built into the library")
    assert p.returncode == 0, p.stdout + p.stderr
    return [json.loads(line) for line in sf.read_text().splitlines()]


CASES = [
    # ranks, hints, nx, ny, nz: odd sizes, staggered remainders, several
    # serial slabs, aggregator slabs that do not fall on whole planes.
    (1, "strategy=serial", 17, 11, 3),
    (3, "strategy=serial:slab_bytes=1k", 20, 13, 3),
    (4, "strategy=serial:slab_bytes=2k", 23, 9, 5),
    (3, "strategy=aggregate:aggregators=2", 20, 13, 3),
    (4, "strategy=aggregate:aggregators=3", 23, 9, 5),
    (2, "strategy=aggregate:aggregators=2", 16, 16, 4),
    (3, "strategy=direct", 20, 13, 3),
    (4, "strategy=direct", 23, 9, 5),
    (3, "strategy=split", 20, 13, 3),
]


@pytest.mark.parametrize("np_,hints,nx,ny,nz", CASES)
def test_library_counts_match_the_model(tmp_path, np_, hints, nx, ny, nz):
    recs = stats_of(tmp_path, np_, hints, nx, ny, nz)
    case = bench_case(nx, ny, nz, steps=1, output_every=1)
    want = library_counts(case, Strategy.parse(hints), np_)
    assert len(recs) == 2                          # output 0 and output 1, one file each
    for r in recs:
        assert r["bytes"] == case.frame_bytes()
        got = {"writers": r["writers"], "writes": r["counters"]["TSR_WRITES"],
               "rearranged_bytes": r["rearranged_bytes"]}
        assert got == want, f"{hints} on {np_}: library {got}, model {want}"
