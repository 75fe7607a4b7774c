"""Every rule of `tessera stats` (python/tessera/stats_rules.py) against a
record where it must fire and records close to it where it must not."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

import pytest  # noqa: E402

from tessera.stats import command as stats  # noqa: E402
from tessera.stats import rules as R  # noqa: E402

MIB = 1 << 20
FIX = HERE / "fixtures" / "stats" / "records.jsonl"


def fixture(name):
    recs = stats.read_records(str(FIX))[0]
    return dict(next(r for r in recs if r["file"].endswith(name)))


def with_counters(rec, **kw):
    return dict(rec, counters=dict(rec["counters"], **kw))


def wrf_small_variables():
    """The case from the field: 202 WRF variables of ~20 KiB, one 4 MiB file,
    PnetCDF, most requests off the 1 MiB boundary."""
    rec = fixture("wrfout_misaligned")
    data = 202 * 20 * 1024
    return with_counters(dict(rec, variables=202, frames=1, bytes=data),
                         TSR_WRITES=404, TSR_WRITES_WITH_OFFSET=404, TSR_FILE_NOT_ALIGNED=400,
                         TSR_BYTES_WRITTEN=data)


# -- small-requests -------------------------------------------------------------
def test_small_requests_fires_on_many_small_requests():
    assert R.small_requests(fixture("wrfout_small")) is not None


@pytest.mark.parametrize("change", [
    {"TSR_WRITES": 8},                                   # one request per writer
    {"TSR_BYTES_WRITTEN": 8 * 512 * 1024},               # writers hold < 1 MiB each
    {"TSR_SIZE_WRITE_10K_100K": 0, "TSR_SIZE_WRITE_1K_10K": 0,
     "TSR_SIZE_WRITE_100K_1M": 0},                       # no small bucket counted
])
def test_small_requests_silent(change):
    assert R.small_requests(with_counters(fixture("wrfout_small"), **change)) is None


# Advice only where it can apply: the small-requests hint follows the strategy
# and the variables' size (wrfout_small: 10 variables of 6.4 MiB, 8 writers).
def test_small_requests_serial_slab_fits_the_variables():
    a = R.small_requests(dict(fixture("wrfout_small"), strategy="serial"))
    assert a is not None and a.hint.startswith("slab_bytes=8m ")     # 6.4 MiB -> 8 MiB
    assert "256m" not in a.hint


@pytest.mark.parametrize("strategy", ["serial", "split"])
def test_small_requests_silent_when_variables_are_small(strategy):
    # 123 KiB variables: a writer of whole variables cannot make them larger,
    # whatever its slabs (the field report: 256 MB slabs advised for 123 KB).
    rec = dict(fixture("wrfout_small"), strategy=strategy, variables=546, frames=1)
    assert R.variable_bytes(rec) < 128 * 1024
    assert R.small_requests(rec) is None


def test_small_requests_split_names_no_mpiio_buffer():
    a = R.small_requests(dict(fixture("wrfout_small"), strategy="split"))
    assert a is not None and "cb_buffer_size" not in a.hint and "aggregate" in a.hint


def test_small_requests_one_aggregator_not_told_fewer():
    one = R.small_requests(with_counters(dict(fixture("wrfout_small"), strategy="aggregate",
                                              writers=1), TSR_WRITES=4096))
    two = R.small_requests(dict(fixture("wrfout_small"), strategy="aggregate", writers=2))
    assert one is not None and "fewer aggregators" not in one.hint
    assert two is not None and "fewer aggregators" in two.hint


# -- misaligned -----------------------------------------------------------------
def test_misaligned_fires_on_large_variables_with_growth_shown():
    a = R.misaligned(fixture("wrfout_misaligned"))      # 10 variables of 40 MiB
    assert a is not None and a.hint.startswith("nc_var_align_size=1m")
    # 10 variables x 1 frame, padding below 1 MiB each: at most 10 MiB of 400 MiB.
    assert "predicted file growth from padding: about 5.0MB, at most 10.0MB (+2.5 % of 400.0MB)" \
        in a.message


def test_misaligned_silent_for_many_small_variables():
    # The alignment would pad 202 variables by up to 1 MiB each: 4 MiB -> ~200 MiB.
    rec = wrf_small_variables()
    assert R.misaligned(rec) is None
    assert all(a.rule != "misaligned" for a in R.advise(rec))
    most, _ = R.alignment_growth(rec, MIB)
    assert most > 40 * rec["bytes"]                     # what the advice would have cost


def test_misaligned_threshold_is_the_variable_size():
    rec = fixture("wrfout_misaligned")
    just_below = dict(rec, bytes=10 * (R.ALIGN_VAR_FACTOR * MIB - 1))
    at = dict(rec, bytes=10 * R.ALIGN_VAR_FACTOR * MIB)
    assert R.misaligned(just_below) is None
    assert R.misaligned(at) is not None
    # Frames count: the same bytes over 8 frames are 8x smaller variables.
    assert R.misaligned(dict(at, frames=8)) is None


@pytest.mark.parametrize("change", [
    {"TSR_FILE_NOT_ALIGNED": 40},                        # most requests aligned
    {"TSR_WRITES_WITH_OFFSET": 0},                       # offsets not reported
    {"TSR_BYTES_WRITTEN": MIB // 2},                     # file below one stripe
])
def test_misaligned_silent(change):
    assert R.misaligned(with_counters(fixture("wrfout_misaligned"), **change)) is None


def test_misaligned_without_pnetcdf_advises_striping_without_padding():
    a = R.misaligned(dict(fixture("wrfout_misaligned"), backend="netcdf"))
    assert a is not None and a.hint.startswith("striping_unit=1m")
    assert "growth" not in a.message


# -- one-writer -----------------------------------------------------------------
def test_one_writer_fires():
    assert R.one_writer(fixture("wrfout_serial")) is not None
    assert R.one_writer(fixture("wrfout_cb1")) is not None


@pytest.mark.parametrize("change", [
    {"model_ranks": 2},                                  # too few ranks to matter
    {"writer_s": {"min": 0.001, "max": 0.001, "mean": 0.001}},   # too little writing
    {"writers_on": "io_servers"},                        # servers are meant to write
    {"io_ranks": 2},
])
def test_one_writer_silent(change):
    assert R.one_writer(dict(fixture("wrfout_serial"), **change)) is None


def test_one_writer_silent_when_writers_share_the_work():
    rec = dict(fixture("wrfout_clean"), writers=4,
               writer_s={"min": 0.9, "max": 1.0, "mean": 0.95})
    assert R.one_writer(rec) is None


# -- blocked --------------------------------------------------------------------
def test_blocked_fires():
    assert R.blocked(fixture("wrfout_blocked")) is not None


@pytest.mark.parametrize("blocked_max,writer_max", [
    (1.4, 1.0),      # below the factor
    (0.06, 0.02),    # above the factor but within the margin in seconds
    (0.5, 0.5),      # blocked only while writing
])
def test_blocked_silent(blocked_max, writer_max):
    rec = dict(fixture("wrfout_blocked"),
               blocked_s={"min": 0, "max": blocked_max, "mean": blocked_max / 2},
               writer_s={"min": 0, "max": writer_max, "mean": writer_max / 2})
    assert R.blocked(rec) is None


def test_clean_record_fires_nothing():
    assert R.advise(fixture("wrfout_clean")) == []


# -- not-taken ------------------------------------------------------------------
def test_not_taken_names_the_hints_and_why():
    rec = dict(fixture("wrfout_clean"),
               mpiio_hints_not_taken="striping_factor=8, romio_cb_write=enable")
    a = R.not_taken(rec)
    assert a is not None and a.rule == "not-taken"
    assert a.message == "the MPI-IO layer did not take the hints striping_factor=8, romio_cb_write=enable"
    assert "Lustre" in a.hint and "OMPI_MCA_io=romio321" in a.hint


@pytest.mark.parametrize("value", [None, "", 3])
def test_not_taken_silent(value):
    rec = dict(fixture("wrfout_clean"))
    if value is not None:
        rec["mpiio_hints_not_taken"] = value
    assert R.not_taken(rec) is None


def test_every_rule_is_covered_here():
    tested = {"small_requests", "misaligned", "one_writer", "blocked", "not_taken"}
    assert {r.__name__ for r in R.RULES} == tested
