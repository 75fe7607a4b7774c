# What `cmake --install` puts under the prefix: libraries with a relative
# RUNPATH (top-level CMakeLists), the header and Fortran module, the CMake
# package (find_package(Tessera)), tessera.pc and tessera-fortran.pc for
# pkg-config, the tessera-config script, the `tessera` Python command with a
# Python environment of its own, and man pages. Nothing installed names the
# prefix: the prefix can be moved.
include(CMakePackageConfigHelpers)
install(TARGETS tessera EXPORT TesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tessera.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

# ---- The MPI that was found, as compiler and linker flags -------------------
# tessera.h includes mpi.h, so a consumer compiles against the same MPI:
# pkg-config and tessera-config carry the include directories and libraries
# FindMPI found (Open MPI, MPICH, Cray MPICH, Intel MPI alike), never a
# pkg-config module name that only one MPI provides.
function(tsr_link_flags out)
  set(flags "")
  foreach(lib ${ARGN})
    if(lib MATCHES "^-" OR NOT IS_ABSOLUTE "${lib}")
      list(APPEND flags "${lib}")      # already a flag (-pthread, -lm) or a bare name
      continue()
    endif()
    get_filename_component(dir "${lib}" DIRECTORY)
    get_filename_component(name "${lib}" NAME)
    if(name MATCHES "^lib(.+)\\.(so|a|dylib)(\\..*)?$")
      list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${dir}" implicit)
      if(implicit EQUAL -1)
        list(APPEND flags "-L${dir}")
      endif()
      list(APPEND flags "-l${CMAKE_MATCH_1}")
    else()
      list(APPEND flags "${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  string(REPLACE ";" " " flags "${flags}")
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

set(_mpi_cflags "")
foreach(d ${MPI_C_INCLUDE_DIRS})
  list(APPEND _mpi_cflags "-I${d}")
endforeach()
foreach(d ${MPI_C_COMPILE_DEFINITIONS})
  list(APPEND _mpi_cflags "-D${d}")
endforeach()
list(APPEND _mpi_cflags ${MPI_C_COMPILE_OPTIONS})
list(REMOVE_DUPLICATES _mpi_cflags)
string(REPLACE ";" " " TESSERA_MPI_CFLAGS "${_mpi_cflags}")
tsr_link_flags(TESSERA_MPI_LIBS ${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES})
set(_tsr_priv ${NETCDF_MPI_LIBRARY})
if(TESSERA_HAVE_PNETCDF)
  list(APPEND _tsr_priv ${PNETCDF_LIBRARY})
endif()
if(TESSERA_HAVE_ECCODES)
  list(APPEND _tsr_priv ${ECCODES_LIBRARY})
endif()
list(APPEND _tsr_priv ${ZLIB_LIBRARIES}) # checksum=crc32, format=zarr's gzip codec
if(TESSERA_HAVE_ISAL) # checksum=crc32's CRC
  list(APPEND _tsr_priv ${ISAL_LIBRARY})
endif()
if(TESSERA_HAVE_JSONC) # strategy=auto's profile
  list(APPEND _tsr_priv ${JSONC_LIBRARY})
endif()
if(TESSERA_HAVE_ZARR AND TESSERA_HAVE_ZSTD) # format=zarr's zstd=
  list(APPEND _tsr_priv ${ZSTD_LIBRARY})
endif()
tsr_link_flags(TESSERA_PRIVATE_LIBS ${_tsr_priv} -lm)

# Programs linked with pkg-config or tessera-config flags find a shared
# libtessera in its prefix without LD_LIBRARY_PATH (as CMake consumers do).
set(TESSERA_RPATH_FLAG "")
set(TESSERA_PC_RPATH "")
if(BUILD_SHARED_LIBS AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(TESSERA_RPATH_FLAG "-Wl,-rpath,")
  set(TESSERA_PC_RPATH "-Wl,-rpath,\${libdir}")
endif()

# tessera-config and the CMake package say what was built.
set(TESSERA_HAS_PNETCDF no)
if(TESSERA_HAVE_PNETCDF)
  set(TESSERA_HAS_PNETCDF yes)
endif()
set(TESSERA_HAS_FORTRAN no)
set(TESSERA_FC "")
if(TARGET tessera_fortran)
  set(TESSERA_HAS_FORTRAN yes)
  # --fc names the MPI Fortran wrapper (mpif90, mpiifort, ftn): a model does
  # `use mpi` as well as `use tessera`, which the bare compiler cannot build
  # with --fflags/--flibs alone (they carry no MPI Fortran module or library).
  # The wrapper FindMPI found wraps the compiler tessera.mod was built with
  # (.mod files are compiler-specific); without one, the compiler itself
  # (a Cray ftn is both).
  find_package(MPI QUIET COMPONENTS Fortran)
  if(MPI_Fortran_FOUND AND MPI_Fortran_COMPILER)
    set(TESSERA_FC ${MPI_Fortran_COMPILER})
  else()
    set(TESSERA_FC ${CMAKE_Fortran_COMPILER})
  endif()
endif()
set(TESSERA_SHARED no)
if(BUILD_SHARED_LIBS)
  set(TESSERA_SHARED yes)
endif()

# ---- CMake package -----------------------------------------------------------
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

# ---- pkg-config: relocatable, the prefix is found from the file's own place ----
file(RELATIVE_PATH TESSERA_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" TESSERA_PC_TO_PREFIX "${TESSERA_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in ${PROJECT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET tessera_fortran)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera-fortran.pc.in
    ${PROJECT_BINARY_DIR}/tessera-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/tessera-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# ---- tessera-config (nc-config style) -------------------------------------------
file(RELATIVE_PATH TESSERA_BIN_TO_PREFIX "/root/${CMAKE_INSTALL_BINDIR}" "/root")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera-config.in ${PROJECT_BINARY_DIR}/tessera-config @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/tessera-config DESTINATION ${CMAKE_INSTALL_BINDIR})

# ---- The `tessera` command (python/tessera) ---------------------------------------
# The package goes to <prefix>/lib/tessera/python (its modules and the cost
# model's profiles, python/pyproject.toml's package-data) and its dependencies
# (pyproject's `dependencies`, as lib/tessera/requirements.txt) into a virtual
# environment of its own, <prefix>/lib/tessera/venv, which `cmake --install`
# creates with TESSERA_PYTHON (3.11+; the Makefile passes the project's .venv,
# whose base interpreter the new environment uses) and pip. bin/tessera runs
# `<its dir>/../lib/tessera/venv/bin/python -m tessera`: nothing in it names
# the build tree, its .venv or the prefix, so both can go and the prefix can
# move (the environment's python is a link to the base interpreter, which
# stays). -DTESSERA_INSTALL_VENV=OFF skips the environment (bin/tessera then
# prints the command that makes it); TESSERA_PIP_ARGS adds pip options (an
# offline install: --no-index --find-links=DIR of wheels), TESSERA_VENV_ARGS
# venv options (--system-site-packages takes the system's numpy ...).
# TESSERA_PYTHON in the environment of bin/tessera runs another interpreter.
if(NOT TESSERA_PYTHON)
  find_program(TESSERA_PYTHON NAMES python3 python)
endif()
option(TESSERA_INSTALL_VENV "cmake --install makes <prefix>/lib/tessera/venv for bin/tessera" ON)
set(TESSERA_PIP_ARGS "" CACHE STRING "Extra pip install options for <prefix>/lib/tessera/venv")
set(TESSERA_VENV_ARGS "" CACHE STRING "Extra python -m venv options for <prefix>/lib/tessera/venv")
set(TESSERA_PYTHON_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/python)
set(TESSERA_VENV_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/venv)
set(TESSERA_REQUIREMENTS ${CMAKE_INSTALL_LIBDIR}/tessera/requirements.txt)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tessera DESTINATION ${TESSERA_PYTHON_DIR}
  FILES_MATCHING PATTERN "*.py" REGEX "/profiles/[^/]*[.]json$" PATTERN "__pycache__" EXCLUDE)
# requirements.txt: the `dependencies = [...]` list of python/pyproject.toml.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/pyproject.toml)
file(READ ${PROJECT_SOURCE_DIR}/python/pyproject.toml _tsr_pyproject)
if(NOT _tsr_pyproject MATCHES "\n *dependencies *= *\\[([^]]*)\\]")
  message(FATAL_ERROR "python/pyproject.toml: no `dependencies = [...]` list")
endif()
string(REGEX MATCHALL "\"[^\"]+\"" _tsr_deps "${CMAKE_MATCH_1}")
string(REPLACE "\"" "" _tsr_deps "${_tsr_deps}")
string(REPLACE ";" "\n" _tsr_deps "${_tsr_deps}")
file(WRITE ${PROJECT_BINARY_DIR}/tessera-requirements.txt
  "# What the `tessera` command needs (python/pyproject.toml), in ${TESSERA_VENV_DIR}.\n${_tsr_deps}\n")
install(FILES ${PROJECT_BINARY_DIR}/tessera-requirements.txt DESTINATION ${CMAKE_INSTALL_LIBDIR}/tessera
  RENAME requirements.txt)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera-command.in ${PROJECT_BINARY_DIR}/tessera-command @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/tessera-command DESTINATION ${CMAKE_INSTALL_BINDIR}
  RENAME tessera)
if(TESSERA_INSTALL_VENV AND NOT TESSERA_PYTHON)
  message(WARNING "Tessera: no Python 3 found (-DTESSERA_PYTHON=...): `cmake --install` makes "
    "no Python environment for bin/tessera, which will say how to make one")
elseif(TESSERA_INSTALL_VENV)
  install(CODE "set(TSR_VENV_PYTHON \"${TESSERA_PYTHON}\")
set(TSR_VENV_DIR \"${TESSERA_VENV_DIR}\")
set(TSR_VENV_REQUIREMENTS \"${TESSERA_REQUIREMENTS}\")
set(TSR_VENV_ARGS \"${TESSERA_VENV_ARGS}\")
set(TSR_PIP_ARGS \"${TESSERA_PIP_ARGS}\")")
  install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/TesseraVenv.cmake)
endif()

# ---- Man pages (help2man) ------------------------------------------------------
include(TesseraMan)
