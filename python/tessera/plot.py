"""`tessera plot FILE... -o chart.png`: the comparison chart of tessera-bench
--json results: where the wall time went (compute, blocked in output, the
rest) per strategy, and the output bandwidth the model saw."""
from __future__ import annotations

import argparse
import os
import sys

from .bench.results import ResultsError, case_text, load, ranks_text, status


def figure(records: list[dict], title: str = ""):
    """The matplotlib figure of the records that ran (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = [r for r in records if status(r) == "ok"]
    if not ran:
        raise ResultsError("no successful runs to plot")
    labels = [f"{r['strategy']}\n({ranks_text(r)} ranks)" for r in ran]
    compute = [float(r["compute_s"]) for r in ran]
    blocked = [float(r["output_blocked_s"]) for r in ran]
    wall = [float(r["wall_s"]) for r in ran]
    other = [max(w - c - b, 0.0) for w, c, b in zip(wall, compute, blocked)]
    eff = [float(r["effective_bw"]) / 1e6 for r in ran]
    write = [float(r["write_bw"]) / 1e6 for r in ran]
    ys = list(range(len(ran)))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 2.2 + 0.7 * len(ran)),
                                   gridspec_kw={"width_ratios": [3, 2]})
    ax1.barh(ys, compute, color="#4C72B0", label="compute (kernel + halo)")
    ax1.barh(ys, blocked, left=compute, color="#DD8452", label="blocked in output")
    ax1.barh(ys, other, left=[c + b for c, b in zip(compute, blocked)], color="#BBBBBB",
             label="other (setup, waits)")
    for y, w, r in zip(ys, wall, ran):
        ax1.text(w, y, f" {w:.2f} s, I/O {100 * float(r['io_fraction']):.0f} %", va="center",
                 fontsize=8)
    ax1.set_yticks(ys, labels)
    ax1.invert_yaxis()
    ax1.set_xlabel("wall time (s)")
    ax1.set_xlim(0, max(wall) * 1.35 if max(wall) > 0 else 1)
    ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=8,
               frameon=False)
    ax1.set_title("where the time went")

    h = 0.38
    ax2.barh([y - h / 2 for y in ys], eff, height=h, color="#55A868",
             label="effective (bytes / blocked)")
    ax2.barh([y + h / 2 for y in ys], write, height=h, color="#8172B3",
             label="write (bytes / writer time)")
    ax2.set_yticks(ys, [r["strategy"] for r in ran])
    ax2.invert_yaxis()
    ax2.set_xlabel("MB/s")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1, fontsize=8,
               frameon=False)
    ax2.set_title("output bandwidth")

    fig.suptitle(title or f"tessera-bench: {case_text(records)}", fontsize=10)
    fig.tight_layout()
    return fig


def plot(records: list[dict], path: str, title: str = "") -> str:
    """Write the chart of the records that ran to `path` (PNG); returns path."""
    import matplotlib.pyplot as plt

    fig = figure(records, title)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tessera plot",
                                description="Draw the comparison chart of tessera-bench --json "
                                            "results as a PNG.")
    p.add_argument("files", nargs="+", help="bench --json files, the demo's results.json, "
                                            "or directories of them")
    p.add_argument("-o", "--output", default="tessera-bench.png", help="PNG to write")
    p.add_argument("--title", default="", help="chart title")
    args = p.parse_args(argv)
    try:
        path = plot(load(args.files), args.output, args.title)
    except ResultsError as e:
        print(f"tessera plot: {e}", file=sys.stderr)
        return 1
    print(f"chart: {path}")
    return 0
