"""Reading TESSERA_STATS_FILE: the library's statistics records, one JSON
object a line (docs/stats-format.md). Below the `tessera stats` command, so
that the autotuner and `tessera model calibrate --stats` read records
without importing a command.
"""
from __future__ import annotations

import json


def read_records(path: str) -> tuple:
    """(records, skipped): the statistics records of a JSON lines file; lines
    that are not records (blank, cut short by a killed run) are skipped."""
    records, skipped = [], 0
    with open(path, errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if isinstance(rec, dict) and "tessera_stats" in rec:
                records.append(rec)
            else:
                skipped += 1
    return records, skipped
