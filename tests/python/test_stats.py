"""tessera stats (python/tessera/stats.py): table, advice rules and chart
against fixture records, and the record schema (docs/stats.schema.json)
against the contract's example and the fixtures. No MPI, no library needed."""
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIX = HERE / "fixtures" / "stats" / "records.jsonl"
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

import pytest  # noqa: E402

from tessera.stats import command as stats  # noqa: E402
from tessera.stats import rules as stats_rules  # noqa: E402

SCHEMA = ROOT / "docs" / "stats.schema.json"


def records():
    return stats.read_records(str(FIX))[0]


def by_name(name):
    return next(r for r in records() if r["file"].endswith(name))


def rules(name):
    return [a.rule for a in stats_rules.advise(by_name(name))]


def validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_read_records_skips_a_cut_line():
    recs, skipped = stats.read_records(str(FIX))
    assert len(recs) == 6 and skipped == 1


@pytest.mark.parametrize("name,expected", [
    ("wrfout_clean", []),
    ("wrfout_small", ["small-requests"]),
    ("wrfout_misaligned", ["misaligned"]),
    ("wrfout_serial", ["one-writer"]),
    ("wrfout_blocked", ["blocked"]),
    ("wrfout_cb1", ["one-writer"]),
])
def test_each_rule_fires_on_its_pattern_only(name, expected):
    assert rules(name) == expected


def test_hints_to_try():
    hint = lambda n: stats_rules.advise(by_name(n))[0].hint  # noqa: E731
    assert "strategy=aggregate:aggregators=2" in hint("wrfout_small")
    assert "cb_buffer_size" in hint("wrfout_small")
    assert "nc_var_align_size=1m" in hint("wrfout_misaligned")
    assert hint("wrfout_serial").startswith("strategy=aggregate:aggregators=")
    assert "strategy=servers" in hint("wrfout_blocked") and "buffer_bytes" in hint("wrfout_blocked")
    assert hint("wrfout_cb1").startswith("cb_nodes=")


def test_small_files_and_tiny_times_are_not_flagged():
    rec = dict(by_name("wrfout_small"))
    rec["counters"] = dict(rec["counters"], TSR_BYTES_WRITTEN=4096 * 100)  # 50 KiB per writer
    assert stats_rules.small_requests(rec) is None
    rec = dict(by_name("wrfout_serial"), writer_s={"min": 0.001, "max": 0.001, "mean": 0.001})
    assert stats_rules.one_writer(rec) is None


def test_rules_tolerate_missing_fields():
    assert stats_rules.advise({"tessera_stats": 1}) == []
    assert stats_rules.advise({"tessera_stats": 1, "counters": None, "writers": "x"}) == []


def test_table_and_advice_output(capsys, tmp_path):
    png = tmp_path / "stats.png"
    assert stats.main([str(FIX), "--png", str(png)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["file", "strategy", "writers"]
    assert re.search(r"^wrfout_cb1\s+direct\s+8 \(cb 1\)", out, re.M)
    assert re.search(r"^wrfout_small .* 4096\s+16\.0K\s+100%", out, re.M)
    assert "! small-requests: 4096 of 4096 write requests are smaller than 1 MiB" in out
    assert "! misaligned: 90 of 100 write requests" in out
    assert out.count("    try: ") == 5
    assert "skipped 1 line" in err
    assert f"chart: {png}" in out
    pytest.importorskip("matplotlib")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_output_and_match(capsys):
    assert stats.main([str(FIX), "--json", "--match", "wrfout_b*"]) == 0
    out = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert len(out) == 1 and out[0]["file"] == "run/wrfout_blocked"
    assert [a["rule"] for a in out[0]["advice"]] == ["blocked"]


def test_no_records_and_missing_file(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert stats.main([str(empty)]) == 1
    assert stats.main([str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_dispatcher_knows_stats():
    from tessera import __main__ as cli

    assert cli.load("stats") is stats


def test_schema_accepts_the_contract_example_and_fixtures():
    v = validator()
    doc = (ROOT / "docs" / "stats-format.md").read_text()
    example = json.loads(re.search(r"```json\n(.*?)```", doc, re.S).group(1))
    v.validate(example)
    for rec in records():
        v.validate(rec)


def test_schema_rejects_broken_records():
    v = validator()
    good = by_name("wrfout_clean")
    for bad in (
        {k: x for k, x in good.items() if k != "writers"},           # a contract field missing
        dict(good, strategy="fast"),                                   # unknown strategy
        dict(good, counters=dict(good["counters"], TSR_WRITES=-1)),    # negative counter
        dict(good, blocked_s={"min": 0.1, "max": 0.2}),                # no mean
    ):
        assert not v.is_valid(bad)
