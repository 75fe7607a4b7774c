# Run by `cmake --install` (TesseraInstall.cmake sets the TSR_VENV_* and
# TSR_PIP_ARGS variables): the Python environment of bin/tessera,
# <prefix>/lib/tessera/venv, with the dependencies of the `tessera` package
# (lib/tessera/requirements.txt). An environment already there is kept and
# brought up to date, so a second install costs a few seconds.
set(_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(_venv "${_root}/${TSR_VENV_DIR}")
set(_req "${_root}/${TSR_VENV_REQUIREMENTS}")
separate_arguments(_venv_args UNIX_COMMAND "${TSR_VENV_ARGS}")
separate_arguments(_pip_args UNIX_COMMAND "${TSR_PIP_ARGS}")
set(_bootstrap "python3 -m venv --clear ${_venv} && ${_venv}/bin/python -m pip install -r ${_req}")
set(_how "-DTESSERA_PIP_ARGS='--no-index --find-links=DIR' installs from wheels in DIR, \
-DTESSERA_INSTALL_VENV=OFF skips it; or make it later: ${_bootstrap}")

message(STATUS "Installing: ${_venv} (${TSR_VENV_PYTHON} -m venv, pip install -r ${_req})")
if(NOT TSR_VENV_PYTHON)
  message(FATAL_ERROR "Tessera: no Python 3 for ${_venv} (configure with -DTESSERA_PYTHON=...); ${_how}")
endif()
execute_process(COMMAND ${TSR_VENV_PYTHON} -m venv ${_venv_args} ${_venv} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  file(REMOVE_RECURSE ${_venv})
  message(FATAL_ERROR "Tessera: `${TSR_VENV_PYTHON} -m venv ${_venv}` failed (${_rc}; Debian's "
    "python3-venv package has ensurepip); ${_how}")
endif()
execute_process(COMMAND ${_venv}/bin/python -m pip install --disable-pip-version-check -q
                        ${_pip_args} -r ${_req}
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  # No half-made environment: bin/tessera says how to make it.
  file(REMOVE_RECURSE ${_venv})
  message(FATAL_ERROR "Tessera: pip could not install the tools' dependencies into ${_venv} "
    "(${_rc}; no network?); ${_how}")
endif()
