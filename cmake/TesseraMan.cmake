# Man pages of the installed programs, made at build time by help2man from
# each program's own --help and --version, installed to <prefix>/share/man/man1
# (`man tessera` once <prefix>/bin is on PATH; `man -l FILE` anywhere).
# Without help2man (scripts/install-deps.sh installs it) there are no pages;
# -DTESSERA_MAN=OFF skips them where the programs cannot run at build time.
# Included by TesseraInstall.cmake, after every program's target exists.
option(TESSERA_MAN "Make and install man pages with help2man" ON)
find_program(TESSERA_HELP2MAN help2man)
if(NOT TESSERA_MAN)
  return()
endif()
if(NOT TESSERA_HELP2MAN)
  message(STATUS "Tessera: help2man not found, no man pages (scripts/install-deps.sh installs it)")
  return()
endif()

set(_tsr_man_dir ${PROJECT_BINARY_DIR}/man)
file(MAKE_DIRECTORY ${_tsr_man_dir}/man1)
set(_tsr_man_pages "")
set(_tsr_man_all tessera tessera-config tessera-bench tessera-servers-bench tessera-convert
  tessera-define-bench)
set(_tsr_see_also "")
foreach(p ${_tsr_man_all})
  if(_tsr_see_also)
    string(APPEND _tsr_see_also ",\n")
  endif()
  string(APPEND _tsr_see_also ".BR ${p} (1)")
endforeach()
# Written only when different, so that a new configure remakes no page.
function(tsr_man_write file content)
  file(WRITE ${file}.new "${content}")
  configure_file(${file}.new ${file} COPYONLY)
endfunction()
tsr_man_write(${_tsr_man_dir}/see-also.h2m
  "[SEE ALSO]\n${_tsr_see_also}\n.PP\nThe user guide: docs/ in the Tessera sources.\n")

# tsr_man(NAME "one-line description" COMMAND cmd... [DEPENDS ...] [STDERR]
#         [VERSION_STRING "NAME (Tessera) X"])
# help2man runs NAME, a small script in the build tree that runs COMMAND
# ($TSR_MAN_PROGRAM: the program target NAME's file) with help2man's --help
# or --version: help2man takes the page's name from the script's name and its
# SYNOPSIS from one line "Usage:", which the script makes of the programs' (and
# argparse's) "usage:" and the lines that continue it (indented 7 or more).
# STDERR: the program prints its --help on stderr.
function(tsr_man name description)
  cmake_parse_arguments(M "STDERR" "VERSION_STRING" "COMMAND;DEPENDS" ${ARGN})
  set(env "")
  if(NOT M_COMMAND)
    if(NOT TARGET ${name})
      return()
    endif()
    set(M_COMMAND "$TSR_MAN_PROGRAM")
    set(env TSR_MAN_PROGRAM=$<TARGET_FILE:${name}>)
    list(APPEND M_DEPENDS ${name})
  endif()
  set(redirect "")
  if(M_STDERR)
    set(redirect " 2>&1")
  endif()
  set(cmd "")
  foreach(a ${M_COMMAND})
    string(APPEND cmd " \"${a}\"")
  endforeach()
  tsr_man_write(${_tsr_man_dir}/run.in/${name} "#!/bin/sh
# help2man's view of ${name} (cmake/TesseraMan.cmake); not installed.
out=$(${cmd} \"$@\"${redirect}) || exit $?
printf '%s\\n' \"$out\" | awk '
  inu && /^       / { sub(/^ +/, \" \"); u = u $0; next }
  inu { print u; inu = 0 }
  !done && /^usage:/ { sub(/^usage:/, \"Usage:\"); u = $0; inu = done = 1; next }
  { print }
  END { if (inu) print u }'
")
  file(COPY ${_tsr_man_dir}/run.in/${name} DESTINATION ${_tsr_man_dir}/run
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
  set(version "")
  if(M_VERSION_STRING)
    set(version "--version-string=${M_VERSION_STRING}")
  endif()
  set(page ${_tsr_man_dir}/man1/${name}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 ${env}
            ${TESSERA_HELP2MAN} --no-info --section=1 "--name=${description}"
            --include=${_tsr_man_dir}/see-also.h2m ${version} --output=${page}
            ${_tsr_man_dir}/run/${name}
    DEPENDS ${M_DEPENDS} ${_tsr_man_dir}/run/${name} ${_tsr_man_dir}/see-also.h2m
    COMMENT "help2man: ${name}.1" VERBATIM)
  set(_tsr_man_pages ${_tsr_man_pages} ${page} PARENT_SCOPE)
endfunction()

set(_tsr_py_sources ${PROJECT_SOURCE_DIR}/python/tessera/__main__.py
  ${PROJECT_SOURCE_DIR}/python/tessera/__init__.py)
if(TESSERA_PYTHON)
  tsr_man(tessera "Tessera's tools: benchmark demo, autotuner, statistics, cost model, staging"
    COMMAND env PYTHONPATH=${PROJECT_SOURCE_DIR}/python ${TESSERA_PYTHON} -m tessera
    DEPENDS ${_tsr_py_sources})
endif()
# tessera-config --version prints the package's version ("tessera X", as
# nc-config does), which help2man would take for the program's name.
tsr_man(tessera-config "how to compile and link a program with Tessera"
  COMMAND sh ${PROJECT_BINARY_DIR}/tessera-config
  VERSION_STRING "tessera-config (Tessera) ${PROJECT_VERSION}"
  DEPENDS ${PROJECT_BINARY_DIR}/tessera-config)
tsr_man(tessera-bench "WRF-like benchmark model writing its history through Tessera")
tsr_man(tessera-servers-bench "hand-off cost and wall time of Tessera's I/O servers" STDERR)
tsr_man(tessera-convert "convert a staged Tessera log (stage_format=log) into its file")
tsr_man(tessera-define-bench "cost of Tessera's define mode with many variables")

add_custom_target(tessera_man ALL DEPENDS ${_tsr_man_pages})
install(FILES ${_tsr_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
