"""Text transformations that make a WRF v4 source tree take io_form 8 as Tessera.

Every function takes the text of one WRF file and returns the new text; none
reads or writes files (tessera.wrf_install does). Each block or line they add
carries MARK, so that a second run finds its own work and adds nothing, and so
that counting MARK tells what a run added.

WRF's I/O layer dispatches on the package number with one `#ifdef PKG` ...
`#endif` block per package and per API routine (frame/module_io.F,
frame/md_calls.m4). Tessera's package (ext_tsr_*, libtessera_wrfio) is
parallel with the argument lists of PnetCDF's ext_pnc_*, so its blocks are
copies of the PnetCDF ones: every compute rank calls it with its own patch,
instead of the serial packages' gather to rank 0. The quilt servers only
know serial packages (one server writes the assembled field), so there the
copies are of the NetCDF blocks, with MPI_COMM_SELF for the communicator.

Comments added to Fortran sources name no preprocessor symbol and hold no
apostrophe: cpp would rewrite the one, and WRF's build strips comment lines
with the other before cpp sees them (arch/postamble, rule .F.o).
"""
from __future__ import annotations

import re

MARK = "tessera-wrf-install"
#: The package number Tessera takes: WRF's placeholder io_yyy.
IO_FORM = 8

_IF = re.compile(r"^[\s`]*#\s*if(def|ndef)?\b")   # m4 quotes: `#  ifdef
_ENDIF = re.compile(r"^[\s`]*#\s*endif\b")
_REGISTRY_YYY = re.compile(r"^package\s+io_yyy\s+io_form_restart\s*==\s*8\b.*$", re.M)
_REGISTRY_TSR = re.compile(r"^package\s+io_tessera\s+io_form_restart\s*==\s*8\b", re.M)
_REGISTRY_8 = re.compile(r"^package\s+(\S+)\s+io_form_restart\s*==\s*8\b", re.M)


class PatchError(ValueError):
    """The text does not have the shape a transformation expects."""


def marks(text: str) -> int:
    """How many inserted blocks (or lines) the text carries."""
    return text.count(MARK)


def io_form_8_package(registry_text: str) -> str | None:
    """The name of the Registry package that holds io_form 8, or None."""
    m = _REGISTRY_8.search(registry_text)
    return m.group(1) if m else None


# --------------------------------------------------------------------- Registry
def registry(text: str) -> str:
    """Give the io_form 8 placeholder to Tessera: `package io_yyy
    io_form_restart==8` becomes `package io_tessera ...`, from which WRF's
    registry generates the parameter IO_TESSERA = 8. IO_YYY is only used
    under `#ifdef YYY`, which no build defines, so nothing misses it."""
    if _REGISTRY_TSR.search(text):
        return text
    if not _REGISTRY_YYY.search(text):
        raise PatchError("no `package io_yyy io_form_restart==8` placeholder")
    line = "package   io_tessera  io_form_restart==8                     -             -"
    note = f"# {MARK}: io_form 8 is Tessera (this was the placeholder io_yyy)"
    return _REGISTRY_YYY.sub(lambda m: f"{note}\n{line}", text, count=1)


# ------------------------------------------------------------ #ifdef blocks
def _line_end(lines: list[str]) -> str:
    """The file's newline convention (WRF's are Unix; kept if not)."""
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
    return "\n"


def _matching_endif(lines: list[str], start: int) -> int:
    """Index of the #endif closing the #if* at lines[start]."""
    depth = 0
    for i in range(start, len(lines)):
        if _IF.match(lines[i]):
            depth += 1
        elif _ENDIF.match(lines[i]):
            depth -= 1
            if depth == 0:
                return i
    raise PatchError(f"the #ifdef at line {start + 1} has no #endif")


def _copy_ifdef_blocks(text: str, symbol: str, guard: str, edit, lo: int = 0,
                       hi: int | None = None, note: str = "") -> str:
    """After every `#ifdef SYMBOL` ... `#endif` block between lines lo and hi,
    insert a copy guarded by `guard`, its lines passed through edit (which
    returns None to drop a line), unless the copy is there already."""
    lines = text.splitlines(keepends=True)
    nl = _line_end(lines)
    hi = len(lines) if hi is None else hi
    head = re.compile(rf"^\s*#\s*ifdef\s+{re.escape(symbol)}\s*$")
    out, i = lines[:lo], lo
    while i < hi:
        if not head.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        end = _matching_endif(lines, i)
        out.extend(lines[i:end + 1])
        after = lines[end + 1:end + 3]
        done = len(after) == 2 and after[0].strip() == guard and MARK in after[1]
        if not done:
            body = [edit(x.rstrip("\r\n")) for x in lines[i + 1:end]]
            out.append(guard + nl)
            out.append(f"! {MARK}: {note}" + nl)
            out.extend(x + nl for x in body if x is not None)
            out.append("#endif" + nl)
        i = end + 1
    out.extend(lines[hi:])
    return "".join(out)


def _pnetcdf_to_tessera(line: str):
    if line.lstrip().startswith("!"):
        return None
    line = line.replace("IO_PNETCDF", "IO_TESSERA").replace("ext_pnc_", "ext_tsr_")
    # ioinit/ioexit: ierr(11) is PnetCDF's slot of ierr(100); 6 was io_yyy's.
    line = re.sub(r"ierr\(\s*11\s*\)", "ierr( 6)", line)
    return re.sub(r"\bPNETCDF\b", "TESSERA", line)   # message texts


def copy_pnetcdf_blocks(text: str) -> str:
    """frame/module_io.F, frame/md_calls.m4 (and arch/md_calls.inc, its copy
    for systems without m4): a TESSERA copy after every PNETCDF block."""
    if not re.search(r"^\s*#\s*ifdef\s+PNETCDF\s*$", text, re.M):
        raise PatchError("no `#ifdef PNETCDF` block to copy")
    return _copy_ifdef_blocks(text, "PNETCDF", "#ifdef TESSERA", _pnetcdf_to_tessera,
                              note="io_form 8, a copy of the parallel package block above")


# ----------------------------------------------------------- share/, main/
_OR_TERM = re.compile(
    r"^(?P<ind>\s*)(?P<open>\(\s*)?(?P<expr>use_package\s*\(\s*io_form\s*\)\s*(?:==|\.EQ\.)\s*)"
    r"IO_PNETCDF(?P<close>\s*\))?", re.I)
_ELSE_IF = re.compile(r"^(\s*)ELSE\s*IF\s*\(\s*use_package\s*\(\s*io_form\s*\)\s*"
                      r"(?:\.EQ\.|==)\s*IO_PNETCDF\s*\)\s*THEN\s*$", re.I)
_CASE = re.compile(r"^(\s*CASE\s*\()([^)]*\bIO_PNETCDF\b[^)]*)\)(\s*)$", re.I)


def or_lists(text: str) -> str:
    """`use_package(io_form) == IO_PNETCDF` in a list of .OR.ed tests (the
    packages that get the training pass, or NetCDF-style metadata): add the
    same test for IO_TESSERA on the line before."""
    lines = text.splitlines(keepends=True)
    nl = _line_end(lines)
    out = []
    for k, line in enumerate(lines):
        m = _OR_TERM.match(line)
        in_list = m and (".OR." in line.upper() or (k and lines[k - 1].rstrip().endswith("&")))
        if in_list and not (out and "IO_TESSERA" in out[-1] and MARK in out[-1]):
            term = (m["open"] or "") + m["expr"] + "IO_TESSERA"
            if m["open"] and m["close"]:
                term += m["close"]
            out.append(f"{m['ind']}{term} .OR. &  ! {MARK}{nl}")
        out.append(line)
    return "".join(out)


def else_if_blocks(text: str) -> str:
    """`ELSE IF ( use_package(io_form) .EQ. IO_PNETCDF ) THEN` and its body
    (file name extensions): add the same branch for IO_TESSERA after it."""
    lines = text.splitlines(keepends=True)
    out, i = [], 0
    while i < len(lines):
        m = _ELSE_IF.match(lines[i].rstrip("\r\n"))
        if not m:
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*(ELSE|END\s*IF)\b", lines[end], re.I):
            end += 1
        out.extend(lines[i:end])
        if not (end < len(lines) and "IO_TESSERA" in lines[end] and MARK in lines[end]):
            nl = _line_end(lines)
            head = lines[i].rstrip("\r\n").replace("IO_PNETCDF", "IO_TESSERA")
            out.append(f"{head}  ! {MARK}{nl}")
            out.extend(lines[i + 1:end])
        i = end
    return "".join(out)


def case_lists(text: str) -> str:
    """`CASE ( IO_NETCDF , IO_PNETCDF , IO_PIO )`: add IO_TESSERA to the list."""
    lines = text.splitlines(keepends=True)
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        m = _CASE.match(body)
        if m and "IO_TESSERA" not in body:
            line = f"{m[1]}{m[2].rstrip()} , IO_TESSERA ){m[3]}  ! {MARK}" + line[len(body):]
        out.append(line)
    return "".join(out)


def io_form_tests(text: str) -> str:
    """share/output_wrf.F, share/wrf_ext_write_field.F, share/module_io_domain.F,
    main/real_em.F: wherever IO_PNETCDF is tested, IO_TESSERA too."""
    if "IO_PNETCDF" not in text:
        raise PatchError("no test of IO_PNETCDF")
    return case_lists(else_if_blocks(or_lists(text)))


# ------------------------------------------------------------ quilt servers
def _subroutine(lines: list[str], name: str) -> tuple[int, int]:
    """Line range [start, end] of SUBROUTINE name."""
    start = next((i for i, x in enumerate(lines)
                  if re.match(rf"^\s*SUBROUTINE\s+{name}\b", x, re.I)), None)
    if start is None:
        raise PatchError(f"no SUBROUTINE {name}")
    end = next((i for i in range(start, len(lines))
                if re.match(rf"^\s*END\s*SUBROUTINE\s+{name}\b", lines[i], re.I)), None)
    if end is None:
        raise PatchError(f"SUBROUTINE {name} has no END")
    return start, end


def _netcdf_to_tessera_serial(line: str):
    """The quilt server root writes alone: the communicators it holds are
    the compute ranks' handles (meaningless here) or 0, which is
    MPI_COMM_WORLD in Open MPI; Tessera's collectives need MPI_COMM_SELF."""
    if line.lstrip().startswith("!") or re.match(r"^\s*(if\s*\(.*\)\s*)?SysDepInfo\s*=", line, re.I):
        return None    # debug comments; NetCDF-only SysDepInfo settings
    line = re.sub(r"\bIO_NETCDF\b", "IO_TESSERA", line).replace("ext_ncd_", "ext_tsr_")
    return re.sub(r"\bComm\s*,\s*IOComm\b", "MPI_COMM_SELF, MPI_COMM_SELF", line)


def _copy_netcdf_in(text: str, names: list[str], guard: str) -> str:
    for name in names:
        lines = text.splitlines(keepends=True)
        lo, hi = _subroutine(lines, name)
        if not any(re.match(r"^\s*#\s*ifdef\s+NETCDF\s*$", x) for x in lines[lo:hi]):
            raise PatchError(f"no `#ifdef NETCDF` block in SUBROUTINE {name}")
        text = _copy_ifdef_blocks(text, "NETCDF", guard, _netcdf_to_tessera_serial, lo, hi,
                                  note="io_form 8 on the quilt server root, alone")
    return text


def quilt_servers(text: str) -> str:
    """frame/module_io_quilt_old.F (server side without PNETCDF_QUILT): sokay
    accepts io_form 8, and quilt() calls ext_tsr_* wherever it calls ext_ncd_*
    (ioinit and ioexit on every server rank; open, training writes, commit,
    close and sync on the server root only, with MPI_COMM_SELF)."""
    return _copy_netcdf_in(text, ["sokay", "quilt"], "#ifdef TESSERA")


def server_split(text: str) -> str:
    """external/RSL_LITE/module_dm.F: Tessera's own I/O servers must leave the
    job before WRF decomposes its domains over the ranks it holds. In
    split_communicator, right after MPI_Init and before WRF keeps its
    communicator, ext_tsr_server_split takes them when the hints ask for
    servers (they serve, then finalize and stop) and hands the model ranks'
    communicator back; without servers in the hints it does nothing."""
    lines = text.splitlines(keepends=True)
    nl = _line_end(lines)
    lo, hi = _subroutine(lines, "split_communicator")
    if any(MARK in lines[i] for i in range(lo, hi)):
        return text
    at = next((i for i in range(lo, hi)
               if re.match(r"^\s*CALL\s+wrf_set_dm_communicator\s*\(\s*mpi_comm_here\s*\)",
                           lines[i], re.I)), None)
    if at is None:
        raise PatchError("no `CALL wrf_set_dm_communicator( mpi_comm_here )` after MPI_Init "
                         "in SUBROUTINE split_communicator")
    indent = re.match(r"^(\s*)", lines[at]).group(1)
    lines[at:at] = ["#ifdef TESSERA" + nl,
                    f"! {MARK}: I/O servers of the hints leave the job before the domains are made" + nl,
                    f"{indent}CALL ext_tsr_server_split( mpi_comm_here )" + nl,
                    "#endif" + nl]
    return "".join(lines)


_QUILT_GUARD = "#if defined( TESSERA ) && defined( DM_PARALLEL ) && !defined( STUBMPI )"


def quilt_outbuf(text: str) -> str:
    """frame/module_quilt_outbuf_ops.F: write_outbuf, where the server root
    writes the assembled fields, calls ext_tsr_write_field for io_form 8 with
    MPI_COMM_SELF; mpif.h, which the module does not include, provides it."""
    lines = text.splitlines(keepends=True)
    nl = _line_end(lines)
    lo, hi = _subroutine(lines, "write_outbuf")
    decl = next((i for i in range(lo, hi)
                 if re.match(r"^\s*INTEGER\b.*::\s*Comm\s*,\s*IOComm\b", lines[i], re.I)), None)
    if decl is None:
        raise PatchError("no `INTEGER :: Comm, IOComm` in SUBROUTINE write_outbuf")
    if not (lines[decl + 1].strip() == _QUILT_GUARD and MARK in lines[decl + 2]):
        lines[decl + 1:decl + 1] = [
            _QUILT_GUARD + nl,
            f"! {MARK}: MPI_COMM_SELF for ext_tsr_write_field on the quilt server root" + nl,
            "    INCLUDE 'mpif.h'" + nl,
            "#endif" + nl]
    return _copy_netcdf_in("".join(lines), ["write_outbuf"], _QUILT_GUARD)


# ---------------------------------------------------------------- build flags
def _definition_end(lines: list[str], name: str) -> int:
    """Index of the last line of the make variable definition `NAME =`
    (backslash continuations included)."""
    start = next((i for i, x in enumerate(lines) if re.match(rf"^{name}\s*=", x)), None)
    if start is None:
        raise PatchError(f"no `{name} =` definition")
    end = start
    while end + 1 < len(lines) and lines[end].rstrip("\r\n").endswith("\\"):
        end += 1
    return end


def _managed(text: str, after: str, key: str, note: str, line: str) -> str:
    """Put `# MARK: key note` and line right after the definition of the make
    variable `after`, or replace the two lines where `# MARK: key` is already
    (a rerun with another Tessera updates its flags instead of adding more)."""
    lines = text.splitlines(keepends=True)
    nl = _line_end(lines)
    block = [f"# {MARK}: {key}{note}" + nl, line + nl]
    for i, x in enumerate(lines):
        if x.startswith(f"# {MARK}: {key}") and i + 1 < len(lines):
            # WRF's configure appends $(NETCDF4_DEP_LIB) to every `LIB...=` line.
            if re.sub(r"\s*\$\(NETCDF4_DEP_LIB\)\s*$", "", lines[i + 1].rstrip()) == line:
                return text
            lines[i:i + 2] = block
            return "".join(lines)
    end = _definition_end(lines, after)
    lines[end + 1:end + 1] = block
    return "".join(lines)


def archflags(text: str) -> str:
    """arch/postamble and configure.wrf: -DTESSERA reaches the cpp of every
    .F file (CPPFLAGS = $(ARCHFLAGS) ...). A separate `+=` line, because a
    comment cannot sit inside the backslash-continued ARCHFLAGS list."""
    return _managed(text, "ARCHFLAGS", "compile the io_form 8 (Tessera) branches", "",
                    "ARCHFLAGS       +=   -DTESSERA")


def lib_external(text: str, flags: str, source: str) -> str:
    """arch/postamble and configure.wrf: Tessera's libraries on the link line
    of wrf.exe, real.exe, ideal.exe... (LIB = ... $(LIB_EXTERNAL) ...). After
    LIB in the postamble, not in arch/preamble, so that the Cygwin stanzas of
    arch/configure.defaults, which set LIB_EXTERNAL again, keep it."""
    flags = " ".join(flags.split()).replace("$", "$$")
    return _managed(text, "LIB", "link the io_form 8 package", f", from {source}",
                    f"LIB_EXTERNAL    +=   {flags}")
