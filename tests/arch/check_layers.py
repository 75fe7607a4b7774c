#!/usr/bin/env python3
"""The layer rule of src/ (docs/architecture.md, "Layers"), checked.

Usage: check_layers.py SRC_DIR

Every C file of src/ belongs to one layer; the layers, top to bottom, are
LAYERS below. A file may include headers and call functions of its own layer
and of the layers below it, never above. Two checks:

- includes: each `#include "dir/name.h"` of a .c or .h file is resolved to
  src/dir/name.h; the header's layer is its folder's.
- calls: the approach of ../shared/tools/circles.py: a .c file calls another
  when its text (comments removed) names a non-static function that only the
  other defines (Universal Ctags lists the definitions).

Exits 0 when both hold, 1 with one line per violation otherwise, 77 (CTest:
skipped) when ctags is not installed. Unlike circles.py, the call check
ignores string literals. EXCEPTIONS and CALL_EXCEPTIONS list the allowed
upward includes and calls, each with its reason.
"""
import os
import re
import shutil
import subprocess
import sys

# Top to bottom; a layer is a folder of src/. The handles (tsr_ctx, tsr_file,
# tsr_decomp: handle/handles.h) sit between the servers and the backends: the
# API makes them, strategies and servers use them, and the services of core/
# see none of them (they include core/base.h).
LAYERS = ["api", "strategy", "server", "handle", "backend", "tier", "core", "plan"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# (calling file or folder/, called function): why the upward call is allowed.
CALL_EXCEPTIONS = {
    ("strategy/", "tsr__file_created"):
        "a strategy reports the file it created (sink, writers) to the statistics and "
        "TESSERA_HINTS_DISPLAY, which print the hints through the parser's key table",
}
# (including file, included header): why the upward include is allowed.
EXCEPTIONS = {}


def layer_of(rel):
    """Layer of a path relative to src/ ("api/file.c"), or None outside the layers."""
    folder = rel.partition("/")[0]
    return folder if folder in RANK else None


def sources(src):
    out = []
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(root, n), src))
    return sorted(out)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def strip_strings(text):
    """Without string and character literals: a message that names an API call
    ("needs tsr_def_var_decomp") is no call."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', '""', text)


def check_includes(src, files):
    bad = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for rel in files:
        mine = layer_of(rel)
        if mine is None:
            continue
        text = strip_comments(open(os.path.join(src, rel), errors="replace").read())
        for h in inc.findall(text):
            if not os.path.exists(os.path.join(src, h)):
                continue  # tessera.h, generated headers, system-like headers: no layer
            theirs = layer_of(h)
            if theirs is None or RANK[theirs] >= RANK[mine]:
                continue
            if (rel, h) in EXCEPTIONS:
                continue
            bad.append(f"include: src/{rel} ({mine}) includes {h} ({theirs}), a higher layer")
    return bad


def allowed(rel, name):
    return any((rel == who or (who.endswith("/") and rel.startswith(who))) and name == what
               for who, what in CALL_EXCEPTIONS)


def check_calls(src, files):
    cfiles = [f for f in files if f.endswith(".c")]
    out = subprocess.run(
        ["ctags", "-x", "--c-kinds=f", "--_xformat=%N %F %{C.properties}"] + cfiles,
        capture_output=True, text=True, cwd=src, check=True).stdout
    defs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or (len(parts) > 2 and "static" in parts[2]):
            continue
        defs.setdefault(parts[0], set()).add(parts[1])
    owner = {n: next(iter(p)) for n, p in defs.items() if len(p) == 1}
    word = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
    bad = []
    for rel in cfiles:
        mine = layer_of(rel)
        if mine is None:
            continue
        text = strip_strings(strip_comments(open(os.path.join(src, rel), errors="replace").read()))
        up = {}
        for w in set(word.findall(text)):
            g = owner.get(w)
            theirs = layer_of(g) if g and g != rel else None
            if theirs is not None and RANK[theirs] < RANK[mine] and not allowed(rel, w):
                up.setdefault(g, []).append(w)
        for g in sorted(up):
            bad.append(f"call: src/{rel} ({mine}) calls src/{g} ({layer_of(g)}), a higher layer: "
                       + " ".join(sorted(up[g])))
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    src = sys.argv[1]
    if not shutil.which("ctags"):
        print("SKIP: ctags (Universal Ctags) is not installed; the call check needs it")
        return 77
    files = sources(src)
    unknown = sorted({f.split("/")[0] for f in files if layer_of(f) is None})
    bad = check_includes(src, files) + check_calls(src, files)
    for line in bad:
        print(line)
    if unknown:
        print("folders of src/ in no layer (add them to LAYERS):", " ".join(unknown))
    print(f"{len(bad)} layer violation(s) in {len(files)} files")
    return 1 if bad or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
