"""No strategy name compared outside the strategies' rows and their registry:
the Python tools ask a strategy's row (tessera/strategy/<name>.py, listed
in tessera/strategies.py) for what differs between strategies, so adding a
strategy is its file, its import and one entry in the registry
(test_strategy_row_added.py shows it; docs/architecture.md, "python/").

Counted with the stdlib `ast`: a comparison (==, !=, in, not in, is) one
of whose sides is a strategy's name as a string literal, or a tuple, list
or set of literals holding one, and a `match` case on such a literal. The
names are the registry's own (strategies.NAMES), so a new strategy is
checked as soon as it has its row. Text that merely mentions a strategy
(help, advice, a hint string) is no comparison. Run on its own it prints
each comparison and their count last:

    python3 tests/python/test_strategy_names.py python/tessera
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "python" / "tessera"
sys.path.insert(0, str(PACKAGE_DIR.parent))

from tessera.strategies import NAMES  # noqa: E402

#: Where names may be compared: the rows' folder and the registry.
ALLOWED = ("strategy", "strategies.py")


def named(node, names) -> bool:
    """Whether node is one of names as a literal, or a collection of literals holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(named(e, names) for e in node.elts)
    return False


def comparisons(path: Path, names=NAMES) -> list[tuple[int, str]]:
    """(line, source text) of each strategy-name comparison in one file."""
    text = path.read_text()
    found = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Compare) and any(
                named(n, names) for n in (node.left, *node.comparators)):
            found.append((node.lineno, ast.get_source_segment(text, node)))
        elif isinstance(node, ast.match_case) and any(
                isinstance(p, ast.MatchValue) and named(p.value, names)
                for p in ast.walk(node.pattern)):
            found.append((node.pattern.lineno, ast.get_source_segment(text, node.pattern)))
    return sorted(found)


def outside_rows(package_dir: Path, names=NAMES) -> list[str]:
    """'file:line: comparison' for every comparison outside ALLOWED."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        if path.relative_to(package_dir).parts[0] in ALLOWED:
            continue
        rel = path.relative_to(package_dir.parent)
        out += [f"{rel}:{line}: {src}" for line, src in comparisons(path, names)]
    return out


def test_no_strategy_name_compared_outside_the_rows():
    found = outside_rows(PACKAGE_DIR)
    assert not found, "strategy names compared outside tessera/strategy/ and " + \
        "tessera/strategies.py (ask the strategy's row instead):\n" + "\n".join(found)


def test_counter_sees_each_form(tmp_path):
    # The counter must catch every form a name comparison takes, and only those.
    pkg = tmp_path / "tessera"
    (pkg / "strategy").mkdir(parents=True)
    (pkg / "model").mkdir()
    (pkg / "model" / "a.py").write_text(
        'def f(s, rec):\n'
        '    if s.name == "serial":\n'
        '        return 1\n'
        '    if rec.get("strategy") != "direct" and s in ("x", "split"):\n'
        '        return 2\n'
        '    match s:\n'
        '        case "aggregate":\n'
        '            return 3\n'
        '    help = "strategy=serial"\n'
        '    return {"servers": 4}.get(s, help)\n')
    (pkg / "strategies.py").write_text('def row(n):\n    return n == "serial"\n')
    (pkg / "strategy" / "serial.py").write_text('X = "a" if 1 else "b"\nY = "serial" == "x"\n')
    found = outside_rows(pkg, ("serial", "direct", "aggregate", "split", "servers"))
    assert [f.split(": ", 1)[0] for f in found] == [
        "tessera/model/a.py:2", "tessera/model/a.py:4", "tessera/model/a.py:4",
        "tessera/model/a.py:7"], found


if __name__ == "__main__":
    for line in (found := outside_rows(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DIR)):
        print(line)
    print(len(found))
