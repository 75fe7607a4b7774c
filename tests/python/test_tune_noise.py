"""An honest tuner: heavy noise and no real optimum must give "no winner";
a real optimum under the same noise is still found; the verdict's statistics
(spread, bootstrap interval of the ratio) and the progress count of every run."""
import io
import re
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "tune"))
from tune_helpers import fake_command, load, run_tune  # noqa: E402

import fake_run  # noqa: E402
import pytest  # noqa: E402

from tessera.tune import stats as tune_stats  # noqa: E402
from tessera.tune.report import NO_WINNER  # noqa: E402

NOISY_FLAT = ("--flat", "--noise", "0.6")


@pytest.mark.parametrize("log_name", ["a.log", "b.log", "c.log"])
def test_heavy_noise_without_optimum_names_no_winner(tmp_path, capsys, log_name):
    # The noise is seeded from FAKE_LOG's run counts, so each log name is a
    # different, reproducible noisy session; none may claim a winner.
    code, out, _ = run_tune(tmp_path, ["--budget", "12", "--out", "out"],
                            fake_command(*NOISY_FLAT), log_name=log_name)
    assert code == 0
    res = load(out)["result"]
    assert res["verdict"] in ("no_winner", "default")
    assert res["winner"] is None
    lo, hi = res["ratio_interval"]
    assert lo <= 1.0 <= hi
    stdout = capsys.readouterr().out
    if res["verdict"] == "no_winner":
        assert f"Verdict: {NO_WINNER}" in stdout
    assert "export TESSERA_HINTS" not in stdout
    assert not (out / "winner.env").exists()
    # Both sides are shown with their spread, from the same number of final runs.
    assert res["default"]["n"] == res["candidate"]["n"] == 5
    assert res["default"]["min"] < res["default"]["median"] < res["default"]["max"]
    assert "Default  #1 (default): median" in stdout and "range" in stdout


def test_a_real_improvement_under_moderate_noise_is_a_winner(tmp_path, capsys):
    # With +-10 % noise the search may stop short of the optimum, but what it
    # names must be truly better than the default, and the interval it gives
    # must hold the true ratio.
    code, out, _ = run_tune(tmp_path, ["--budget", "20", "--out", "out"],
                            fake_command("--noise", "0.1"))
    assert code == 0
    res = load(out)["result"]
    assert res["verdict"] == "winner"
    true_ratio = fake_run.true_time("") / fake_run.true_time(res["winner"]["hints"])
    lo, hi = res["ratio_interval"]
    assert 1.0 < lo <= res["ratio"] <= hi
    assert lo <= true_ratio <= hi
    assert (out / "winner.env").read_text().count("export TESSERA_HINTS=") == 1
    assert "Winner: #" in capsys.readouterr().out


def test_interval_of_the_ratio():
    # Identical samples: the interval is the single ratio.
    assert tune_stats.ratio_interval([2.0] * 5, [1.0] * 5, 0.95) == (2.0, 2.0)
    # Overlapping samples: the interval straddles 1.
    lo, hi = tune_stats.ratio_interval([1.0, 1.5, 2.0, 1.2, 0.8], [0.9, 1.4, 1.9, 1.1, 1.0], 0.95)
    assert lo < 1.0 < hi
    # Too few runs: no interval, and no winner.
    lo, hi = tune_stats.ratio_interval([1.0, 2.0], [1.0, 2.0], 0.95)
    assert math.isnan(lo) and math.isnan(hi)
    v = tune_stats.decide([2.0, 2.1], [1.0, 1.1], comparisons=1)
    assert v.ratio == pytest.approx(2.05 / 1.05) and not v.measurable
    # Separated samples: measurable, and deterministic (seeded by the values).
    d, w = [4.0, 4.2, 4.1, 3.9, 4.3], [2.0, 2.1, 1.9, 2.2, 2.0]
    v1, v2 = tune_stats.decide(d, w, comparisons=3), tune_stats.decide(d, w, comparisons=3)
    assert v1.measurable and (v1.lo, v1.hi) == (v2.lo, v2.hi)
    assert v1.level == pytest.approx(1 - 0.05 / 3)


def test_spread():
    s = tune_stats.spread([3.0, 1.0, 2.0, None])
    assert s == {"n": 3, "median": 2.0, "min": 1.0, "max": 3.0, "q1": 1.5, "q3": 2.5}
    assert tune_stats.spread([]) == {}


def test_progress_counts_every_run(tmp_path, monkeypatch):
    # Not a terminal: one line per run, numbered against the most runs the
    # session can take (fixed: 6 trials x 3 repeats + the finals), with the time
    # left for the runs still certain to come; the last line's count is every
    # run the session made.
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code, out, _ = run_tune(tmp_path, ["--budget", "6", "--repeat", "3", "--out", "out"],
                            fake_command())
    assert code == 0
    lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("run ")]
    res = load(out)["result"]
    assert len(lines) == res["runs"]
    counts = [re.match(r"run (\d+) of at most (\d+)", ln).groups() for ln in lines]
    assert [int(done) for done, _ in counts] == list(range(1, res["runs"] + 1))
    totals = {int(total) for _, total in counts}
    assert len(totals) == 1 and totals.pop() >= res["runs"]     # the total never moves
    assert re.search(r", about \d+ s left at least  trial", lines[1])
