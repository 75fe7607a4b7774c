"""Make io_form 8 mean Tessera in a WRF v4 source tree.

    tessera wrf install WRF_DIR [--tessera-config PATH] [--dry-run]

It gives WRF's placeholder package io_yyy (io_form 8) to Tessera's WRF I/O
package (ext_tsr_*, libtessera_wrfio), adds Tessera's branches beside
PnetCDF's in WRF's I/O layer and beside NetCDF's in the quilt servers, and
puts -DTESSERA and Tessera's libraries into the build (arch/postamble, and
configure.wrf when the tree is configured). The text changes are those of
tessera.wrf_patch; this module finds the files, checks the tree, runs the
changes and reports them. Running it again changes nothing (docs/wrf.md).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import wrf_patch as wp

PROG = "tessera wrf install"


class Refusal(Exception):
    """One sentence for the user; exit status in .code (2: bad input)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class Change:
    path: str                     # relative to WRF_DIR
    old: str
    new: str
    what: str                     # for the report


# ------------------------------------------------------------------ files
def read(path: Path) -> str:
    # latin-1 maps every byte to one character, so whatever bytes a WRF
    # file holds are written back unchanged; newline="" keeps line endings.
    try:
        with open(path, encoding="latin-1", newline="") as f:
            return f.read()
    except OSError as e:
        raise Refusal(f"cannot read {path}: {e.strerror or e}") from None


def write(path: Path, text: str) -> None:
    """Replace path atomically, keeping its permissions: an interrupted run
    leaves each file either as it was or as it should be."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="latin-1", newline="") as f:
                f.write(text)
            shutil.copymode(path, tmp)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        raise Refusal(f"cannot write {path}: {e.strerror or e}", code=1) from None


# ------------------------------------------------------------ tessera-config
def default_config() -> Path | None:
    """tessera-config of the prefix this command is installed in
    (PREFIX/lib/tessera/python/tessera/), else the one on PATH."""
    pkg = Path(__file__).resolve().parent
    if pkg.parent.name == "python" and pkg.parent.parent.name == "tessera":
        candidate = pkg.parents[3] / "bin" / "tessera-config"
        if candidate.is_file():
            return candidate
    found = shutil.which("tessera-config")
    return Path(found) if found else None


def run_config(config: Path, option: str) -> str | None:
    try:
        p = subprocess.run([str(config), option], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def link_flags(config: Path) -> tuple[str, list[str]]:
    """The flags that link WRF with the package, and warnings."""
    if not config.is_file() or not os.access(config, os.X_OK):
        raise Refusal(f"{config} is not an executable tessera-config "
                      f"(it is PREFIX/bin/tessera-config of a `cmake --install`ed Tessera)")
    notes = []
    flags = run_config(config, "--wrf-libs")
    if flags is None:
        # A Tessera older than --wrf-libs: the package goes before the Fortran module it calls.
        flibs = run_config(config, "--flibs")
        if flibs is None or "-ltessera_fortran" not in flibs:
            raise Refusal(f"{config} answers neither --wrf-libs nor --flibs: this Tessera was "
                          f"built without its Fortran module, which the WRF package needs")
        flags = flibs.replace("-ltessera_fortran", "-ltessera_wrfio -ltessera_fortran", 1)
        notes.append(f"{config} has no --wrf-libs (an older Tessera): link flags made from --flibs")
    libdir = run_config(config, "--libdir")
    if libdir and not list(Path(libdir).glob("libtessera_wrfio.*")):
        notes.append(f"there is no libtessera_wrfio in {libdir}: build and install Tessera with "
                     f"its WRF package, or linking wrf.exe will fail")
    return flags, notes


# -------------------------------------------------------------------- the tree
def check_tree(wrf: Path) -> str:
    """Refuses what is not a WRF v4 source tree whose io_form 8 is free or
    Tessera's; returns the version found ('' when unknown)."""
    if not wrf.is_dir():
        raise Refusal(f"{wrf} is not a directory")
    for rel in ("Registry/Registry.EM_COMMON", "frame/module_io.F"):
        if not (wrf / rel).is_file():
            raise Refusal(f"{wrf} is not a WRF v4 source tree: it has no {rel}")
    version = ""
    decl = wrf / "inc" / "version_decl"
    if decl.is_file():
        m = re.search(r"release_version\s*=\s*'V?([0-9][0-9.]*)", read(decl))
        version = m.group(1) if m else ""
        if version and not version.startswith("4."):
            raise Refusal(f"{wrf} is WRF {version}, not WRF v4, the version whose I/O layer "
                          f"{PROG} knows")
    owner = wp.io_form_8_package(read(wrf / "Registry/Registry.EM_COMMON"))
    if owner not in ("io_yyy", "io_tessera"):
        held = f"is held by package {owner}" if owner else "has no package line"
        raise Refusal(f"io_form 8 in {wrf}/Registry/Registry.EM_COMMON {held}, not by the "
                      f"placeholder io_yyy that {PROG} gives to Tessera")
    return version


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def _blocks(n: int, what: str) -> str:
    return f"{n} {what} block{'s' if n != 1 else ''}"


def _registry_what(old, n):
    return "package io_yyy (io_form 8) is now io_tessera, so the registry defines IO_TESSERA = 8"


def _copies_what(kind, n):
    return f"{_blocks(n, kind)} copied for TESSERA"


@dataclass
class Step:
    path: str
    required: bool
    transform: Callable[[str], str]
    what: Callable[[str, int], str]        # (old text, blocks added) -> report


def _flags_what(old, n):
    added = []
    if "-DTESSERA" not in old:
        added.append("-DTESSERA added to ARCHFLAGS")
    if "-ltessera_wrfio" not in old:
        added.append("Tessera's link flags added to LIB_EXTERNAL")
    return "; ".join(added) or "Tessera's link flags in LIB_EXTERNAL updated"


def steps(wrf: Path, flags: str, config: Path) -> list[Step]:
    def build(text):
        return wp.lib_external(wp.archflags(text), flags, str(config))

    out = []
    for reg in sorted((wrf / "Registry").glob("Registry.*")):
        text = read(reg)
        if wp.io_form_8_package(text) in ("io_yyy", "io_tessera"):
            out.append(Step(f"Registry/{reg.name}", True, wp.registry, _registry_what))
    out += [
        Step("frame/module_io.F", True, wp.copy_pnetcdf_blocks,
             lambda old, n: _copies_what("PNETCDF", n)),
        Step("frame/md_calls.m4", True, wp.copy_pnetcdf_blocks,
             lambda old, n: _copies_what("PNETCDF", n)),
        # The m4 output WRF uses where m4 does not work.
        Step("arch/md_calls.inc", False, wp.copy_pnetcdf_blocks,
             lambda old, n: _copies_what("PNETCDF", n) + " (m4-less copy of md_calls)"),
    ]
    for rel in ("share/output_wrf.F", "share/wrf_ext_write_field.F",
                "share/module_io_domain.F", "main/real_em.F"):
        out.append(Step(rel, True, wp.io_form_tests,
                        lambda old, n: f"IO_TESSERA added beside IO_PNETCDF in {n} "
                                         f"place{'s' if n != 1 else ''}"))
    out += [
        Step("frame/module_io_quilt_old.F", True, wp.quilt_servers,
             lambda old, n: f"{_blocks(n, 'NETCDF')} of the quilt server (sokay, quilt) copied "
                              f"for TESSERA; the server root calls ext_tsr_* with MPI_COMM_SELF"),
        Step("frame/module_quilt_outbuf_ops.F", True, wp.quilt_outbuf,
             lambda old, n: "write_outbuf: NETCDF block copied for TESSERA with MPI_COMM_SELF "
                              "(and mpif.h included)"),
        Step("external/RSL_LITE/module_dm.F", True, wp.server_split,
             lambda old, n: "split_communicator: Tessera's I/O servers (TESSERA_HINTS "
                              "strategy=servers) leave the job after MPI_Init, before the "
                              "domains are decomposed"),
        # The build's copy of it, made once by the first compile.
        Step("frame/module_dm.F", False, wp.server_split,
             lambda old, n: "the same call in the build's copy of RSL_LITE/module_dm.F"),
        Step("arch/postamble", True, build, _flags_what),
        Step("configure.wrf", False, build, _flags_what),
    ]
    return out


def plan(wrf: Path, flags: str, config: Path) -> tuple[list[Change], list[str]]:
    """Every change, computed before any file is written (a tree this command
    does not know is refused whole, not half-patched); and the files already
    done."""
    changes, done = [], []
    for step in steps(wrf, flags, config):
        path = wrf / step.path
        if not path.exists():
            if step.required:
                raise Refusal(f"{wrf} is not a WRF v4 source tree: it has no {step.path}")
            continue
        old = read(path)
        try:
            new = step.transform(old)
        except wp.PatchError as e:
            raise Refusal(f"{step.path} has {e} where WRF v4 has one: {PROG} does not know "
                          f"this version of the file") from None
        if new == old:
            done.append(step.path)
        else:
            added = wp.marks(new) - wp.marks(old)
            changes.append(Change(step.path, old, new, step.what(old, added)))
    return changes, done


# -------------------------------------------------------------------- command
def parse(argv):
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        epilog="Then: ./configure (a dmpar option) if configure.wrf is absent, ./compile, and "
               "io_form_history = 8 in namelist.input. See docs/wrf.md.")
    p.add_argument("wrf_dir", metavar="WRF_DIR", help="the WRF source tree (top folder)")
    p.add_argument("--tessera-config", metavar="PATH", type=Path,
                   help="PREFIX/bin/tessera-config of the installed Tessera (default: the one "
                        "beside this command when installed in a prefix, else on PATH)")
    p.add_argument("-n", "--dry-run", action="store_true", help="list the changes, write nothing")
    return p.parse_args(argv)


def run(args) -> int:
    wrf = Path(args.wrf_dir)
    version = check_tree(wrf)
    config = args.tessera_config or default_config()
    if config is None:
        raise Refusal("no tessera-config found: pass --tessera-config PREFIX/bin/tessera-config")
    flags, notes = link_flags(config)
    changes, done = plan(wrf, flags, config)
    configured = wrf / "configure.wrf"
    if configured.is_file() and "-DDM_PARALLEL" not in read(configured):
        notes.append("configure.wrf is not a dmpar build: Tessera needs MPI, so run ./configure "
                     "again with a dmpar option")

    print(f"{PROG}: {wrf}{f' (WRF {version})' if version else ''}, Tessera from {config}")
    for c in changes:
        if not args.dry_run:
            write(wrf / c.path, c.new)
        print(f"  {'would change' if args.dry_run else 'changed'} {c.path}: {c.what}")
    for rel in done:
        print(f"  unchanged {rel}: already done")
    sys.stdout.flush()   # the warnings come after the list, also in a log of both
    for note in notes:
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    if not changes:
        print(f"nothing to change: io_form 8 is already Tessera in {wrf}")
        return 0
    if args.dry_run:
        print(f"{_files(len(changes))} would change (dry run: nothing written)")
        return 0
    print(f"{_files(len(changes))} changed. Next, in {wrf}: "
          + ("./compile (after ./clean if it was compiled before)" if configured.is_file()
             else "./configure (a dmpar option), then ./compile")
          + "; then io_form_history = 8 in namelist.input")
    return 0


def main(argv=None) -> int:
    args = parse(argv)
    try:
        return run(args)
    except Refusal as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
