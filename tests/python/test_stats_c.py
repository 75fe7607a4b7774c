"""The statistics written by the library itself: runs tests/stats/test_stats
(serial, direct, aggregate, split, and TESSERA_HINTS-only changes) under
mpiexec, validates every JSON line against docs/stats.schema.json and checks
the counters each strategy must produce; also the text of TESSERA_STATS=1 and
TESSERA_HINTS_DISPLAY=1. Skipped when the C program is not built: set
TESSERA_BUILD_DIR (default: the build tree CTest runs from, else build/)."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMA = ROOT / "docs" / "stats.schema.json"
NT, VAR_BYTES = 2, 8 * 16 * 32 * 4  # as in tests/stats/test_stats.c


def program():
    env = os.environ.get("TESSERA_BUILD_DIR")
    candidates = []
    if env:
        b = Path(env)
        candidates.append(b if b.is_absolute() else ROOT / b)
    else:
        # Under CTest the working directory is <build>/tests/python.
        cwd = Path.cwd()
        if cwd.name == "python" and cwd.parent.name == "tests":
            candidates.append(cwd.parent.parent)
        candidates.append(ROOT / "build")
    for b in candidates:
        exe = b / "tests" / "stats" / "test_stats"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def run(np_, tmp_path, extra_env=None):
    exe = program()
    mpiexec = shutil.which("mpiexec")
    if exe is None or mpiexec is None:
        pytest.skip("tests/stats/test_stats not built (set TESSERA_BUILD_DIR) or no mpiexec")
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    stats_file = tmp_path / f"stats.np{np_}.jsonl"
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", **(extra_env or {}))
    env.pop("TESSERA_HINTS", None)
    p = subprocess.run([mpiexec, *flags, "-n", str(np_), str(exe), str(tmp_path), str(stats_file)],
                       capture_output=True, text=True, timeout=180, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return [json.loads(l) for l in stats_file.read_text().splitlines()], p.stdout


def by_file(recs):
    return {Path(r["file"]).name.split(".np")[0]: r for r in recs}


@pytest.mark.parametrize("np_", [2, 3])
def test_records_valid_and_match_what_each_strategy_does(np_, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    v = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    recs, _ = run(np_, tmp_path)
    for r in recs:
        errors = [e.message for e in v.iter_errors(r)]
        assert not errors, (r["file"], errors)
    f = by_file(recs)
    for r in recs:
        assert r["model_ranks"] == np_ and r["bytes"] == NT * VAR_BYTES and r["frames"] == NT
        assert r["counters"]["TSR_BYTES_WRITTEN"] == NT * VAR_BYTES
    s = f["serial"]  # slab_bytes=4k: 4 slabs of 4096 bytes per frame, one writer
    assert (s["writers"], s["writer_ranks"]) == (1, [0])
    assert s["counters"]["TSR_WRITES"] == NT * VAR_BYTES // 4096
    assert s["counters"]["TSR_SIZE_WRITE_1K_10K"] == NT * VAR_BYTES // 4096
    assert s["rearranged_bytes"] > 0
    if "direct" not in f:
        return  # built without PnetCDF
    d = f["direct"]  # one request per rank per variable and frame
    assert d["writers"] == np_ and d["writer_ranks"] == list(range(np_))
    assert d["counters"]["TSR_WRITES"] == NT * np_ and d["rearranged_bytes"] == 0
    a = f["aggregate"]  # aggregators=2 -> 2 writers, 2 requests per variable and frame
    assert a["writers"] == 2 and a["counters"]["TSR_WRITES"] == NT * 2
    assert a["hints"] == "strategy=aggregate:aggregators=2"
    e = f["aggregate_env"]  # TESSERA_HINTS=aggregators=1 beats tsr_create's aggregators=2
    assert e["writers"] == 1 and e["writer_ranks"] == [0] and e["counters"]["TSR_WRITES"] == NT
    # One writer: the serial backend (src/strategy/aggregate.c), no file offsets to count.
    assert e["counters"]["TSR_CONSEC_WRITES"] == 0
    c = f["direct_env"]  # TESSERA_HINTS=cb_nodes=1:... reaches MPI-IO and the record
    assert c["mpiio_cb_nodes"] == 1 and c["mpiio_hints"]["cb_buffer_size"] == 8 << 20
    assert c["stripe_size"] == c["counters"]["TSR_FILE_ALIGNMENT"] == 65536
    assert f["split"]["writers"] == np_ and f["split"]["counters"]["TSR_WRITES"] == NT * np_


def test_text_summary_and_hint_display(tmp_path):
    recs, out = run(2, tmp_path, {"TESSERA_STATS": "1", "TESSERA_HINTS_DISPLAY": "1"})
    blocks = re.findall(r"^TESSERA_STATS: file (\S+)$", out, re.M)
    assert [Path(b).name for b in blocks] == [Path(r["file"]).name for r in recs]
    assert re.search(r"^TESSERA_STATS:   ranks: 2 model, 0 io; writers 1: 0$", out, re.M)
    assert re.search(r"write requests: 8, 32768 bytes \(mean 4\.0K\)", out)
    assert "TESSERA_HINTS_DISPLAY: file" in out
    if any(r["strategy"] == "direct" for r in recs):
        assert re.search(r"writers 2: 0 1; MPI-IO cb_nodes 1$", out, re.M)
        assert re.search(r"^TESSERA_HINTS_DISPLAY:     cb_nodes = 1$", out, re.M)
        assert re.search(r"^TESSERA_HINTS_DISPLAY:     romio_cb_write = enable$", out, re.M)
        assert "TESSERA_HINTS_DISPLAY:   writer ranks (2 of 2): 0 1" in out
    # The tool reads what the library wrote.
    sys.path.insert(0, str(ROOT / "python"))
    from tessera.stats import command as stats

    assert stats.main([str(tmp_path / "stats.np2.jsonl"), "--no-advice"]) == 0
