"""The model against the published studies (deterministic: the published
numbers, WRF's real history header and the shipped profiles)."""
import json

import pytest

from tessera.model import published as pub
from tessera.model.profile import PROFILE_DIR, load
from tessera.model.validate import IRMA_FIT, irma, irma_profile, note2002


@pytest.fixture(scope="module")
def irma_result():
    return irma(out=lambda *a: None)


def test_irma_fit_uses_only_the_named_points(irma_result):
    fitted = {(p["method"], p["cores"]) for p in irma_result["points"] if p["fitted"]}
    assert fitted == set(IRMA_FIT)


def test_irma_parallel_methods_within_goal(irma_result):
    """PnetCDF and PIO, every core count not fitted: within 30 %."""
    for p in irma_result["points"]:
        if p["method"] != "serial" and not p["fitted"]:
            assert abs(p["err_pct"]) <= 30.0, p


def test_irma_serial_follows_gatherv(irma_result):
    """Serial NetCDF (WRF's MPI_Gatherv, receives by source): flat in the core
    count, so within the goal at 648 and 4608 cores and at 9216 (outside the
    compared range); the published dip at 1296 and 2592 (886 s, 881 s, then
    1871 s at 4608 and 1846 s at 9216) is not a function of the core count and
    stays over-predicted. Kept as a test so a change shows up."""
    err = {p["cores"]: p["err_pct"] for p in irma_result["points"] if p["method"] == "serial"}
    assert abs(err[648]) <= 30.0 and abs(err[4608]) <= 30.0
    assert all(err[c] > 30.0 for c in (1296, 2592))
    free = [p for p in irma_result["points"] if not p["fitted"]]
    assert sum(abs(p["err_pct"]) <= 30.0 for p in free) == 8


def test_irma_serial_follows_from_the_parallel_methods(irma_result):
    """Fitted without any serial NetCDF point (PnetCDF and PIO at 324 and 4608
    cores only), the model still puts serial within the goal at 324, 648 and
    4608 cores: 9 of the 11 output times it does not fit (docs/model.md)."""
    alt = irma_result["without_serial"]
    assert set(alt["fit"]) == {("direct", 324), ("direct", 4608), ("aggregate", 324),
                               ("aggregate", 4608)}
    assert len(alt["points"]) == 11 and alt["within"] == 9
    err = {p["cores"]: p["err_pct"] for p in alt["points"] if p["method"] == "serial"}
    assert all(abs(err[c]) <= 30.0 for c in (324, 648, 4608))


def test_irma_right_winner_at_every_core_count(irma_result):
    for w in irma_result["winners"]:
        assert w["published"] == w["predicted"], w


def test_shipped_irma_profile_is_the_fit():
    _, prof = irma_profile()
    with open(f"{PROFILE_DIR}/irma.json", encoding="utf-8") as fh:
        shipped = json.load(fh)["values"]
    for k, v in prof.values.items():
        assert shipped[k] == pytest.approx(v, rel=1e-6), k


def test_note2002_shape():
    share = note2002(out=lambda *a: None)
    sync, one, four = share["netcdf (0)"], share["netcdf (1)"], share["netcdf (4)"]
    assert 4.0 <= sync[1] <= 8.0             # "6 percent of the cost of the run"
    assert sync[2] > 10.0                    # "will exceed 10 percent ... if doubled"
    assert one[1] < 1.0 and four[1] < 1.0    # servers: a fraction of a percent
    assert one[12] < 10.0                    # still hidden at 12x ...
    assert one[40] > 50.0                    # ... and near the synchronous cost far beyond 20x
    assert one[40] > 0.75 * sync[40]
    # Hidden, the share grows like the hand-off's (s x the 1x share); the jump
    # is where it leaves that line, and the note puts it at about 20x.
    jumps = [s for s in sorted(one) if one[s] > 2 * s * one[1]]
    assert jumps and 14 <= jumps[0] <= 25


def test_profiles_load():
    for name in ("irma-base", "irma", "ibm-sp-2002"):
        p = load(name)
        assert p.name and p.source
