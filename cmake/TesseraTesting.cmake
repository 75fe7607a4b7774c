# How MPI tests are registered (docs/architecture.md, "rules of the code").
#
# tsr_add_mpi_scenarios(PROGRAM COMMAND exe args... SCENARIOS s1 s2 ... NP n1 n2 ...
#                       [MIN_NP s=n ...] [TIMEOUT s] [ENV VAR=value ...] [SEPARATE])
#   for a program built on tests/common/tsr_test.h. For every rank count N:
#   mpi.PROGRAM.npN runs `mpiexec -n N exe s1,s2,... args...` once (TIMEOUT
#   applies to it), and mpi.PROGRAM.SCENARIO.npN, one per scenario, reports
#   that scenario's verdict, failure lines included (CTest fixtures order
#   them; `ctest -R mpi.PROGRAM.SCENARIO.npN` runs both). One mpiexec start per
#   rank count, as it costs more than most scenarios on the 2-core CI machine.
#   SEPARATE: one mpiexec start per (scenario, N) instead, for scenarios that
#   must not share a process. MIN_NP s=n: scenario s needs n ranks (its
#   min_ranks), so it is not registered at fewer, where it could only skip.
#   Call it again for scenarios that need other rank counts. Once per PROGRAM it also registers scenarios.PROGRAM, which fails
#   when `exe list` names a scenario that no mpi.PROGRAM.* test reports.
#
# tsr_add_mpi_test(NAME COMMAND cmd args... NP n1 n2 ... [TIMEOUT s] [ENV ...])
#   the older form for programs without scenarios: mpi.NAME.npN.
#
# Both set PROCESSORS, TIMEOUT (default 120 s) and SKIP_RETURN_CODE 77: a
# scenario or program that exits 77 on every rank (tsr_test.h: the strategy or
# backend is not built) is reported by CTest as skipped, never as passed.
set(TESSERA_MPIEXEC_FLAGS --oversubscribe)
execute_process(COMMAND id -u OUTPUT_VARIABLE _tsr_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_tsr_uid STREQUAL "0")
  list(APPEND TESSERA_MPIEXEC_FLAGS --allow-run-as-root)
endif()
set(TESSERA_TEST_SKIP_CODE 77)

# Open MPI probes every transport at start-up (UCX first), which is most of
# the time of a short test; on one node the shared-memory path is what it
# ends up with anyway, so name it. Empty the variable to test other paths.
execute_process(COMMAND ${TESSERA_MPIEXEC} --version OUTPUT_VARIABLE _tsr_mpiexec_version
  ERROR_QUIET)
if(_tsr_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(_tsr_mpi_env "OMPI_MCA_pml=ob1;OMPI_MCA_btl=self,vader")
else()
  set(_tsr_mpi_env "")
endif()
set(TESSERA_TEST_MPI_ENV "${_tsr_mpi_env}" CACHE STRING
  "Environment (VAR=value;...) of every MPI test, e.g. Open MPI transport selection")
set(_tsr_testing_dir ${CMAKE_CURRENT_LIST_DIR})

function(_tsr_mpi_test_properties tname np timeout env)
  set_tests_properties(${tname} PROPERTIES PROCESSORS ${np} TIMEOUT ${timeout}
    SKIP_RETURN_CODE ${TESSERA_TEST_SKIP_CODE}
    ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1;${TESSERA_TEST_MPI_ENV};${env}")
endfunction()

function(tsr_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;NP;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(np ${T_NP})
    set(tname mpi.${name}.np${np})
    add_test(NAME ${tname}
      COMMAND ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS} -n ${np} ${T_COMMAND})
    _tsr_mpi_test_properties(${tname} ${np} ${T_TIMEOUT} "${T_ENV}")
  endforeach()
endfunction()

# MIN_NP s=n ...: scenario s needs n ranks (its min_ranks in the program's
# table): no CTest is registered for it at fewer, where it could only skip.
function(_tsr_scenario_min out scenario)
  set(min 0)
  foreach(m ${ARGN})
    string(REPLACE "=" ";" kv "${m}")
    list(GET kv 0 k)
    list(GET kv 1 v)
    if(k STREQUAL scenario)
      set(min ${v})
    endif()
  endforeach()
  set(${out} ${min} PARENT_SCOPE)
endfunction()

function(tsr_add_mpi_scenarios name)
  cmake_parse_arguments(T "SEPARATE" "TIMEOUT" "COMMAND;SCENARIOS;NP;ENV;MIN_NP" ${ARGN})
  if(NOT T_COMMAND OR NOT T_SCENARIOS OR NOT T_NP)
    message(FATAL_ERROR "tsr_add_mpi_scenarios(${name}): COMMAND, SCENARIOS and NP are required")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  list(POP_FRONT T_COMMAND exe)
  if(T_SEPARATE)
    foreach(s ${T_SCENARIOS})
      _tsr_scenario_min(min ${s} ${T_MIN_NP})
      foreach(np ${T_NP})
        if(np LESS min)
          continue()
        endif()
        set(tname mpi.${name}.${s}.np${np})
        add_test(NAME ${tname}
          COMMAND ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS} -n ${np} ${exe} ${s} ${T_COMMAND})
        _tsr_mpi_test_properties(${tname} ${np} ${T_TIMEOUT} "${T_ENV}")
        set_property(TEST ${tname} APPEND PROPERTY LABELS mpi ${name})
      endforeach()
    endforeach()
  else()
    set(vdir ${CMAKE_CURRENT_BINARY_DIR}/verdicts/${name})
    file(MAKE_DIRECTORY ${vdir})
    string(REPLACE ";" "," list "${T_SCENARIOS}")
    foreach(np ${T_NP})
      set(run mpi.${name}.np${np})
      add_test(NAME ${run}
        COMMAND ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS} -n ${np} ${exe} ${list} ${T_COMMAND})
      _tsr_mpi_test_properties(${run} ${np} ${T_TIMEOUT} "TSR_TEST_VERDICTS=${vdir};${T_ENV}")
      set_tests_properties(${run} PROPERTIES FIXTURES_SETUP ${name}_np${np})
      set_property(TEST ${run} APPEND PROPERTY LABELS mpi ${name})
      foreach(s ${T_SCENARIOS})
        _tsr_scenario_min(min ${s} ${T_MIN_NP})
        if(np LESS min)
          continue()
        endif()
        set(tname mpi.${name}.${s}.np${np})
        add_test(NAME ${tname}
          COMMAND sh ${_tsr_testing_dir}/tsr_verdict.sh ${vdir}/${s}.np${np} ${run})
        set_tests_properties(${tname} PROPERTIES FIXTURES_REQUIRED ${name}_np${np} TIMEOUT 30
          SKIP_RETURN_CODE ${TESSERA_TEST_SKIP_CODE})
        set_property(TEST ${tname} APPEND PROPERTY LABELS ${name})
      endforeach()
    endforeach()
  endif()
  get_property(_checked GLOBAL PROPERTY _tsr_scenarios_checked_${name})
  if(NOT _checked)
    set_property(GLOBAL PROPERTY _tsr_scenarios_checked_${name} 1)
    add_test(NAME scenarios.${name}
      COMMAND ${CMAKE_COMMAND} -DEXE=${exe} -DPROGRAM=${name} -DCTEST=${CMAKE_CTEST_COMMAND}
              -P ${_tsr_testing_dir}/TesseraScenarioCheck.cmake
      WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(scenarios.${name} PROPERTIES TIMEOUT 60)
  endif()
endfunction()
