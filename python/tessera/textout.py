"""Tables and progress for every `tessera` command, through rich.

One place decides how text tables look (plain ASCII rules, no colour when the
output is not a terminal, never wrapped or cut) so that the demo, `table`,
`stats` and `tune` print alike and tests can read the rows back.
"""
from __future__ import annotations

import io
import shutil
import sys
import time

from rich.box import Box
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
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
    """A live bar for a terminal: description, done/total, bar, elapsed, time
    left, then a note that is cut (never the count) when the terminal is narrow."""
    note = Column(no_wrap=True, overflow="ellipsis", ratio=1)
    return Progress(TextColumn("{task.description}"), MofNCompleteColumn(), TextColumn(unit),
                    BarColumn(bar_width=20), TimeElapsedColumn(), TextColumn("left"),
                    TimeRemainingColumn(),
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


def duration_text(seconds: float) -> str:
    """45 s, 3 min 05 s, 1 h 02 min: a time left as a reader says it."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Countdown:
    """The overall count of a long command's runs and the time left, estimated
    from the mean of the runs so far: `tag()` before a run gives
    "[run 4/17, about 2 min 10 s left]". A run that will not happen (a section
    skipped because what it needs failed) is taken off with `skip`."""

    def __init__(self, total: int):
        self.total, self.done, self.spent = total, 0, 0.0

    def left(self) -> str:
        """", about 2 min 10 s left" once a run has finished ("" before)."""
        if not self.done or self.done >= self.total:
            return ""
        return f", about {duration_text(self.spent / self.done * (self.total - self.done))} left"

    def tag(self) -> str:
        """The count of the run about to start, and the time left."""
        return f"[run {self.done + 1}/{self.total}{self.left()}]"

    def skip(self, runs: int) -> None:
        self.total = max(self.done, self.total - runs)

    def finish(self, seconds: float) -> None:
        """One run done, after @p seconds."""
        self.spent += seconds
        self.done += 1

    def step(self, console: Console, label: str, run):
        """`step` with the count and time left after the label."""
        t0 = time.monotonic()
        try:
            return step(console, f"{label} {self.tag()} ...", run)
        finally:
            self.finish(time.monotonic() - t0)
