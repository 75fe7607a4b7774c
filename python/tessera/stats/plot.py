"""The PNG of `tessera stats --png`: time per file and per rank group.

For each file two bars: the model ranks' time blocked in Tessera calls and the
writers' time in the backend (max over the ranks of the group, with marks for
the mean and the minimum), so a file where the model waits far longer than the
writers write stands out at a glance. Files are rows (horizontal bars): WRF's
file names are long, and rows keep every name whole and readable however many
files there are. Files written with strategy=auto carry their candidate in
the label, and a red triangle marks each file after which auto switched
its kept choice (docs/auto.md).
"""
from __future__ import annotations

import os

from .rules import part

GROUPS = (("blocked_s", "model ranks blocked", "#4878a8"),
          ("writer_s", "writers writing", "#e07b39"))


def label(rec: dict, index: int) -> str:
    name = os.path.basename(str(rec.get("file", ""))) or f"file {index + 1}"
    w = rec.get("writers", "?")
    a = rec.get("auto")
    what = a.get("choice", "?").replace("strategy=", "auto: ") if isinstance(a, dict) else \
        rec.get("strategy", "?")
    return f"{name}\n{what}, {w} writer{'' if w == 1 else 's'}"


def figure(records: list, title: str = "Tessera statistics"):
    """The matplotlib figure of the chart (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(records)
    labels = [label(r, i) for i, r in enumerate(records)]
    longest = max((len(ln) for lab in labels for ln in lab.splitlines()), default=10)
    height = 0.38
    # Room on the left for the longest name at 8 pt (about 0.075 in per character).
    left_in = 0.3 + 0.075 * longest
    fig, ax = plt.subplots(figsize=(left_in + 7.5, 1.6 + 0.75 * n))
    ys = list(range(n))
    for g, (key, name, color) in enumerate(GROUPS):
        pos = [y + (g - 0.5) * height for y in ys]
        ax.barh(pos, [part(r, key, "max") for r in records], height, color=color,
                alpha=0.85, label=f"{name} (max)")
        ax.scatter([part(r, key, "mean") for r in records], pos, color="black", marker="|",
                   s=120, zorder=3, label="mean" if g == 0 else None)
        ax.scatter([part(r, key, "min") for r in records], pos, color="black", marker=".",
                   s=30, zorder=3, label="min" if g == 0 else None)
    switches = [(part(r, "blocked_s", "max"), y - 0.5 * height) for y, r in zip(ys, records)
                if isinstance(r.get("auto"), dict) and r["auto"].get("switched")]
    if switches:
        ax.scatter([x for x, _ in switches], [y for _, y in switches], color="#c0392b",
                   marker="<", s=60, zorder=4, label="auto switched after this file")
    ax.set_yticks(ys, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    # The legend right of the axes never covers a bar or the axis label.
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def draw(records: list, path: str, title: str = "Tessera statistics") -> str:
    """Write the chart to @p path and return it. Needs matplotlib (Agg)."""
    import matplotlib.pyplot as plt

    fig = figure(records, title)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
