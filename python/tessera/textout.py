"""Tables and progress for every `tessera` command, through rich.

One place decides how text tables look (plain ASCII rules, no colour when the
output is not a terminal, never wrapped or cut) so that the demo, `table`,
`stats` and `tune` print alike and tests can read the rows back.
"""
from __future__ import annotations

import io
import shutil
import sys

from rich.box import Box
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn)
from rich.table import Column, Table

#: Wide enough that no cell of any table here is ever wrapped.
RENDER_WIDTH = 400
#: Header ruled with ASCII dashes under each column, nothing else drawn
#: (rich's SIMPLE_HEAD, in characters every log viewer shows).
RULED_HEAD = Box("    \n    \n -  \n    \n    \n    \n    \n    \n")


def make_table(headers: list, rows: list, right: set | None = None,
               title: str | None = None) -> Table:
    """A table with a ruled header; columns named in `right` are right-aligned."""
    right = right or set()
    t = Table(box=RULED_HEAD, show_edge=False, pad_edge=False, title=title,
              title_justify="left", collapse_padding=True)
    for h in headers:
        t.add_column(h, justify="right" if h in right else "left", no_wrap=True)
    for r in rows:
        t.add_row(*[str(c) for c in r])
    return t


def render(renderable) -> str:
    """Plain text of a rich renderable: no colour, no trailing spaces."""
    buf = io.StringIO()
    console = Console(file=buf, width=RENDER_WIDTH, color_system=None, force_terminal=False,
                      legacy_windows=False, highlight=False, emoji=False)
    console.print(renderable)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def table_text(headers: list, rows: list, right: set | None = None,
               title: str | None = None) -> str:
    return render(make_table(headers, rows, right, title))


def stderr_console() -> Console:
    return Console(file=sys.stderr, highlight=False,
                   width=max(80, shutil.get_terminal_size((120, 24)).columns))


def progress_bar(console: Console, unit: str) -> Progress:
    """A live bar for a terminal: description, done/total, bar, elapsed, then a
    note that is cut (never the count) when the terminal is narrow."""
    note = Column(no_wrap=True, overflow="ellipsis", ratio=1)
    return Progress(TextColumn("{task.description}"), MofNCompleteColumn(), TextColumn(unit),
                    BarColumn(bar_width=20), TimeElapsedColumn(),
                    TextColumn("{task.fields[note]}", table_column=note),
                    console=console, transient=False, expand=True)


def step(console: Console, label: str, run):
    """Run `run()` for one step of a long command, showing `label` with a
    spinner on a terminal, then print the label with the step's outcome
    (`run()` returns (result, outcome text)). Without a terminal it prints the
    label first and the outcome when done, so a log shows what is running."""
    if console.is_terminal:
        with console.status(label):
            result, outcome = run()
        console.print(f"{label} {outcome}", markup=False, highlight=False)
        return result
    console.file.write(f"{label} ")
    console.file.flush()
    result, outcome = run()
    console.file.write(f"{outcome}\n")
    console.file.flush()
    return result
