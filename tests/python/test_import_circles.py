"""No import circles in the Python tools: every module of python/tessera
imports only modules below it, so none needs a function-level import to
dodge a circle (docs/architecture.md, "python/").

Counted with the stdlib `ast`, as ../shared/tools/circles.py counts the C
files' call circles: module A imports B when A's text holds `import B` or
`from B import ...` anywhere (module level AND inside functions), relative
imports resolved against A's package; importing a.b.c also imports the
packages a and a.b, so a package whose __init__ imports one of its own
modules makes a circle too. A circle is a strongly connected set of 2 or
more modules. Run on its own it prints the circles and their count last:

    python3 tests/python/test_import_circles.py python/tessera
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "python" / "tessera"


def modules(package_dir: Path) -> dict[str, Path]:
    """Dotted name -> file of every module and package under package_dir."""
    top = package_dir.name
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [top, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The known modules that module `name` imports, with their parent packages."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            targets.add(where)
            # `from pkg import mod` imports the module pkg.mod.
            targets.update(f"{where}.{alias.name}" for alias in node.names)
    edges = set()
    for t in targets:
        # Importing a.b.c runs a/__init__ and a/b/__init__ first.
        parts = t.split(".")
        for i in range(1, len(parts) + 1):
            dotted = ".".join(parts[:i])
            if dotted in known and dotted != name:
                edges.add(dotted)
    return edges


def circles(package_dir: Path) -> list[list[str]]:
    """Strongly connected sets of 2 or more modules (Tarjan's algorithm)."""
    known = modules(package_dir)
    edges = {n: imports(n, p, known) for n, p in known.items()}
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(known):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    found = circles(PACKAGE_DIR)
    assert not found, "import circles (move the shared piece down into a lower module): " + \
        "; ".join(" ".join(c) for c in found)


def test_counter_sees_function_level_imports(tmp_path):
    # The counter must catch the circle that a function-level import hides.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import a\n")
    assert circles(pkg) == [["pkg.a", "pkg.sub.b"]]


if __name__ == "__main__":
    for c in (found := circles(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DIR)):
        print("circle:", " ".join(c))
    print(len(found))
