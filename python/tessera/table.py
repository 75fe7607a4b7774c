"""`tessera table FILE...`: the comparison table of tessera-bench --json results."""
from __future__ import annotations

import argparse
import sys

from .bench.results import COLUMNS, ResultsError, case_text, load, status, value
from .textout import table_text

LEGEND = """\
wall: model start to all output closed; compute: kernel + halo exchange;
blocked: time the model ranks spent inside Tessera calls; output: first hand-off
to the last file closed; drain: end of the last step to all output closed;
I/O share = blocked / wall; MB/s = bytes / blocked (what the model sees);
write MB/s = bytes / writer time (what the file system sees). Maxima over model
ranks; ranks m+s = m model ranks + s I/O server ranks."""


def format_table(records: list[dict], legend: bool = False) -> str:
    """Rows for the records that ran (or failed), a note for those not built."""
    shown = [r for r in records if status(r) != "not built"]
    left = {"strategy", "check"}
    text = table_text([c.title for c in COLUMNS], [[value(r, c) for c in COLUMNS] for r in shown],
                      right={c.title for c in COLUMNS if c.key not in left})
    out = text.splitlines()
    for r in shown:
        if status(r) == "failed" and r.get("demo_message"):
            out.append(f"  {r['strategy']}: {r['demo_message']}")
    for r in records:
        if status(r) == "not built":
            msg = r.get("demo_message") or "not built into this library"
            out.append(f"  {r['strategy']}: skipped, {msg}")
    if legend:
        out += ["", LEGEND]
    return "\n".join(out)


ROWS_LEGEND = """\
Input: reading wrfinput_d01 at the start; Output: the history (blocked time,
as above); Restart: writing the restart files / reading one back to resume.
Seconds the model ranks spent (maxima over them); MB: data bytes moved."""


def _mb(nbytes) -> str:
    return "-" if nbytes is None else f"{float(nbytes) / 1e6:.1f}"


def _s(seconds) -> str:
    return "-" if seconds is None else f"{float(seconds):.3f}"


def format_rows(records: list[dict], legend: bool = False) -> str:
    """The WRF I/O studies' table: rows Input, Output and Restart, a column of
    seconds per strategy that ran. Every run of the demo moves the same data,
    so the bytes are the first run's."""
    ran = [r for r in records if status(r) == "ok"]
    if not ran:
        return ""
    first = ran[0]
    headers = ["", "MB"] + [r["strategy"] for r in ran]
    rows = [
        ["Input", _mb(first.get("input_bytes"))] + [_s(r.get("input_s")) for r in ran],
        ["Output", _mb(first.get("bytes"))] + [_s(r.get("output_blocked_s")) for r in ran],
        ["Restart", f"{_mb(first.get('restart_bytes'))} / {_mb(first.get('restart_read_bytes'))}"]
        + [f"{_s(r.get('restart_s'))} / {_s(r.get('restart_read_s'))}" for r in ran],
    ]
    text = table_text(headers, rows, right=set(headers[1:]))
    return text + ("\n\n" + ROWS_LEGEND if legend else "")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tessera table",
                                description="Print the comparison table of tessera-bench "
                                            "--json results (files, lists or directories).")
    p.add_argument("files", nargs="+", help="bench --json files, the demo's results.json, "
                                            "or directories of them")
    p.add_argument("--legend", action="store_true", help="explain the columns")
    args = p.parse_args(argv)
    try:
        records = load(args.files)
    except ResultsError as e:
        print(f"tessera table: {e}", file=sys.stderr)
        return 1
    if not records:
        print("tessera table: no results found", file=sys.stderr)
        return 1
    case = case_text(records)
    if case:
        print(case)
    print(format_table(records, legend=args.legend))
    return 0
