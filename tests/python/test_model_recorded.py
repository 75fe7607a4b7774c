"""A small, recorded version of `tessera model validate here`: tessera-bench
runs recorded on the 2-core development machine (fixtures/model/runs.json,
every strategy at 1..6 processes, the fastest of the repeats, with the load
of other jobs measured around each) are calibrated and predicted exactly as
the command does. The recorded predictions (fixtures/model/expected.json)
pin the model: a change to the equations, the geometry or the fit shows up
here, and must come with a new recording (see docs/model.md). Points that met
the 30 % goal when recorded must keep meeting it."""
import json
from pathlib import Path

import pytest

from tessera.model.validate import GOAL_PCT, here

FIX = Path(__file__).resolve().parent / "fixtures" / "model"


@pytest.fixture(scope="module")
def result():
    runs = json.loads((FIX / "runs.json").read_text())["runs"]
    expected = json.loads((FIX / "expected.json").read_text())
    res = here(runs, calib_ranks=tuple(expected["calib_ranks"]), cores=expected["cores"],
               out=lambda *a: None)
    return res, expected


def key(p):
    return f"{p['strategy']}@{p['ranks']}"


def test_predictions_match_the_recording(result):
    res, expected = result
    got = {key(p): p["predicted"] for p in res["points"]}
    assert set(got) == set(expected["predicted"])
    for k, v in expected["predicted"].items():
        assert got[k] == pytest.approx(v, rel=0.01), k


def test_calibration_points_are_reproduced(result):
    """The fit explains the runs it was fitted to, as a whole: the median
    error of the fitted runs within 1.5 x the goal (5 % in the recording;
    the worst, direct at 1 process, is 28 % under; docs/model.md)."""
    res, _ = result
    errs = sorted(abs(p["err_pct"]) for p in res["points"] if p["fitted"])
    assert errs and errs[len(errs) // 2] <= 1.5 * GOAL_PCT, errs


def test_points_within_goal_stay_within_goal(result):
    res, expected = result
    pts = {key(p): p for p in res["points"]}
    for k in expected["within_goal"]:
        assert abs(pts[k]["err_pct"]) <= GOAL_PCT, pts[k]
