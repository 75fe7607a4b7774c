"""Every chart the tools draw, rendered from fixtures: the PNG is written and
no two pieces of text on it (tick labels, titles, axis labels, legend entries,
value annotations) overlap. Set TESSERA_CHART_DIR to keep the PNGs and look."""
import json
import os
import sys
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE / "fixtures" / "tune"))
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

import pytest  # noqa: E402

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from tessera import plot  # noqa: E402
from tessera.stats import command as stats  # noqa: E402
from tessera.stats import plot as stats_plot  # noqa: E402
from tessera.tune import report as tune_report  # noqa: E402
from tessera.bench.results import load  # noqa: E402
from tessera.tune.session import Evaluator, Session  # noqa: E402
from tune_helpers import fake_command, run_tune  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def out_dir(tmp_path):
    d = os.environ.get("TESSERA_CHART_DIR")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
        return Path(d)
    return tmp_path


def text_boxes(fig):
    """(text, bbox in pixels) of every visible, non-empty text of the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_alpha() != 0:
            out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def assert_no_overlap(fig, min_area=2.0):
    boxes = text_boxes(fig)
    assert boxes, "no text at all"
    clashes = []
    for (ta, a), (tb, b) in combinations(boxes, 2):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        if w > 0 and h > 0 and w * h > min_area:
            clashes.append((ta, tb))
    assert not clashes, f"overlapping labels: {clashes[:5]}"


def save_and_check(fig, path):
    assert_no_overlap(fig)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    assert Path(path).read_bytes()[:8] == PNG


def wrf_records(n):
    """n records of WRF history files with WRF's long names."""
    base = stats.read_records(str(HERE / "fixtures" / "stats" / "records.jsonl"))[0]
    out = []
    for i in range(n):
        rec = dict(base[i % len(base)])
        rec["file"] = f"run/wrfout_d01_2026-01-01_{i:02d}:00:00"
        out.append(rec)
    return out


@pytest.mark.parametrize("n", [1, 6, 12])
def test_stats_chart_labels_readable(tmp_path, n):
    fig = stats_plot.figure(wrf_records(n))
    save_and_check(fig, out_dir(tmp_path) / f"stats-{n}.png")


def test_stats_chart_from_the_fixture_file(tmp_path):
    png = out_dir(tmp_path) / "stats-fixture.png"
    assert stats.main([str(HERE / "fixtures" / "stats" / "records.jsonl"), "--png",
                       str(png)]) == 0
    assert png.read_bytes()[:8] == PNG


def test_demo_chart_labels_readable(tmp_path):
    records = load([str(HERE / "fixtures" / "bench" / "demo_results.json")])
    save_and_check(plot.figure(records), out_dir(tmp_path) / "demo.png")


def test_demo_chart_with_every_strategy(tmp_path):
    # Five strategies, servers with 3+1 ranks: the longest labels the demo has.
    records = load([str(HERE / "fixtures" / "bench" / "demo_results.json")])
    ok = [r for r in records if r.get("demo_status", "ok") == "ok"][0]
    servers = dict(ok, strategy="servers", ranks={"model": 3, "io": 1}, demo_status="ok")
    save_and_check(plot.figure(records + [servers]), out_dir(tmp_path) / "demo-all.png")


@pytest.mark.parametrize("extra,name", [((), "tune-winner.png"),
                                        (("--flat", "--noise", "0.6"), "tune-no-winner.png")])
def test_tune_chart_labels_readable(tmp_path, extra, name):
    code, out, _ = run_tune(tmp_path, ["--budget", "10", "--out", "out", "--no-plot"],
                            fake_command(*extra))
    assert code == 0
    session = Session.load(str(out / "session.json"))
    ev = Evaluator(session, runner=None, space=None, objective="wall", budget=10)
    fig = tune_report.tune_figure(ev, session, "wall")
    title = fig.axes[0].get_title()
    if session.result["verdict"] == "winner":
        assert "interval" in title
    else:
        assert "no configuration measurably better" in title
    save_and_check(fig, out_dir(tmp_path) / name)
    json.dumps(session.result)   # the result stays plain JSON
