"""formats_bounds: what the issue's compression targets need, from medians
(pure arithmetic, checked with exact numbers)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from tessera.formats_bounds import Medians, as_dict, bounds, rows  # noqa: E402

#: The 16-core record of apps/bench/README.md (NetCDF-4, 20 steps, 3 outputs;
#: aggregate with 4 writers; servers' compute_s 0.63 s over 20 steps).
SIXTEEN = Medians(serial_u=0.268, serial_c=2.314, aggregate_u=0.353, aggregate_c=0.936,
                  servers_u=0.270, servers_c=2.897, writers=4, io_tasks=1, frames=3,
                  interval_s=0.63 * 10 / 20)


def test_bounds_of_the_sixteen_core_record():
    b = bounds(SIXTEEN)
    assert b.c == pytest.approx(2.046, abs=1e-12)
    assert b.writers_needed == pytest.approx(2.046 / 0.353, rel=1e-12)  # 5.796
    assert (b.serial_base, b.aggregate_base_w) == (0.268, pytest.approx(1.412, abs=1e-12))
    assert b.efficiency == pytest.approx(2.046 / (4 * 0.583), rel=1e-12)  # 0.877
    assert b.per_output_task == pytest.approx(0.682, abs=1e-12)
    assert b.servers_slack == pytest.approx(0.054, abs=1e-12)
    assert b.tasks_for_target == pytest.approx(2.046 / 0.162, rel=1e-12)  # 12.6
    assert b.tasks_to_keep_up == pytest.approx(2.046 / 0.945, rel=1e-12)  # 2.17
    text = {r[0]: r for r in rows(SIXTEEN)}
    assert text["compression cost C"][2] == "2.046 s (0.682 s per output)"
    assert text["aggregate deflate <= 2 x uncompressed"][2:] == (
        "C / U_a = 5.80, W = 4", "not at W = 4: needs W >= 6 (at this U_a)")
    assert text["serial deflate / aggregate deflate >= W"][2] == (
        "U_s = 0.268 s, 4 x U_a = 1.412 s")
    assert text["serial deflate / aggregate deflate >= W"][3].startswith("not by more writers")
    assert text["parallel compression efficiency"][2:] == (
        "0.88", "aggregate's shortfall from W is its base U_a, not compression")
    assert text["servers deflate <= 1.2 x uncompressed"][2:] == (
        "0.682 s vs 0.054 s", "not at T = 1: needs T >= 13")
    assert text["servers keep up with the model"][2:] == (
        "0.682 s vs 0.315 s", "no at T = 1: needs T >= 3")


def test_every_target_reachable():
    # C = 8 s over 4 outputs; 8 writers at U_a = 1 s compress in exactly U_a;
    # 2 server tasks take 1 s per output, within 0.2 x 10 s and the 1.5 s interval.
    m = Medians(serial_u=9.0, serial_c=17.0, aggregate_u=1.0, aggregate_c=2.0, servers_u=10.0,
                servers_c=11.0, writers=8, io_tasks=2, frames=4, interval_s=1.5)
    b = bounds(m)
    assert (b.c, b.writers_needed, b.aggregate_base_w, b.efficiency) == (8.0, 8.0, 8.0, 1.0)
    assert (b.per_output_task, b.servers_slack, b.tasks_for_target) == (
        1.0, pytest.approx(2.0), pytest.approx(1.0))
    verdicts = [r[3] for r in rows(m)]
    assert verdicts == ["one writer, every output", "reachable at W = 8", "holds",
                        "aggregate's shortfall from W is its base U_a, not compression",
                        "reachable at T = 2", "yes at T = 2"]


def test_poor_parallel_compression_is_named():
    # C = 8 s on 4 writers that spend 4 s: half as fast as perfectly parallel.
    m = Medians(serial_u=1.0, serial_c=9.0, aggregate_u=1.0, aggregate_c=5.0, servers_u=None,
                servers_c=None, writers=4, io_tasks=1, frames=2, interval_s=None)
    r = {x[0]: x for x in rows(m)}
    assert r["parallel compression efficiency"][2:] == (
        "0.50", "compression runs less than 80% parallel on 4 writers")
    assert "servers deflate <= 1.2 x uncompressed" not in r  # no servers figures


def test_missing_or_unmeasurable_compression():
    gone = Medians(serial_u=None, serial_c=2.0, aggregate_u=1.0, aggregate_c=2.0, servers_u=1.0,
                   servers_c=2.0, writers=2, io_tasks=1, frames=3, interval_s=1.0)
    assert rows(gone) == [("compression cost C", "serial deflate=1 - uncompressed", "-",
                           "unknown: a serial run failed")]
    assert bounds(gone).c is None and bounds(gone).tasks_for_target is None
    free = Medians(serial_u=2.0, serial_c=1.5, aggregate_u=1.0, aggregate_c=1.0, servers_u=1.0,
                   servers_c=1.0, writers=2, io_tasks=1, frames=3, interval_s=1.0)
    assert rows(free)[0][2:] == ("-0.500 s",
                                 "not measurable in this run (noise larger than compression)")
    assert bounds(free).efficiency is None  # A_c - U_a = 0: no division
    saved = as_dict(SIXTEEN)
    assert saved["medians"]["writers"] == 4 and saved["bounds"]["c"] == pytest.approx(2.046)


def test_an_efficiency_above_one_is_called_noise():
    # C = 8 s, 2 writers, aggregate spends 2 s compressing: "2.00" is noise.
    m = Medians(serial_u=1.0, serial_c=9.0, aggregate_u=1.0, aggregate_c=3.0, servers_u=None,
                servers_c=None, writers=2, io_tasks=1, frames=2, interval_s=None)
    r = {x[0]: x for x in rows(m)}
    assert r["parallel compression efficiency"][2] == "2.00"
    assert r["parallel compression efficiency"][3].startswith("above 1: noise in the medians")
