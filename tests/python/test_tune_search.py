"""tessera tune against a fake command whose time depends on the hints in a
known way (fixtures/tune/fake_run.py): optimum, ratio, failures, resume, Ctrl-C."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "tune"))
from tune_helpers import ROOT, fake_command, load, log_lines, run_tune  # noqa: E402

import fake_run  # noqa: E402
import pytest  # noqa: E402

OPTIMUM = 3.0                      # fake_run: aggregate, 4 aggregators, 64 MiB buffers
DEFAULT = fake_run.true_time("")   # 4.6: direct with 16 MiB buffers
RATIO = DEFAULT / OPTIMUM


def winner(out):
    return load(out)["result"]["winner"]


def no_scratch_left(tmp_path):
    return [p.name for p in tmp_path.iterdir() if p.name.startswith("tessera-tune-")] == []


def test_finds_known_optimum_and_ratio(tmp_path, capsys):
    code, out, _ = run_tune(tmp_path, ["--budget", "20", "--repeat", "3", "--out", "out"],
                            fake_command())
    assert code == 0
    res = load(out)["result"]
    assert res["trials"] <= 20
    assert fake_run.true_time(res["winner"]["hints"]) == pytest.approx(OPTIMUM)
    # Both sides measured with the same repeats in the finals; noise is +-1 %.
    assert len(res["winner"]["values"]) == len(res["default"]["values"]) == 3
    assert res["ratio"] == pytest.approx(RATIO, rel=0.03)
    stdout = capsys.readouterr().out
    assert f"Ratio to default: {res['ratio']:.2f}x" in stdout
    assert "export TESSERA_HINTS='strategy=aggregate:aggregators=4:" in stdout
    for name in ("trials.csv", "trials.json", "session.json", "tune.png", "winner.env"):
        assert (out / name).is_file(), name
    assert (out / "winner.env").read_text().count("export TESSERA_HINTS=") == 1
    assert no_scratch_left(tmp_path)


def test_stats_file_figures_without_json(tmp_path):
    # No {json}: blocked time comes from the statistics records (sum of blocked_s.max).
    cmd = [sys.executable, str(fake_run.__file__)]
    code, out, _ = run_tune(tmp_path, ["--budget", "16", "--repeat", "1", "--objective",
                                       "blocked", "--out", "out"], cmd)
    assert code == 0
    res = load(out)["result"]
    assert fake_run.true_time(res["winner"]["hints"]) == pytest.approx(OPTIMUM)
    assert res["ratio"] == pytest.approx(RATIO, rel=0.04)
    first = load(out)["trials"][0]["runs"][0]
    assert first["source"] == "stats" and first["stats"]["model_ranks"] == 8


def test_write_bw_objective(tmp_path):
    code, out, _ = run_tune(tmp_path, ["--budget", "16", "--repeat", "1", "--objective",
                                       "write_bw", "--out", "out"], fake_command())
    assert code == 0
    res = load(out)["result"]
    assert res["larger_is_better"]
    assert res["ratio"] == pytest.approx(RATIO, rel=0.04)   # bandwidth ratio >= 1


def test_failing_and_hanging_trials_are_recorded_and_skipped(tmp_path, capsys):
    cmd = fake_command("--fail-on", "strategy=split", "--hang-on", "strategy=serial",
                       "--fail-on", "exchange=alltoall")
    t0 = time.monotonic()
    code, out, _ = run_tune(tmp_path, ["--budget", "14", "--repeat", "1", "--trial-timeout",
                                       "1", "--out", "out"], cmd)
    assert time.monotonic() - t0 < 20
    assert code == 0
    trials = {t["label"]: t for t in load(out, "trials.json")["trials"]}
    assert trials["split"]["status"] == "failed"
    assert "TSR_ENOTBUILT" in trials["split"]["runs"][0]["error"]
    assert trials["serial"]["status"] == "timeout"
    assert any(t["status"] == "failed" and "exchange=alltoall" in t["key"]
               for t in trials.values())
    assert fake_run.true_time(winner(out)["hints"]) == pytest.approx(OPTIMUM)
    err = capsys.readouterr().err
    assert "strategy split dropped" in err and "strategy serial dropped" in err
    assert no_scratch_left(tmp_path)


def test_default_that_fails_is_an_error_not_a_crash(tmp_path, capsys):
    code, out, _ = run_tune(tmp_path, ["--budget", "5", "--out", "out"],
                            fake_command("--fail-on", ""))
    assert code == 2
    assert "default configuration fails" in capsys.readouterr().err
    assert load(out)["trials"][0]["runs"][0]["status"] == "failed"
    assert no_scratch_left(tmp_path)


def test_resume_after_budget_stop_reuses_saved_runs(tmp_path):
    code, out, log = run_tune(tmp_path, ["--budget", "8", "--repeat", "3", "--out", "out"],
                              fake_command())
    assert code == 0
    first = load(out)
    default_runs = log_lines(log).count("")      # the default runs with empty hints
    assert default_runs == 6                     # 3 search + 3 final runs
    saved_keys = {t["key"] for t in first["trials"]}
    code, out, log = run_tune(tmp_path, ["--budget", "20", "--resume", "out"], None)
    assert code == 0
    second = load(out)
    assert second["meta"]["options"]["budget"] == 20
    assert second["meta"]["options"]["repeat"] == 3          # kept from the saved session
    assert log_lines(log).count("") == default_runs          # nothing of it rerun
    assert saved_keys <= {t["key"] for t in second["trials"]}
    assert len(second["trials"]) == 20
    assert fake_run.true_time(second["result"]["winner"]["hints"]) == pytest.approx(OPTIMUM)
    assert (out / "session.json.bak").is_file()


def test_ctrl_c_stops_the_trial_saves_and_resumes(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), FAKE_LOG=str(tmp_path / "fake.log"))
    cmd = [sys.executable, "-m", "tessera.tune", "--budget", "12", "--repeat", "1",
           "--quiet", "--out", "out", "--"] + fake_command("--sleep", "0.15")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(log_lines(tmp_path / "fake.log")) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "--resume" in err
    saved = load(tmp_path / "out")
    assert saved["interrupted"] is True
    done_before = sum(len(t["runs"]) for t in saved["trials"])
    assert done_before >= 4
    assert no_scratch_left(tmp_path)
    started_before = len(log_lines(tmp_path / "fake.log"))
    code, out, log = run_tune(tmp_path, ["--resume", "out", "--quiet"], None)
    assert code == 0
    final = load(out)
    runs_after = sum(len(t["runs"]) + len(t["finals"]) for t in final["trials"])
    # Every completed run was replayed, not rerun: new starts = runs not saved before.
    assert len(log_lines(log)) - started_before == runs_after - done_before
    assert final["interrupted"] is False


def test_servers_need_ranks_for_servers(tmp_path):
    code, out, _ = run_tune(tmp_path, ["--budget", "10", "--repeat", "1", "--strategies",
                                       "servers,direct", "--ranks-for-servers", "2",
                                       "--out", "out"], fake_command())
    assert code == 0
    keys = [t["key"] for t in load(out)["trials"]]
    assert "strategy=servers:io_groups=1:io_tasks=2" in keys
    assert fake_run.true_time(winner(out)["hints"]) == pytest.approx(3.5)   # io_groups=2
    code, _, _ = run_tune(tmp_path, ["--strategies", "servers", "--out", "out2"],
                          fake_command())
    assert code == 2


def test_scratch_cleanup_only_removes_what_it_created(tmp_path):
    from tessera.tune.runner import MARKER, Scratch

    mine = tmp_path / "keep.txt"
    mine.write_text("user data")
    s = Scratch(str(tmp_path))
    d = s.trial_dir("t001r1")
    (Path(d) / "out.nc").write_text("x")
    s.remove(str(tmp_path))            # not a trial directory of this session: refused
    assert mine.exists()
    s.remove(d)
    assert not Path(d).exists()
    Path(s.path, MARKER).write_text("someone else's")
    s.cleanup()                        # marker does not match: refused
    assert Path(s.path).exists()
    Path(s.path, MARKER).write_text(s.token)
    s.cleanup()
    assert not Path(s.path).exists() and mine.exists()


def test_placeholders_and_environment(tmp_path):
    # The command sees a per-run scratch directory, the stats file and the hints.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, sys, json\n"
        "d = sys.argv[1]\n"
        "assert os.path.isdir(d) and d == os.environ['TESSERA_TUNE_SCRATCH']\n"
        "assert os.environ['TESSERA_STATS_FILE'].startswith(d)\n"
        "open(os.path.join(d, 'big.nc'), 'w').write('x' * 1000)\n"
        "json.dump({'wall_s': 1.0 if 'aggregate' in os.environ['TESSERA_HINTS'] else 2.0},"
        " open(sys.argv[2], 'w'))\n")
    code, out, _ = run_tune(tmp_path, ["--budget", "3", "--repeat", "1", "--ranks", "4",
                                       "--strategies", "aggregate,direct", "--out", "out"],
                            [sys.executable, str(probe), "{scratch}", "{json}"])
    assert code == 0
    res = load(out)["result"]
    assert res["winner"]["hints"] == "strategy=aggregate"
    assert res["ratio"] == pytest.approx(2.0)
    assert no_scratch_left(tmp_path)


def test_stage_dir_finds_hybrid_placement(tmp_path):
    # fake_run --hybrid: the small file dominates; staging everything gains
    # nothing (9 s), hybrid placement (stage_min_bytes above 22 KB) takes 6 s.
    stage = tmp_path / "fast-tier"
    code, out, _ = run_tune(tmp_path, ["--budget", "6", "--repeat", "3", "--strategies",
                                       "direct", "--stage-dir", str(stage), "--out", "out",
                                       "--no-plot", "--quiet"],
                            fake_command("--hybrid"))
    assert code == 0
    assert stage.is_dir()                         # made for the library
    res = load(out)["result"]
    big, small = fake_run.hybrid_times(res["winner"]["hints"])
    assert fake_run.FILES * big + small == pytest.approx(6.0)
    assert f"stage_dir={stage}" in res["winner"]["hints"]
    # The rule proposed the move, before any plain coordinate step.
    trials = load(out)["trials"]
    first_search = next(t for t in trials if t["phase"].startswith("search"))
    assert "small files dominate" in first_search["reason"]
    assert "stage_min_bytes=32k" in first_search["key"]


def test_stage_dir_with_a_separator_is_refused(tmp_path, capsys):
    code, _, _ = run_tune(tmp_path, ["--stage-dir", "a:b", "--out", "out"], fake_command())
    assert code == 2
    assert "--stage-dir: the path must not contain ':' or ','" in capsys.readouterr().err
