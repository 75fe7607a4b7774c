# One version: project(Tessera VERSION ...). It reaches the library through a
# generated header (tsr_inq_libvers), tessera.pc, TesseraConfigVersion.cmake,
# tessera-config and the programs' --version. The public header's TSR_VERSION_*
# macros are checked against it here so that they never drift.
set(TESSERA_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera_version.h.in
  ${TESSERA_GENERATED_INCLUDE_DIR}/tessera_version.h @ONLY)

file(STRINGS ${PROJECT_SOURCE_DIR}/include/tessera.h _tsr_vlines
  REGEX "^#define TSR_VERSION_(MAJOR|MINOR|PATCH) ")
set(_tsr_hver "")
foreach(_part MAJOR MINOR PATCH)
  foreach(_l ${_tsr_vlines})
    if(_l MATCHES "^#define TSR_VERSION_${_part} +([0-9]+)")
      list(APPEND _tsr_hver ${CMAKE_MATCH_1})
    endif()
  endforeach()
endforeach()
string(REPLACE ";" "." _tsr_hver "${_tsr_hver}")
if(NOT _tsr_hver STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/tessera.h says version ${_tsr_hver}, CMakeLists.txt "
                      "project() says ${PROJECT_VERSION}: update both together")
endif()

# The Python package (python/pyproject.toml takes its version from here).
file(STRINGS ${PROJECT_SOURCE_DIR}/python/tessera/__init__.py _tsr_pyver
  REGEX "^__version__ *= *\"[^\"]+\"")
string(REGEX REPLACE "^__version__ *= *\"([^\"]+)\".*" "\\1" _tsr_pyver "${_tsr_pyver}")
if(NOT _tsr_pyver STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "python/tessera/__init__.py says version ${_tsr_pyver}, "
                      "CMakeLists.txt project() says ${PROJECT_VERSION}: update both together")
endif()
