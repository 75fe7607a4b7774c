"""The demo's staged rows (docs/staging.md): each strategy that gains from a
fast tier, run in place and staged, side by side. Two different figures are
kept apart: how long the model was blocked in Tessera, and how long after its
last step the files took to be final on the disk (the drain)."""
from __future__ import annotations

from ..textout import table_text

#: Strategies whose writers can take a node-local stage (one writer per file
#: or per piece): the demo stages these.
STAGED = ("serial", "aggregate", "split")

HEADERS = ["strategy", "written", "blocked s", "while running s", "final after s",
           "blocked staged / in place"]

LEGEND = """\
blocked: time the model ranks spent in Tessera calls, tsr_finalize included
(for a staged run: its wait for the drain); while running: the part of it
before the last step ended; final after: from the end of the last step until
every file was at its final path on disk (the bench's drain_s: tsr_finalize
returns only when every drain is done). One run each, no spread: docs/staging.md
has medians of repeated runs."""


def _s(rec: dict, key: str) -> str:
    v = rec.get(key)
    return "-" if v is None else f"{float(v):.3f}"


def _while_running(rec: dict) -> str:
    b, d = rec.get("output_blocked_s"), rec.get("drain_s")
    return "-" if b is None or d is None else f"{float(b) - float(d):.3f}"


def rows(records: list, staged: list) -> list:
    """One pair of rows per staged strategy that ran: in place, then staged."""
    in_place = {r["strategy"]: r for r in records if r.get("demo_status") == "ok"}
    out = []
    for s in staged:
        base = in_place.get(s["strategy"])
        if s.get("demo_status") != "ok" or base is None:
            continue
        ratio = "-"
        if base.get("output_blocked_s") and s.get("output_blocked_s") is not None:
            ratio = f"{float(s['output_blocked_s']) / float(base['output_blocked_s']):.2f}"
        for rec, where, r in ((base, "in place", ""), (s, "staged", ratio)):
            out.append([rec["strategy"], where, _s(rec, "output_blocked_s"),
                        _while_running(rec), _s(rec, "drain_s"), r])
    return out


def format_stage_table(records: list, staged: list, stage_dir: str) -> str:
    """The table, its failures named, and the legend; "" when nothing staged ran."""
    body = rows(records, staged)
    notes = [f"  {s['strategy']} staged: {s.get('demo_message') or s.get('demo_status')}"
             for s in staged if s.get("demo_status") != "ok"]
    if not body and not notes:
        return ""
    out = [f"Staged into {stage_dir}, final files on disk, next to the same run in place:"]
    if body:
        out.append(table_text(HEADERS, body, right=set(HEADERS[2:])))
    out += notes + ["", LEGEND]
    return "\n".join(out)
