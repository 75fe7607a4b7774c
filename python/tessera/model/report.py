"""Tables (rich) and charts (matplotlib PNG) for the model's commands."""
from __future__ import annotations

import os


def table(title: str, columns: list, rows: list, right_from: int = 1) -> str:
    """Render a table as text: columns left of `right_from` align left."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, title_justify="left", box=None, pad_edge=False, header_style="bold")
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if i < right_from else "right", no_wrap=True)
    for r in rows:
        t.add_row(*[str(x) for x in r])
    console = Console(width=200, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(t)
    return console.export_text().rstrip() + "\n"


def err_pct(pred: float, meas: float) -> float:
    return 100.0 * (pred - meas) / meas if meas else float("nan")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11})
    return plt


def save(fig, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def lines_chart(path: str, title: str, xlabel: str, ylabel: str, series: dict,
                measured: dict | None = None, logx: bool = False, logy: bool = False,
                measured_word: str = "measured") -> str:
    """One line per series {label: (xs, ys)}; measured {label: (xs, ys)} as
    markers of the same colour."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, (xs, ys)) in enumerate(series.items()):
        c = colors[i % len(colors)]
        ax.plot(xs, ys, "-", color=c, lw=2, label=f"{label} (model)")
        if measured and label in measured:
            mx, my = measured[label]
            ax.plot(mx, my, "o", color=c, ms=7, mfc="none", mew=2, label=f"{label} ({measured_word})")
    if logx:
        ax.set_xscale("log", base=2)
        xs = sorted({x for s in series.values() for x in s[0]})
        ax.set_xticks(xs, [str(x) for x in xs])
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    path = save(fig, path)
    plt.close(fig)
    return path
