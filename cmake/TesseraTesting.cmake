# tsr_add_mpi_test(NAME COMMAND cmd args... NP n1 n2 ... [TIMEOUT s])
# registers mpi.NAME.npN for every N, run through mpiexec --oversubscribe.
set(TESSERA_MPIEXEC_FLAGS --oversubscribe)
execute_process(COMMAND id -u OUTPUT_VARIABLE _tsr_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_tsr_uid STREQUAL "0")
  list(APPEND TESSERA_MPIEXEC_FLAGS --allow-run-as-root)
endif()

function(tsr_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;NP;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  foreach(np ${T_NP})
    set(tname mpi.${name}.np${np})
    add_test(NAME ${tname}
      COMMAND ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS} -n ${np} ${T_COMMAND})
    set_tests_properties(${tname} PROPERTIES PROCESSORS ${np} TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1;${T_ENV}")
  endforeach()
endfunction()
