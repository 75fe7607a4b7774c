"""tessera wrf install: the text transformations of tessera.wrf_patch on small
snippets shaped like WRF v4's files, and the command on a miniature WRF tree
made of them (no WRF tree needed): idempotency, the dry run, the refusals."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

from tessera import wrf_install, wrf_patch as wp  # noqa: E402

# ------------------------------------------------------------------ snippets
REGISTRY = """\
package   io_esmf     io_form_restart==7                     -             -
package   io_yyy      io_form_restart==8                     -             -
package   io_zzz      io_form_restart==9                     -             -
"""

MODULE_IO = """\
SUBROUTINE wrf_ioinit( Status )
  INTEGER :: ierr(100)
#ifdef YYY
  CALL ext_yyy_ioinit  ( SysDepInfo, ierr( 6) )
#endif
#ifdef PNETCDF
  CALL ext_pnc_ioinit  ( SysDepInfo, ierr(11) )
#endif
#ifdef PIO
  CALL ext_pio_ioinit  ( SysDepInfo, ierr(12) )
#endif
END SUBROUTINE wrf_ioinit
SUBROUTINE some_dispatch
    SELECT CASE ( use_package(io_form) )
#ifdef PNETCDF
      CASE ( IO_PNETCDF )
#  ifdef DOUBLE_PRECISION
        CALL ext_pnc_put_double ( Hndl, Status )
#  else
        CALL ext_pnc_put_real ( Hndl, Status )
#  endif
#endif
#ifdef PNETCDF
      CASE ( IO_PNETCDF  )
        CALL wrf_error_fatal( 'multiple output files not supported for PNETCDF' )
#endif
#ifdef PNETCDF_QUILT
      CASE ( IO_PNETCDF  )
        CALL quilt_only_thing ( Hndl )
#endif
    END SELECT
END SUBROUTINE some_dispatch
"""

MD_CALLS_M4 = """\
#ifdef PNETCDF
      CASE ( IO_PNETCDF   )
ifelse($3,real,
`#  ifdef DOUBLE_PRECISION
        CALL ext_pnc_$1_$2_double$4 ( Hndl, Element, Data, Status )
#  else
        CALL ext_pnc_$1_$2_real$4 ( Hndl, Element, Data, Status )
#  endif',
`        CALL ext_pnc_$1_$2_$3$4 ( Hndl, Element, Data, Status )' )
#endif
#ifdef ADIOS2
      CASE ( IO_ADIOS2   )
#endif
"""

OUTPUT_WRF = """\
    IF ( ( use_package( io_form ) == IO_NETCDF ) .OR. &
         ( use_package( io_form ) == IO_ADIOS2 ) .OR. &
         ( use_package( io_form ) == IO_PNETCDF ) ) THEN
      CALL wrf_put_dom_ti_integer ( fid, 'SST_UPDATE', sst_update , 1 , ierr )
    ENDIF
"""

EXT_WRITE_FIELD = """\
    IF ( ( dryrun .AND. ( use_package(io_form) .EQ. IO_NETCDF .OR. &
                          use_package(io_form) .EQ. IO_PNETCDF ) ) .OR. &
                        ( use_package(io_form) .EQ. IO_PHDF5  )   ) THEN
      CALL wrf_put_var_ti_char( DataHandle, "description", Var, Desc, Status )
    ENDIF
"""

IO_DOMAIN = """\
  IF      ( use_package(io_form) .EQ. IO_INTIO ) THEN
     ext = '.int'
  ELSE IF ( use_package(io_form) .EQ. IO_PNETCDF ) THEN
    ext = '.nc '
  ELSE IF ( use_package(io_form) .EQ. IO_GRIB1 ) THEN
     ext = '.gb '
  ELSE
     CALL wrf_error_fatal ('improper io_form')
  END IF
"""

REAL_EM = """\
      SELECT CASE ( use_package(io_form_auxinput1) )
#if defined(NETCDF) || defined(PNETCDF)
      CASE ( IO_NETCDF , IO_PNETCDF , IO_PIO )
        CALL read_it ( grid )
#endif
      END SELECT
"""

QUILT = """\
    SUBROUTINE sokay ( stream, io_form )
    SELECT CASE (io_form)
#ifdef NETCDF
      CASE ( IO_NETCDF   )
         RETURN
#endif
      CASE DEFAULT
         CALL wrf_error_fatal(mess)
    END SELECT
    END SUBROUTINE sokay

    SUBROUTINE quilt
      INCLUDE 'mpif.h'
      SysDepInfo = " "
#ifdef NETCDF
      if ( config_flags%use_netcdf_classic ) SysDepInfo="use_netcdf_classic"
      CALL ext_ncd_ioinit( SysDepInfo, ierr )
      SysDepInfo = " "
#endif
                  SELECT CASE (use_package(io_form(DataHandle)))
#ifdef NETCDF
                    CASE ( IO_NETCDF   )
                      CALL ext_ncd_open_for_write_begin(FileName,Comm,IOComm,SysDepInfo,handle(DataHandle),Status)
!write(0,*)'ext_ncd_open_for_write_begin ',Trim(FileName)
#endif
#ifdef NETCDFPAR
                    CASE ( IO_NETCDFPAR   )
                      CALL ext_ncdpar_thing( Status )
#endif
                  END SELECT
    END SUBROUTINE quilt

    SUBROUTINE quilt_pnc
#ifdef NETCDF
      CALL ext_ncd_ioinit( SysDepInfo, ierr)
#endif
    END SUBROUTINE quilt_pnc
"""

OUTBUF = """\
  SUBROUTINE write_outbuf ( DataHandle , io_form_arg )
    USE module_state_description
    IMPLICIT NONE
    INTEGER               :: Comm, IOComm, DomainDesc ! dummy
    INTEGER               :: Status
    Comm = 0 ; IOComm = 0 ; DomainDesc = 0
      SELECT CASE ( io_form_arg )
#ifdef NETCDF
        CASE ( IO_NETCDF   )
          CALL ext_ncd_write_field ( DataHandle , VarName,                  &
                                 Comm, IOComm, DomainDesc ,                 &
                                 Status )
#endif
        CASE DEFAULT
      END SELECT
  END SUBROUTINE write_outbuf
"""

POSTAMBLE = """\
ARCHFLAGS       =    $(COREDEFS) -DIWORDSIZE=$(IWORDSIZE) \\
                      CONFIGURE_PNETCDF_FLAG \\
                      -DINTIO \\
\t\t      -DNMM_NEST=$(WRF_NMM_NEST)
CFLAGS          =    $(CFLAGS_LOCAL)
LIB             =    $(LIB_BUNDLED) $(LIB_EXTERNAL) $(LIB_LOCAL)
LDFLAGS         =    $(OMP) $(FCFLAGS)
"""

FLAGS = "-L/opt/tsr/lib -Wl,-rpath,/opt/tsr/lib -ltessera_wrfio -ltessera_fortran -ltessera"


def twice(fn, text):
    """Apply fn; a second application must change nothing."""
    once = fn(text)
    assert fn(once) == once
    return once


# ---------------------------------------------------------------- transforms
def test_registry_gives_io_form_8_to_tessera():
    out = twice(wp.registry, REGISTRY)
    assert "io_yyy" not in out.replace("placeholder io_yyy", "")
    assert "package   io_tessera  io_form_restart==8" in out
    assert wp.io_form_8_package(out) == "io_tessera" and wp.marks(out) == 1
    assert "io_zzz" in out and "io_esmf" in out
    with pytest.raises(wp.PatchError):
        wp.registry("package   io_zzz      io_form_restart==9   -   -\n")


def test_pnetcdf_blocks_get_a_tessera_copy():
    out = twice(wp.copy_pnetcdf_blocks, MODULE_IO)
    assert wp.marks(out) == 3           # two dispatch blocks and ioinit, not PNETCDF_QUILT
    assert "CALL ext_tsr_ioinit  ( SysDepInfo, ierr( 6) )" in out
    assert "ierr(11)" in out            # the original stays
    lines = out.splitlines()
    # each copy comes right after its original, nested #ifdef included
    i = lines.index("        CALL ext_pnc_put_real ( Hndl, Status )")
    assert lines[i + 1:i + 6] == ["#  endif", "#endif", "#ifdef TESSERA",
                                  f"! {wp.MARK}: io_form 8, a copy of the parallel package block above",
                                  "      CASE ( IO_TESSERA )"]
    assert "        CALL ext_tsr_put_double ( Hndl, Status )" in lines
    assert "'multiple output files not supported for TESSERA'" in out
    assert out.count("quilt_only_thing") == 1
    assert out.count("#ifdef") == out.count("#endif")


def test_m4_quoted_ifdef_is_nested():
    out = twice(wp.copy_pnetcdf_blocks, MD_CALLS_M4)
    copy = out.split("#ifdef TESSERA\n", 1)[1].split("\n#ifdef ADIOS2", 1)[0]
    assert "ext_tsr_$1_$2_double$4" in copy and "ext_tsr_$1_$2_$3$4" in copy
    assert copy.rstrip().endswith("#endif") and "ext_pnc_" not in copy
    with pytest.raises(wp.PatchError):
        wp.copy_pnetcdf_blocks("#ifdef PNETCDF_QUILT\n#endif\n")


def test_or_lists_else_if_and_case_lists():
    out = twice(wp.io_form_tests, OUTPUT_WRF)
    assert (f"         ( use_package( io_form ) == IO_TESSERA ) .OR. &  ! {wp.MARK}\n"
            "         ( use_package( io_form ) == IO_PNETCDF ) ) THEN") in out
    out = twice(wp.io_form_tests, EXT_WRITE_FIELD)
    assert (f"use_package(io_form) .EQ. IO_TESSERA .OR. &  ! {wp.MARK}\n"
            "                          use_package(io_form) .EQ. IO_PNETCDF ) ) .OR. &") in out
    assert out.count("IO_TESSERA") == 1
    out = twice(wp.io_form_tests, IO_DOMAIN)
    assert (f"  ELSE IF ( use_package(io_form) .EQ. IO_TESSERA ) THEN  ! {wp.MARK}\n"
            "    ext = '.nc '\n  ELSE IF ( use_package(io_form) .EQ. IO_GRIB1 )") in out
    out = twice(wp.io_form_tests, REAL_EM)
    assert f"CASE ( IO_NETCDF , IO_PNETCDF , IO_PIO , IO_TESSERA )  ! {wp.MARK}" in out
    with pytest.raises(wp.PatchError):
        wp.io_form_tests("x = 1\n")


def test_quilt_server_root_writes_alone_on_comm_self():
    out = twice(wp.quilt_servers, QUILT)
    sokay = out.split("SUBROUTINE quilt\n")[0]
    assert "CASE ( IO_TESSERA   )\n         RETURN" in sokay
    quilt = out.split("SUBROUTINE quilt\n")[1].split("SUBROUTINE quilt_pnc")[0]
    assert ("CALL ext_tsr_open_for_write_begin(FileName,MPI_COMM_SELF, MPI_COMM_SELF,"
            "SysDepInfo,handle(DataHandle),Status)") in quilt
    # the NetCDF-only SysDepInfo settings and debug comments are not copied
    tsr_init = quilt.split("#ifdef TESSERA\n")[1].split("#endif")[0]
    assert "ext_tsr_ioinit( SysDepInfo, ierr )" in tsr_init and "netcdf_classic" not in tsr_init
    assert "!write(0,*)'ext_tsr" not in quilt and "ext_tsr_thing" not in quilt
    assert "ext_tsr" not in out.split("SUBROUTINE quilt_pnc")[1]    # PNETCDF_QUILT path untouched
    assert wp.marks(out) == 3


def test_write_outbuf_gets_mpif_and_a_guarded_copy():
    out = twice(wp.quilt_outbuf, OUTBUF)
    guard = "#if defined( TESSERA ) && defined( DM_PARALLEL ) && !defined( STUBMPI )"
    lines = out.splitlines()
    i = lines.index("    INTEGER               :: Comm, IOComm, DomainDesc ! dummy")
    assert lines[i + 1] == guard and lines[i + 3] == "    INCLUDE 'mpif.h'"
    assert lines.index("    Comm = 0 ; IOComm = 0 ; DomainDesc = 0") > i + 4   # before executable code
    assert "MPI_COMM_SELF, MPI_COMM_SELF, DomainDesc" in out
    assert out.count(guard) == 2 and wp.marks(out) == 2
    with pytest.raises(wp.PatchError):
        wp.quilt_outbuf(OUTBUF.replace("write_outbuf", "other"))


def test_build_flags_in_postamble():
    out = twice(lambda t: wp.lib_external(wp.archflags(t), FLAGS, "/opt/tsr/bin/tessera-config"),
                POSTAMBLE)
    lines = out.splitlines()
    i = lines.index("\t\t      -DNMM_NEST=$(WRF_NMM_NEST)")   # the end of the continued ARCHFLAGS
    assert lines[i + 2] == "ARCHFLAGS       +=   -DTESSERA" and wp.MARK in lines[i + 1]
    j = lines.index("LIB             =    $(LIB_BUNDLED) $(LIB_EXTERNAL) $(LIB_LOCAL)")
    assert lines[j + 2] == f"LIB_EXTERNAL    +=   {FLAGS}"
    # WRF's configure appends $(NETCDF4_DEP_LIB) to LIB lines: still done
    configured = out.replace(FLAGS, FLAGS + " $(NETCDF4_DEP_LIB)")
    assert wp.lib_external(configured, FLAGS, "x") == configured
    # another Tessera: the flags are replaced, not added
    other = wp.lib_external(out, "-L/new/lib -ltessera_wrfio", "/new/bin/tessera-config")
    assert other.count("LIB_EXTERNAL    +=") == 1 and "/new/lib" in other and "/opt/tsr" not in other
    assert "$$ORIGIN" in wp.lib_external(POSTAMBLE, "-Wl,-rpath,$ORIGIN", "x")
    with pytest.raises(wp.PatchError):
        wp.archflags("CFLAGS = -O2\n")


MODULE_DM = """\
   SUBROUTINE split_communicator
      CALL MPI_INITIALIZED( mpi_inited, ierr )
      IF ( .NOT. mpi_inited ) THEN
           CALL mpi_init ( ierr )
           mpi_comm_here = MPI_COMM_WORLD
        CALL wrf_set_dm_communicator( mpi_comm_here )
      END IF
      CALL wrf_get_dm_communicator( mpi_comm_here )
   END SUBROUTINE split_communicator
"""


def test_server_split_after_mpi_init_once():
    out = wp.server_split(MODULE_DM)
    lines = out.splitlines()
    call = lines.index("        CALL ext_tsr_server_split( mpi_comm_here )")
    assert lines[call - 2] == "#ifdef TESSERA" and lines[call + 1] == "#endif"
    assert "mpi_comm_here = MPI_COMM_WORLD" in lines[call - 3]
    assert "wrf_set_dm_communicator" in lines[call + 2]
    assert wp.server_split(out) == out
    with pytest.raises(wp.PatchError):
        wp.server_split("   SUBROUTINE split_communicator\n   END SUBROUTINE split_communicator\n")


# ---------------------------------------------------------------- the command
def make_tree(root: Path) -> Path:
    files = {
        "Registry/Registry.EM_COMMON": REGISTRY,
        "Registry/Registry.EM": "include registry.em_shared_collection\n",
        "inc/version_decl": "  CHARACTER (LEN=10) :: release_version = 'V4.7.1'\n",
        "frame/module_io.F": MODULE_IO,
        "frame/md_calls.m4": MD_CALLS_M4,
        "share/output_wrf.F": OUTPUT_WRF,
        "share/wrf_ext_write_field.F": EXT_WRITE_FIELD,
        "share/module_io_domain.F": IO_DOMAIN,
        "main/real_em.F": REAL_EM,
        "frame/module_io_quilt_old.F": QUILT,
        "frame/module_quilt_outbuf_ops.F": OUTBUF,
        "external/RSL_LITE/module_dm.F": MODULE_DM,
        "arch/postamble": POSTAMBLE,
        "configure.wrf": "DM_FC = mpif90\n" + POSTAMBLE.replace(
            "CONFIGURE_PNETCDF_FLAG", "-DDM_PARALLEL -DPNETCDF"),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def fake_config(tmp: Path, wrf_libs: bool = True) -> Path:
    """A tessera-config as `cmake --install` makes it (only what is asked)."""
    lib = tmp / "prefix" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    (lib / "libtessera_wrfio.so").write_text("")
    script = tmp / "prefix" / "bin" / "tessera-config"
    script.parent.mkdir(parents=True, exist_ok=True)
    wrf = f'--wrf-libs) echo "-L{lib} -ltessera_wrfio -ltessera_fortran -ltessera" ;;' if wrf_libs else ""
    script.write_text(f"""#!/bin/sh
case "$1" in
  {wrf}
  --flibs) echo "-L{lib} -ltessera_fortran -ltessera" ;;
  --libdir) echo "{lib}" ;;
  *) echo "tessera-config: unknown option: $1" >&2; exit 1 ;;
esac
""")
    script.chmod(0o755)
    return script


def snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_install_then_again_changes_nothing(tmp_path, capsys):
    wrf, cfg = make_tree(tmp_path / "WRF"), fake_config(tmp_path)
    assert wrf_install.main([str(wrf), "--tessera-config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "changed frame/module_io.F: 3 PNETCDF blocks copied for TESSERA" in out
    assert "changed share/module_io_domain.F: IO_TESSERA added beside IO_PNETCDF in 1 place" in out
    assert "changed configure.wrf: -DTESSERA added to ARCHFLAGS" in out
    assert "Registry/Registry.EM:" not in out        # no io_form 8 line there
    assert "12 files changed" in out
    assert "changed external/RSL_LITE/module_dm.F: split_communicator" in out
    conf = (wrf / "configure.wrf").read_text()
    assert "ARCHFLAGS       +=   -DTESSERA" in conf and "-ltessera_wrfio" in conf
    assert wp.io_form_8_package((wrf / "Registry/Registry.EM_COMMON").read_text()) == "io_tessera"
    assert not [p for p in wrf.rglob(".*") if p.is_file()]   # no temporaries left behind
    before = snapshot(wrf)
    assert wrf_install.main([str(wrf), "--tessera-config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "nothing to change" in out and "unchanged frame/module_io.F: already done" in out
    assert snapshot(wrf) == before


def test_dry_run_writes_nothing(tmp_path, capsys):
    wrf, cfg = make_tree(tmp_path / "WRF"), fake_config(tmp_path)
    before = snapshot(wrf)
    assert wrf_install.main([str(wrf), "--tessera-config", str(cfg), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would change frame/module_io_quilt_old.F" in out and "12 files would change" in out
    assert snapshot(wrf) == before


def test_older_tessera_config_without_wrf_libs(tmp_path, capsys):
    wrf, cfg = make_tree(tmp_path / "WRF"), fake_config(tmp_path, wrf_libs=False)
    assert wrf_install.main([str(wrf), "--tessera-config", str(cfg)]) == 0
    assert "-ltessera_wrfio -ltessera_fortran -ltessera" in (wrf / "arch/postamble").read_text()
    assert "no --wrf-libs" in capsys.readouterr().err


def refusal(capsys, argv, *words):
    assert wrf_install.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tessera wrf install: ") and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


def test_refusals(tmp_path, capsys):
    cfg = str(fake_config(tmp_path))
    refusal(capsys, [str(tmp_path / "nope"), "--tessera-config", cfg], "not a directory")
    refusal(capsys, [str(tmp_path), "--tessera-config", cfg],
            "not a WRF v4 source tree", "Registry/Registry.EM_COMMON")
    wrf = make_tree(tmp_path / "WRF")
    refusal(capsys, [str(wrf), "--tessera-config", str(tmp_path / "none")], "not an executable")
    (wrf / "share/output_wrf.F").unlink()
    refusal(capsys, [str(wrf), "--tessera-config", cfg], "has no share/output_wrf.F")
    wrf = make_tree(tmp_path / "WRF2")
    (wrf / "frame/module_io.F").write_text("SUBROUTINE x\nEND SUBROUTINE x\n")
    before = snapshot(wrf)
    refusal(capsys, [str(wrf), "--tessera-config", cfg], "frame/module_io.F", "PNETCDF")
    assert snapshot(wrf) == before                     # nothing half done
    wrf = make_tree(tmp_path / "WRF3")
    (wrf / "Registry/Registry.EM_COMMON").write_text(REGISTRY.replace("io_yyy ", "io_mine"))
    refusal(capsys, [str(wrf), "--tessera-config", cfg], "io_form 8", "io_mine")
    wrf = make_tree(tmp_path / "WRF4")
    (wrf / "inc/version_decl").write_text("release_version = 'V3.9.1'\n")
    refusal(capsys, [str(wrf), "--tessera-config", cfg], "WRF 3.9.1, not WRF v4")
    wrf = make_tree(tmp_path / "WRF5")
    (wrf / "main/real_em.F").unlink()
    (wrf / "main/real_em.F").mkdir()                   # unreadable, even for root
    refusal(capsys, [str(wrf), "--tessera-config", cfg], "cannot read", "real_em.F")


def test_command_line_without_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "tessera", "wrf", *args],
                              capture_output=True, text=True, env=env, timeout=60)

    p = run("install", str(tmp_path / "missing"), "--tessera-config", "/nonexistent")
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not a directory" in p.stderr
    p = run("uninstall")
    assert p.returncode == 2 and "unknown subcommand 'uninstall'" in p.stderr
    p = run("install", "--help")
    assert p.returncode == 0 and "--tessera-config" in p.stdout and "--dry-run" in p.stdout
    wrf, cfg = make_tree(tmp_path / "WRF"), fake_config(tmp_path)
    p = run("install", str(wrf), "--tessera-config", str(cfg), "--dry-run")
    assert p.returncode == 0 and "would change arch/postamble" in p.stdout, p.stderr


def test_tessera_config_template_has_wrf_libs(tmp_path):
    """cmake/tessera-config.in answers --wrf-libs with the package first."""
    text = (ROOT / "cmake" / "tessera-config.in").read_text()
    values = {"TESSERA_BIN_TO_PREFIX": "..", "CMAKE_INSTALL_LIBDIR": "lib",
              "CMAKE_INSTALL_INCLUDEDIR": "include", "PROJECT_VERSION": "0",
              "TESSERA_SHARED": "yes", "TESSERA_MPI_LIBS": "-lmpi",
              "TESSERA_RPATH_FLAG": "-Wl,-rpath,"}
    for k, v in values.items():
        text = text.replace(f"@{k}@", v)
    script = tmp_path / "bin" / "tessera-config"
    script.parent.mkdir()
    script.write_text(text)
    script.chmod(0o755)
    out = subprocess.run([str(script), "--wrf-libs"], capture_output=True, text=True).stdout.split()
    prefix = tmp_path.resolve()
    assert out == [f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib", "-ltessera_wrfio",
                   "-ltessera_fortran", "-ltessera", "-lmpi"]
    help_ = subprocess.run([str(script), "--help"], capture_output=True, text=True).stdout
    assert "--wrf-libs" in help_
