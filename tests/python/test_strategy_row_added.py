"""Adding a strategy to the Python tools is its file and its row in the
registry, nothing else (issue 26, docs/architecture.md, "python/"): on a
copy of the package the test adds tessera/strategy/demo_row.py, a row with
aggregate's data movement at a quarter of its frame cost, and the import and the
ROWS entry of tessera/strategies.py that list it; then `tessera model
predict` prices it, `tessera advise` ranks it (and recommends it, being the
cheapest), the tuner's space searches it with its own knobs and the
statistics' rules answer for it, each run in a fresh interpreter on the
copy. No other module is touched, so a module that compared a strategy's
name or listed the strategies itself would fail here.

The copy is the only faithful way to add a row: strategies.py builds ROWS
when it is imported, as a new strategy's author would edit it, and modules
such as tune/space.py derive their tables from ROWS at import.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent.parent / "python" / "tessera"
STATS_RECORDS = HERE / "fixtures" / "stats" / "records.jsonl"

#: The new strategy's file: aggregate's knobs, texts and equations, under its
#: own name, at a QUARTER of aggregate's frame cost (so the ranking must change), with
#: two tuning knobs of aggregate's eight and its own advice for small requests.
ROW_FILE = '''\
"""strategy=demo_row: aggregate's data movement at a quarter of its frame cost."""
from __future__ import annotations

from .aggregate import Aggregate


class DemoRow(Aggregate):
    name = "demo_row"
    demo_hints = "strategy=demo_row:aggregators=2"
    short_syntax = "demo_row:N"
    tune_knobs = ("aggregators", "stride")
    tune_order = 5
    advise_order = 6

    def label(self, s):
        return f"demo_row:{s.aggregators}" if s.aggregators else "demo_row"

    def hints(self, s):
        return f"strategy=demo_row:aggregators={s.aggregators}" if s.aggregators \\
            else "strategy=demo_row"

    def frame(self, case, s, profile, model, px, py):
        return super().frame(case, s, profile, model, px, py).scaled(0.25)

    def small_requests_hint(self, writers, small_variables, aggregators, slab):
        return f"demo_row: {writers} writers, slab {slab}"
'''

#: The registry's two lines before and after (strategies.py).
IMPORT_AFTER = "from .strategy.aggregate import Aggregate\n"
IMPORT_LINE = "from .strategy.demo_row import DemoRow\n"
ROWS_BEFORE = "ROWS = (Serial(), Direct(), Aggregate(), Split(), Servers())\n"
ROWS_AFTER = "ROWS = (Serial(), Direct(), Aggregate(), Split(), Servers(), DemoRow())\n"

#: A profile written here, so the answers do not move when the shipped ones
#: are refitted (test_advise.py's cluster).
CLUSTER = {"name": "cluster", "cores": 0, "cb_nodes": 4,
           "values": {"copy_bw": 5e9, "net_bw": 1e10, "msg_s": 1e-6, "match_s": 1.4e-7,
                      "coll_s": 2e-6, "write_bw": 5e8, "fs_bw": 0, "req_s": 0.001,
                      "file_s": 0.05, "open_s": 1e-4}}
CASE = ["--nx", "200", "--ny", "100", "--nz", "10", "--steps", "20", "--output-every", "10"]


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """A copy of the package with demo_row's file and its row; its root."""
    root = tmp_path_factory.mktemp("added")
    shutil.copytree(PACKAGE, root / "tessera",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tessera" / "strategy" / "demo_row.py").write_text(ROW_FILE)
    registry = root / "tessera" / "strategies.py"
    text = registry.read_text()
    # The registry as the docs describe it: if these lines moved, say so
    # rather than test a package that never had the row.
    assert text.count(IMPORT_AFTER) == 1 and text.count(ROWS_BEFORE) == 1, \
        "strategies.py no longer lists its rows as this test expects"
    registry.write_text(text.replace(IMPORT_AFTER, IMPORT_AFTER + IMPORT_LINE)
                            .replace(ROWS_BEFORE, ROWS_AFTER))
    (root / "cluster.json").write_text(json.dumps(CLUSTER))
    return root


def run(root: Path, *argv: str) -> subprocess.CompletedProcess:
    """A fresh interpreter on the copy (its tessera before any other)."""
    env = dict(os.environ, PYTHONPATH=str(root), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, *argv], cwd=root, env=env, text=True,
                          capture_output=True, timeout=120)


def tessera(root: Path, *argv: str) -> str:
    r = run(root, "-m", "tessera", *argv)
    assert r.returncode == 0, r.stderr
    return "\n".join(line.rstrip() for line in r.stdout.splitlines()) + "\n"


def probe(root: Path, code: str):
    """What `code` (a Python body that sets `out`) leaves in `out`, as JSON."""
    r = run(root, "-c", code + "\nimport json\nprint(json.dumps(out))")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_copy_is_what_runs(added):
    where = probe(added, "import tessera.strategies as S\nout = [S.__file__, list(S.NAMES)]")
    assert where == [str(added / "tessera" / "strategies.py"),
                     ["serial", "direct", "aggregate", "split", "servers", "demo_row"]]


PREDICTED = """\
case: 200 x 100 x 10, 3 outputs of 9.5 MB in 3 files; profile cluster
predicted output cost
strategy     procs  model  blocked/output s  blocked s  write s  hidden s  drain s  I/O share  mem writer   mem rank
aggregate:4      8      8           0.09345     0.2803   0.2734         0        0    100.0 %     2.7 MiB  107.4 KiB
aggregate:4     16     16            0.0939     0.2817   0.2734         0        0    100.0 %     2.7 MiB   53.7 KiB
demo_row:4       8      8           0.06121     0.1836   0.1817         0        0    100.0 %     2.7 MiB  107.4 KiB
demo_row:4      16     16           0.06133      0.184   0.1817         0        0    100.0 %     2.7 MiB   53.7 KiB

"""


def test_the_model_predicts_for_it(added):
    """Same memory as aggregate (its formula, inherited), less blocked time
    (its own frame cost), and the short form `demo_row:4` read by its row."""
    out = tessera(added, "model", "predict", "--profile", "cluster.json",
                  "--strategies", "aggregate:4,demo_row:4", "--ranks", "8,16", *CASE)
    assert out == PREDICTED


def test_the_model_prices_its_frame_through_the_row(added):
    """The frame the model puts on the time line is the row's: exactly a
    quarter of aggregate's, amount by amount."""
    same = probe(added, """
from tessera.model.case import bench_case
from tessera.model.profile import load
from tessera.model.strategy import Strategy, sync_frame
case, prof = bench_case(200, 100, 10, 20, 10, 1, None), load('cluster.json')
agg = sync_frame(case, Strategy('aggregate', aggregators=4), prof, 8)
demo = sync_frame(case, Strategy('demo_row', aggregators=4), prof, 8)
out = [sorted(agg) == sorted(demo), all(demo[k] == agg[k] / 4 for k in agg), len(agg)]
""")
    assert same[:2] == [True, True] and same[2] > 3


def test_an_unknown_name_lists_it(added):
    r = run(added, "-m", "tessera", "advise", "--procs", "4", "--strategies", "nope")
    assert r.returncode == 2
    assert r.stderr == ("tessera advise: unknown strategy nope in --strategies "
                        "(serial, direct, aggregate, split, servers, demo_row)\n")
    said = probe(added, """
from tessera.model.command import parse_strategy
try:
    parse_strategy('nope')
except ValueError as e:
    out = str(e)
""")
    assert said == ("unknown strategy 'nope' (serial, direct, split, aggregate:N, servers:GxT, "
                    "demo_row:N, or strategy=...)")


ADVISED = """\
case: 200 x 100 x 10, 3 outputs of 9.5 MB, 16 processes; profile cluster
predicted, best first
hints                            WRF         wall s  blocked s  hidden s  mem writer/server  mem other rank
strategy=demo_row:aggregators=8  io_form 12  0.1831     0.1831         0            1.3 MiB        53.7 KiB
strategy=demo_row:aggregators=4  io_form 12   0.184      0.184         0            2.7 MiB        53.7 KiB
strategy=demo_row:aggregators=2  io_form 12  0.1878     0.1878         0            5.3 MiB        53.7 KiB
strategy=direct                  io_form 11  0.1901     0.1901         0           16.6 MiB       579.7 KiB

recommended: TESSERA_HINTS=strategy=demo_row:aggregators=8
  predicted: wall 0.1831 s, blocked 0.1831 s; aggregators 2-8 within 3 % of its wall time
  memory: 1.3 MiB on each of the 8 aggregators (the writers), 53.7 KiB on each other rank
  WRF: io_form_history = 12 (PIO) with 8 I/O tasks, one every 2 ranks (the Irma study's
    &pio_control: pioprocs = 8, piostride = 2)
alternative: TESSERA_HINTS=strategy=direct
  predicted: wall 0.1901 s, blocked 0.1901 s
  memory: 16.6 MiB on each MPI-IO aggregator of the collective write, 579.7 KiB on each other rank
  WRF: io_form_history = 11 (every rank writes collectively through PnetCDF)
notes:
  - wall time is the blocked output alone (no --step-s: no compute); reading input and setup are
    left out
  - profile cluster leaves the file system's bandwidth unbounded (fs_bw = 0 or absent): more writers
    never saturate it in the model, so the writer counts (aggregators, io_tasks) are not to be
    trusted; measure the file system you write to (tessera model calibrate --stats, docs/model.md)
"""


def test_advise_ranks_and_recommends_it(added):
    """Among every strategy's candidates (the rows' `candidates`), demo_row's
    are the cheapest, ahead of direct, which the package without the row
    recommends for the same case; the flat range, memory and WRF texts are
    the row's, inherited from aggregate."""
    argv = ("advise", "--profile", str(added / "cluster.json"), "--procs", "16", "--top", "4",
            *CASE)
    assert tessera(added, *argv) == ADVISED
    assert "\nrecommended: TESSERA_HINTS=strategy=direct\n" in tessera(PACKAGE.parent, *argv)


def test_the_tuner_searches_it_with_its_knobs(added):
    space = probe(added, """
from tessera.tune.space import ALL_STRATEGIES, RunShape, build_space
sp = build_space(RunShape(ranks=8, file_bytes=1 << 30))
out = {'all': list(ALL_STRATEGIES), 'space': sp.strategies,
       'knobs': sp.knobs_for('demo_row'), 'aggregate': sp.knobs_for('aggregate'),
       'hints': sp.hints(sp.make('demo_row', {'aggregators': 4, 'stride': 2})),
       'chosen': build_space(RunShape(ranks=8), ['demo_row']).strategies}
""")
    assert space == {
        "all": ["direct", "aggregate", "serial", "split", "servers", "demo_row"],
        "space": ["direct", "aggregate", "serial", "split", "demo_row"],
        "knobs": ["aggregators", "stride"],
        "aggregate": ["aggregators", "stride", "exchange", "cb_nodes", "cb_buffer_size",
                      "striping_unit", "alignment", "buffer_bytes"],
        "hints": "strategy=demo_row:aggregators=4:stride=2",
        "chosen": ["demo_row"]}


def test_the_statistics_rules_answer_for_it(added):
    """The small-requests rule takes its hint from the record's strategy's
    row (wrfout_small: 8 writers of 6.4 MiB variables)."""
    advice = probe(added, f"""
from tessera.stats import command as stats
from tessera.stats import rules as R
rec = next(r for r in stats.read_records({str(STATS_RECORDS)!r})[0]
           if r['file'].endswith('wrfout_small'))
out = [[a.rule, a.hint] for a in R.advise(dict(rec, strategy='demo_row'))]
""")
    assert ["small-requests", "demo_row: 8 writers, slab 8m"] in advice
