"""`tessera stats FILE.json... [--png PATH]`: summarise statistics records.

Reads the JSON lines TESSERA_STATS_FILE collects (one record per closed file,
docs/stats-format.md), prints one table row per file, flags the patterns
Darshan-based tools flag with the hint to try (rules), and with --png
draws time per file and per rank group (plot). docs/statistics.md is the
user guide.

Exit status: 0 when records were read, 1 when none were found, 2 on a usage
error or an unreadable file.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys

from ..outpath import OutputPathError, output_file, refuse
from ..textout import table_text
from .plot import draw
from .records import read_records
from .rules import advise, counters, human, num, part

COLUMNS = ("file", "strategy", "writers", "bytes", "fr", "vars", "blocked max s",
           "writer max s", "put->close s", "writes", "mean req", "<1MiB", "unaligned", "consec")


def share(n: float, total: float) -> str:
    return f"{100.0 * n / total:.0f}%" if total else "-"


def writers_cell(rec: dict) -> str:
    w = str(rec.get("writers", "?"))
    cb = rec.get("mpiio_cb_nodes")
    if isinstance(cb, int) and not isinstance(cb, bool):
        w += f" (cb {cb})"
    if rec.get("writers_on") == "io_servers":
        w += " io"
    return w


def row(rec: dict) -> list:
    c = counters(rec)
    writes = int(num(c.get("TSR_WRITES")))
    small = sum(int(num(c.get(k))) for k in ("TSR_SIZE_WRITE_0_100", "TSR_SIZE_WRITE_100_1K",
                                               "TSR_SIZE_WRITE_1K_10K", "TSR_SIZE_WRITE_10K_100K",
                                               "TSR_SIZE_WRITE_100K_1M"))
    known = int(num(c.get("TSR_WRITES_WITH_OFFSET"), writes))
    return [
        os.path.basename(str(rec.get("file", ""))),
        str(rec.get("strategy", "?")),
        writers_cell(rec),
        human(num(rec.get("bytes"))),
        str(rec.get("frames", "?")),
        str(rec.get("variables", "?")),
        f"{part(rec, 'blocked_s'):.3f}",
        f"{part(rec, 'writer_s'):.3f}",
        f"{num(rec.get('first_put_to_close_s')):.3f}",
        str(writes),
        human(num(c.get("TSR_BYTES_WRITTEN")) / writes) if writes else "-",
        share(small, writes),
        share(num(c.get("TSR_FILE_NOT_ALIGNED")), known) if known else "n/a",
        share(num(c.get("TSR_CONSEC_WRITES")), known) if known else "n/a",
    ]


def table(records: list) -> str:
    return table_text(list(COLUMNS), [row(r) for r in records],
                      right=set(COLUMNS[2:]))


def auto_text(records: list) -> str:
    """strategy=auto's decisions, one line per file that was written with it
    (the record's `auto` object, docs/auto.md): the candidate, the measured
    and predicted blocked time, the compute interval before it and why it was
    chosen; a switch of the kept choice is marked."""
    out = []
    for rec in records:
        a = rec.get("auto")
        if not isinstance(a, dict):
            continue
        mark = "  [switch]" if a.get("switched") else ""
        out.append(f"{a.get('index', '?'):>3} {os.path.basename(str(rec.get('file', '')))}: "
                   f"{a.get('choice', '?')}  measured {num(a.get('measured_s')):.4f} s, "
                   f"predicted {num(a.get('predicted_s')):.4f} s, "
                   f"compute {num(a.get('compute_s')):.3f} s{mark}")
        out.append(f"      why: {a.get('why', '')}")
        if a.get("fallback"):
            out.append(f"      {a['fallback']}")
    return "\n".join(out)


def advice_text(records: list) -> tuple:
    """(text, count): the advice on every record, one block per flagged file."""
    out, count = [], 0
    for rec in records:
        found = advise(rec)
        if not found:
            continue
        out.append(f"{os.path.basename(str(rec.get('file', '')))} ({rec.get('strategy', '?')}):")
        for a in found:
            out.append(f"  ! {a.rule}: {a.message}")
            out.append(f"    try: {a.hint}")
            count += 1
    return "\n".join(out), count


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tessera stats",
        description="Summarise Tessera statistics records (TESSERA_STATS_FILE, JSON lines).")
    p.add_argument("files", nargs="+", metavar="FILE.json", help="statistics files (JSON lines)")
    p.add_argument("--png", metavar="PATH", help="draw time per file and rank group to PATH")
    p.add_argument("--match", metavar="GLOB", default="",
                   help="only records whose file (or its base name) matches GLOB")
    p.add_argument("--json", action="store_true",
                   help="print the records with their advice as JSON lines instead of a table")
    p.add_argument("--no-advice", action="store_true", help="print the table only")
    return p.parse_args(argv)


def matches(rec: dict, glob: str) -> bool:
    if not glob:
        return True
    path = str(rec.get("file", ""))
    return fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(os.path.basename(path), glob)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.png:
        try:  # before the table is printed
            output_file(args.png)
        except OutputPathError as e:
            return refuse("stats", e)
    records, skipped = [], 0
    for path in args.files:
        try:
            got, bad = read_records(path)
        except OSError as e:
            print(f"tessera stats: cannot read {path}: {e.strerror}", file=sys.stderr)
            return 2
        records += got
        skipped += bad
    records = [r for r in records if matches(r, args.match)]
    if skipped:
        print(f"tessera stats: skipped {skipped} line(s) that are not statistics records",
              file=sys.stderr)
    if not records:
        print("tessera stats: no statistics records found (run with TESSERA_STATS_FILE=path)",
              file=sys.stderr)
        return 1
    if args.json:
        for rec in records:
            print(json.dumps({"file": rec.get("file"),
                              "advice": [a.as_dict() for a in advise(rec)]}))
    else:
        print(table(records))
        decisions = auto_text(records)
        if decisions:
            print()
            print("strategy=auto decisions (docs/auto.md):")
            print(decisions)
        if not args.no_advice:
            text, count = advice_text(records)
            print()
            print(text if count else "no pattern flagged: nothing to tune from these figures")
    if args.png:

        try:
            draw(records, args.png)
        except ImportError:
            print("tessera stats: --png needs matplotlib (make venv)", file=sys.stderr)
            return 2
        except OSError as e:  # the checks above passed, the write did not (disk full)
            print(f"tessera stats: cannot write {args.png}: {e.strerror or e}", file=sys.stderr)
            return 2
        if not args.json:
            print(f"chart: {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
