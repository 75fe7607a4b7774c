"""tessera-bench results: load `--json` records and the figures the table and
the chart show. One record is the bench's JSON object (docs: Metrics), plus,
when the demo ran it, `demo_status` ("ok", "failed", "not built") and
`demo_message`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

#: The metrics every bench record carries (the design guide's definitions).
METRICS = ("wall_s", "compute_s", "output_blocked_s", "output_total_s", "drain_s",
           "io_fraction", "bytes", "effective_bw", "write_bw")


class ResultsError(Exception):
    """A results file that cannot be read or does not hold bench records."""


@dataclass(frozen=True)
class Column:
    key: str        # record key, or a derived name (see value())
    title: str
    fmt: str        # format spec for numbers
    scale: float = 1.0
    suffix: str = ""


#: The comparison table, in the spirit of the WRF I/O studies.
COLUMNS = (
    Column("strategy", "strategy", "s"),
    Column("ranks", "ranks", "s"),
    Column("wall_s", "wall s", ".2f"),
    Column("compute_s", "compute s", ".2f"),
    Column("output_blocked_s", "blocked s", ".3f"),
    Column("output_total_s", "output s", ".3f"),
    Column("drain_s", "drain s", ".3f"),
    Column("io_fraction", "I/O share", ".1f", 100.0, " %"),
    Column("effective_bw", "MB/s", ".1f", 1e-6),
    Column("write_bw", "write MB/s", ".1f", 1e-6),
    Column("check", "check", "s"),
)


def status(rec: dict) -> str:
    return rec.get("demo_status", "ok")


def ranks_text(rec: dict) -> str:
    r = rec.get("ranks")
    if isinstance(r, dict):
        model, io = int(r.get("model", 0)), int(r.get("io", 0))
        return f"{model}+{io}" if io else str(model)
    return "" if r is None else str(r)


def value(rec: dict, col: Column) -> str:
    """The cell text of one column for one record."""
    if col.key == "ranks":
        return ranks_text(rec)
    if col.key == "check":
        if status(rec) != "ok":
            return status(rec).upper() if status(rec) == "failed" else status(rec)
        c = rec.get("check")
        return "-" if c is None else str(c)
    v = rec.get(col.key)
    if v is None:
        return "-"
    if isinstance(v, str) or col.fmt == "s":
        return str(v)
    return format(float(v) * col.scale, col.fmt) + col.suffix


def _records_from(obj, source: str) -> list[dict]:
    if isinstance(obj, dict) and isinstance(obj.get("runs"), list):
        obj = obj["runs"]
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise ResultsError(f"{source}: not a tessera-bench result (object, list or {{\"runs\": [...]}})")
    for r in obj:
        if "strategy" not in r:
            raise ResultsError(f"{source}: a record has no 'strategy'")
        if status(r) == "ok":
            missing = [m for m in METRICS if m not in r]
            if missing:
                raise ResultsError(f"{source}: record '{r['strategy']}' lacks {', '.join(missing)}")
    return obj


def load(paths) -> list[dict]:
    """Records from JSON files: one bench object, a list, or the demo's
    {"runs": [...]}; a directory contributes its *.json files in name order."""
    records: list[dict] = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            records += load(files)
            continue
        try:
            with open(p, encoding="utf-8") as fh:
                obj = json.load(fh)
        except OSError as e:
            raise ResultsError(f"{p}: {e.strerror}") from e
        except json.JSONDecodeError as e:
            raise ResultsError(f"{p}: not JSON ({e.msg}, line {e.lineno})") from e
        records += _records_from(obj, p)
    return records


def case_text(records: list[dict]) -> str:
    """One line describing the case the records share (first ran record)."""
    ran = [r for r in records if status(r) == "ok"]
    if not ran:
        return ""
    r = ran[0]
    parts = [f"{r.get('nx', '?')} x {r.get('ny', '?')} x {r.get('nz', '?')}",
             f"{r.get('steps', '?')} steps", f"{r.get('frames', '?')} history outputs"]
    if r.get("bytes") and r.get("frames"):
        parts.append(f"{float(r['bytes']) / 1e6:.1f} MB written")
    schema = r.get("schema")
    if schema and schema != "default":
        parts.append(f"schema {os.path.basename(str(schema))}")
    return ", ".join(parts)
