"""docs/guide.md shows the programs of examples/ as they are.

Every ```c and ```fortran block of the guide must be a run of whole,
consecutive lines of one file under examples/ (the files are what the
mpi.example.* tests build, run and check), every example file must be shown or
named in the guide, and every Tessera name the guide uses (tsr_..., TSR_...)
must exist in include/tessera.h or the Fortran module. The guide's ```sh
blocks are run by test_doc_commands.py.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
EXAMPLES = ROOT / "examples"


def code_blocks(text: str) -> list:
    """(language, body) of every fenced block with a language of c or fortran."""
    return re.findall(r"^```(c|fortran)\n(.*?)^```", text, re.S | re.M)


def sources() -> dict:
    return {p.name: p.read_text() for p in sorted(EXAMPLES.iterdir())
            if p.suffix in (".c", ".f90", ".F90", ".h")}


def is_excerpt(body: str, text: str) -> bool:
    """body's lines appear, whole and consecutive, among text's lines."""
    want = body.rstrip("\n").split("\n")
    have = text.split("\n")
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def test_guide_has_code_blocks():
    langs = [lang for lang, _ in code_blocks(GUIDE.read_text())]
    assert "c" in langs and "fortran" in langs


def test_every_code_block_is_an_excerpt_of_an_example():
    files = sources()
    for n, (lang, body) in enumerate(code_blocks(GUIDE.read_text())):
        exts = (".c", ".h") if lang == "c" else (".f90", ".F90")
        found = [name for name, text in files.items()
                 if name.endswith(exts) and is_excerpt(body, text)]
        assert found, (f"docs/guide.md ```{lang} block {n} is not a verbatim excerpt of a "
                       f"file under examples/:\n{body}")


def test_every_example_is_in_the_guide():
    guide = GUIDE.read_text()
    for name in sources():
        assert f"examples/{name}" in guide, f"docs/guide.md does not mention examples/{name}"


def test_every_api_name_exists():
    api = (ROOT / "include" / "tessera.h").read_text() + (ROOT / "fortran" / "tessera.F90").read_text()
    declared = set(re.findall(r"\b(tsr_\w+|TSR_\w+)\b", api, re.I))
    declared = {n.lower() for n in declared}
    used = set(re.findall(r"\b(tsr_[a-z0-9_]+|TSR_[A-Z0-9_]+)\b", GUIDE.read_text()))
    missing = sorted(n for n in used if n.lower() not in declared)
    assert not missing, f"docs/guide.md names what the API does not have: {missing}"
