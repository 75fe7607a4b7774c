"""The PNG of `tessera stats --png`: time per file and per rank group.

For each file two groups of bars: the model ranks' time blocked in Tessera
calls and the writers' time in the backend (min, mean, max over the ranks of
the group), so a file where the model waits far longer than the writers write
stands out at a glance.
"""
from __future__ import annotations

import os

from .stats_rules import part

GROUPS = (("blocked_s", "model ranks blocked", "#4878a8"),
          ("writer_s", "writers writing", "#e07b39"))


def label(rec: dict, index: int) -> str:
    name = os.path.basename(str(rec.get("file", ""))) or f"file {index + 1}"
    if len(name) > 28:
        name = name[:12] + "..." + name[-13:]
    return f"{name}\n{rec.get('strategy', '?')}, {rec.get('writers', '?')} writers"


def draw(records: list, path: str, title: str = "Tessera statistics") -> str:
    """Write the chart to @p path and return it. Needs matplotlib (Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(records)
    width = 0.38
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * n + 2.0), 4.8))
    xs = list(range(n))
    for g, (key, name, color) in enumerate(GROUPS):
        pos = [x + (g - 0.5) * width for x in xs]
        maxima = [part(r, key, "max") for r in records]
        means = [part(r, key, "mean") for r in records]
        minima = [part(r, key, "min") for r in records]
        ax.bar(pos, maxima, width, color=color, alpha=0.85, label=f"{name} (max)")
        ax.scatter(pos, means, color="black", marker="_", s=200, zorder=3,
                   label="mean" if g == 0 else None)
        ax.scatter(pos, minima, color="black", marker=".", s=30, zorder=3,
                   label="min" if g == 0 else None)
    ax.set_xticks(xs)
    ax.set_xticklabels([label(r, i) for i, r in enumerate(records)], fontsize=8)
    ax.set_ylabel("seconds")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
