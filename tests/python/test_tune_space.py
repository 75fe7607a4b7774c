"""tessera tune: search space, hint strings, --space files, rules."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "tune"))
import tune_helpers  # noqa: E402,F401  (sets sys.path for the tessera package)

import pytest  # noqa: E402

from tessera.tune.rules import diagnose  # noqa: E402
from tessera.tune.space import (GIB, KIB, MIB, RunShape, SpaceError,  # noqa: E402
                                build_space, format_size, parse_size, record_matches)


def test_sizes_round_trip():
    assert parse_size("16m") == 16 * MIB
    assert parse_size("4K") == 4 * KIB
    assert parse_size("1g") == GIB
    assert parse_size(1234) == 1234
    assert format_size(64 * MIB) == "64m"
    assert format_size(GIB) == "1g"
    assert format_size(1000) == "1000"
    with pytest.raises(SpaceError):
        parse_size("lots")


def test_ranges_follow_the_run():
    space = build_space(RunShape(ranks=8, file_bytes=256 * MIB, total_bytes=512 * MIB))
    assert space.knobs["aggregators"].values == (1, 2, 4, 8)
    assert space.knobs["aggregators"].default == 2          # ranks/4, src/core/hints.h
    assert max(space.knobs["cb_buffer_size"].values) == 256 * MIB
    assert "servers" not in space.strategies                 # no --ranks-for-servers
    small = build_space(RunShape(ranks=3, file_bytes=100 * KIB, total_bytes=100 * KIB))
    assert small.knobs["aggregators"].values == (1, 2, 3)
    assert max(small.knobs["cb_buffer_size"].values) == 16 * MIB
    servers = build_space(RunShape(ranks=8, server_ranks=4))
    assert "servers" in servers.strategies
    assert servers.knobs["io_groups"].values == (1, 2, 3, 4)


def test_hint_strings():
    space = build_space(RunShape(ranks=8, file_bytes=GIB))
    cfg = space.make("aggregate", {"aggregators": 4, "cb_buffer_size": 16 * MIB,
                                   "buffer_bytes": 256 * MIB})
    # Tessera's own sizes take suffixes; MPI-IO pass-through keys get plain bytes.
    assert space.hints(cfg) == \
        "strategy=aggregate:aggregators=4:cb_buffer_size=16777216:buffer_bytes=256m"
    # Setting a knob to the library default drops it: one spelling per configuration.
    assert space.with_value(cfg, "aggregators", 2).get("aggregators") is None
    fixed = build_space(RunShape(ranks=8), fixed="format=cdf5")
    assert fixed.hints(fixed.start_config("direct")) == "format=cdf5:strategy=direct"
    assert fixed.hints(fixed.baseline_config()) == "format=cdf5"
    globbed = build_space(RunShape(ranks=8), glob="wrfout*")
    assert globbed.hints(globbed.start_config("split")) == "wrfout*:strategy=split"
    assert record_matches({"file": "run/wrfout_d01"}, "wrfout*")
    assert not record_matches({"file": "run/wrfrst_d01"}, "wrfout*")


def test_neighbours_and_validity():
    space = build_space(RunShape(ranks=8, file_bytes=GIB, server_ranks=2))
    start = space.start_config("aggregate")
    assert space.neighbours(start, "aggregators", +1) == [4]
    assert space.neighbours(start, "aggregators", -1) == [1]
    assert space.neighbours(start, "exchange", 0) == ["alltoall"]
    # Unknown library default (ROMIO cb_nodes): smallest down, middle up.
    assert space.neighbours(start, "cb_nodes", -1) == [1]
    assert space.neighbours(start, "cb_nodes", +1) == [4]
    assert not space.valid(space.make("aggregate", {"aggregators": 8, "stride": 2}))
    assert space.valid(space.make("aggregate", {"aggregators": 4, "stride": 2}))
    assert not space.valid(space.make("servers", {"io_groups": 2, "io_tasks": 2}))
    assert space.hints(space.start_config("servers")) == "strategy=servers:io_groups=1:io_tasks=2"


def test_space_file(tmp_path):
    from tessera.tune.space import load_space_file

    f = tmp_path / "space.toml"
    f.write_text('strategies = ["aggregate", "direct"]\nfixed = "format=cdf5"\n'
                 '[knobs.aggregators]\nvalues = [2, 4]\n'
                 '[knobs.cb_buffer_size]\nmin = "4m"\nmax = "16m"\n'
                 '[knobs.stride]\nenabled = false\n'
                 '[knobs.romio_cb_write]\nvalues = ["enable", "disable"]\n'
                 'strategies = ["aggregate"]\n')
    space = build_space(RunShape(ranks=8, file_bytes=GIB), overrides=load_space_file(str(f)))
    assert space.strategies == ["aggregate", "direct"]
    assert space.knobs["aggregators"].values == (2, 4)
    assert space.knobs["cb_buffer_size"].values == (4 * MIB, 16 * MIB)
    assert "stride" not in space.knobs
    assert "romio_cb_write" in space.knobs_for("aggregate")
    assert "romio_cb_write" not in space.knobs_for("direct")
    assert space.fixed == "format=cdf5"
    bad = tmp_path / "bad.toml"
    bad.write_text("[knobs.aggregators]\nvalues = []\n")
    with pytest.raises(SpaceError):
        build_space(RunShape(ranks=8), overrides=load_space_file(str(bad)))
    with pytest.raises(SpaceError):
        build_space(RunShape(ranks=8), strategies=["servers"])  # needs --ranks-for-servers


def test_rules_follow_expbb():
    small = {"writes": 1000, "bytes_written": 1000 * 64 * KIB, "small_writes": 1000,
             "not_aligned": 900, "model_ranks": 8, "writers": 2, "writer_max": 1.0,
             "writer_mean": 0.9, "blocked_max": 1.2}
    knobs = [(a.knob, a.direction) for a in diagnose(small, "aggregate")]
    assert knobs[0] == ("cb_buffer_size", +1)          # small requests: larger buffers
    assert ("alignment", +1) in knobs                  # misaligned: alignment
    busy = {"writes": 10, "bytes_written": 10 * 8 * MIB, "model_ranks": 8, "writers": 1,
            "writer_max": 2.0, "writer_mean": 2.0, "blocked_max": 2.2}
    assert ("aggregators", +1) in [(a.knob, a.direction) for a in diagnose(busy, "aggregate")]
    blocked = {"writes": 10, "bytes_written": 10 * 8 * MIB, "model_ranks": 8, "writers": 2,
               "writer_max": 0.5, "writer_mean": 0.5, "blocked_max": 3.0}
    first = diagnose(blocked, "servers")[0]
    assert (first.knob, first.direction) == ("io_groups", +1)   # more servers
    assert diagnose({}, "direct") == []


def test_alignment_only_where_it_fits_the_variables():
    # 202 WRF variables of ~20 KiB: no alignment of 4 KiB or more is worth its
    # padding; 40 MiB variables take every alignment up to the stripe.
    small = build_space(RunShape(ranks=8, file_bytes=4 * MIB, var_bytes=20 * KIB))
    assert "alignment" not in small.knobs
    assert "alignment" not in small.knobs_for("direct")
    mid = build_space(RunShape(ranks=8, file_bytes=64 * MIB, var_bytes=MIB))
    assert mid.knobs["alignment"].values == (4 * KIB, 64 * KIB)
    large = build_space(RunShape(ranks=8, file_bytes=GIB, var_bytes=40 * MIB))
    assert MIB in large.knobs["alignment"].values
    unknown = build_space(RunShape(ranks=8, file_bytes=GIB))
    assert MIB in unknown.knobs["alignment"].values


def test_run_summary_gives_the_variable_size():
    from tessera.tune.runner import summarize_stats

    recs = [{"bytes": 40 * MIB, "variables": 10, "frames": 2},
            {"bytes": 4 * MIB, "variables": 202, "frames": 1}]
    assert summarize_stats(recs)["var_bytes"] == 4 * MIB // 202
    assert summarize_stats([{"bytes": 1}])["var_bytes"] == 0


def test_stage_knobs_only_with_a_stage_dir():
    # Without a fast tier the tuner cannot stage: no knobs, nothing to try.
    plain = build_space(RunShape(ranks=8, file_bytes=256 * MIB))
    assert "stage" not in plain.knobs and "stage_min_bytes" not in plain.knobs
    shape = RunShape(ranks=8, file_bytes=256 * MIB, small_file_bytes=22 * KIB,
                     stage_dir="/dev/shm/tune-stage")
    space = build_space(shape)
    for s in ("serial", "direct", "aggregate", "split"):
        assert {"stage", "stage_min_bytes"} <= set(space.knobs_for(s))
    # The threshold's first value is the power of two above the small files.
    assert space.knobs["stage_min_bytes"].values[0] == 32 * KIB
    assert max(space.knobs["stage_min_bytes"].values) <= 256 * MIB
    start = space.start_config("direct")
    on = space.with_value(start, "stage", shape.stage_dir)
    assert space.hints(on) == "strategy=direct:stage_dir=/dev/shm/tune-stage"
    # Off is the key unset (the library writes in place), reached as a neighbour.
    assert space.neighbours(on, "stage", 0) == [None]
    assert space.with_value(on, "stage", None) == start
    # A threshold turns the stage on with it: hybrid placement is one move ...
    hybrid = space.with_value(start, "stage_min_bytes", 32 * KIB)
    assert space.hints(hybrid) == \
        "strategy=direct:stage_dir=/dev/shm/tune-stage:stage_min_bytes=32k"
    assert space.valid(hybrid)
    # ... and turning the stage off drops the threshold; a threshold alone is invalid.
    assert space.with_value(hybrid, "stage", None) == start
    assert not space.valid(space.make("direct", {"stage_min_bytes": 32 * KIB}))
    # The log layout is a knob of the stage too: choosing it stages, the
    # native layout is the default (no key), turning the stage off drops it.
    assert "stage_format" in space.knobs_for("direct")
    log = space.with_value(start, "stage_format", "log")
    assert space.hints(log) == "strategy=direct:stage_dir=/dev/shm/tune-stage:stage_format=log"
    assert space.neighbours(log, "stage_format", 0) == ["native"]
    assert space.with_value(log, "stage_format", "native") == on
    assert space.with_value(log, "stage", None) == start
    assert not space.valid(space.make("direct", {"stage_format": "log"}))
    # Without small files the threshold starts at 1 MiB.
    none_small = build_space(RunShape(ranks=8, file_bytes=64 * MIB, stage_dir="/s"))
    assert none_small.knobs["stage_min_bytes"].values[0] == MIB


def test_rule_suggests_hybrid_placement_when_small_files_dominate():
    from tessera.tune.runner import summarize_stats

    def rec(name, nbytes, blocked):
        return {"file": name, "bytes": nbytes, "blocked_s": {"max": blocked}}

    # ExPBB: a 22 KB file takes most of the time next to two 256 MiB files.
    st = summarize_stats([rec("wrfout_0", 256 * MIB, 1.0), rec("wrfout_1", 256 * MIB, 1.0),
                          rec("namelist.output", 22 * KIB, 5.0)])
    assert (st["small_files"], st["small_file_bytes"]) == (1, 22 * KIB)
    assert st["small_blocked"] == pytest.approx(5.0)
    first = diagnose(st, "direct")[0]
    assert (first.knob, first.direction) == ("stage_min_bytes", +1)
    assert "small files dominate" in first.reason and "71%" in first.reason
    # The same files, the small one cheap: no hybrid advice.
    cheap = summarize_stats([rec("wrfout_0", 256 * MIB, 3.0),
                             rec("namelist.output", 22 * KIB, 1.0)])
    assert "stage_min_bytes" not in [a.knob for a in diagnose(cheap, "direct")]
    # Files of one size are none of them small.
    even = summarize_stats([rec("a", MIB, 1.0), rec("b", MIB, 9.0)])
    assert even["small_files"] == 0
    assert "stage_min_bytes" not in [a.knob for a in diagnose(even, "direct")]
