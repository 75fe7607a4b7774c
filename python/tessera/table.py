"""`tessera table FILE...`: the comparison table of tessera-bench --json results."""
from __future__ import annotations

import argparse
import sys

from .results import COLUMNS, ResultsError, case_text, load, status, value
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
