# Limits of tessera-bench's inputs and of the library's buffers (issue 25),
# included by tests/bench/CMakeLists.txt: each stops the run with a sentence
# and an exit code instead of exhausting memory or crashing.

# A namelist or schema is read with a size bound (apps/bench/text_file.h):
# /dev/zero never ends, so only the bound stops it.
add_test(NAME bench.namelist_dev_zero
  COMMAND sh ${TSR_EXPECT_FAILURE} 2
    "tessera-bench: /dev/zero: larger than the 64 MiB a namelist may hold (read stopped there)"
    $<TARGET_FILE:tessera-bench> --namelist /dev/zero --dry-run)
set_tests_properties(bench.namelist_dev_zero PROPERTIES TIMEOUT 30)
add_test(NAME mpi.bench.schema_dev_zero.np2
  COMMAND sh ${TSR_EXPECT_FAILURE} 2
    "tessera-bench: /dev/zero: larger than the 64 MiB a schema may hold (read stopped there)"
    ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS} -n 2 $<TARGET_FILE:tessera-bench>
    --schema /dev/zero --out ${TSR_BENCH_SCRATCH}/schema_dev_zero)
set_tests_properties(mpi.bench.schema_dev_zero.np2 PROPERTIES PROCESSORS 2 TIMEOUT 60
  ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1")

# Under ulimit -v, a buffer_bytes the address space cannot hold is a hint
# error naming the limit, on every rank, not a SIGSEGV inside PnetCDF
# (ncmpio_pack_xbuf) at the first write. The limit (1.5 GB) lets MPI start;
# 2g does not fit under it. A sanitizer's shadow memory cannot live under
# ulimit -v. tests/hints/test_memory_limits.c checks every rank's code and
# sentence, and PnetCDF's own allocation.
if(NOT TESSERA_SANITIZE)
  add_test(NAME mpi.bench.ulimit_buffer_bytes.direct.np2
    COMMAND sh ${TSR_EXPECT_FAILURE} 1
      "TSR_EHINT: hint 'buffer_bytes=2g': more than this process may allocate ("
      sh -c "ulimit -v 1500000 && exec \"$0\" \"$@\"" ${TESSERA_MPIEXEC} ${TESSERA_MPIEXEC_FLAGS}
      -n 2 $<TARGET_FILE:tessera-bench> --hints strategy=direct:buffer_bytes=2g
      --nx 16 --ny 12 --nz 3 --steps 1 --output-every 1 --out ${TSR_BENCH_SCRATCH}/ulimit_buffer)
  set_tests_properties(mpi.bench.ulimit_buffer_bytes.direct.np2 PROPERTIES PROCESSORS 2
    TIMEOUT 60 ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1;TESSERA_HINTS=")
endif()

# A failure that surfaces at tsr_close (direct: PnetCDF's buffered writes)
# or at tsr_finalize (a staged file's drain) is printed with the library's
# sentence naming the file, not only the code: a full tmpfs, mounted by the
# script as root (skipped with 77 elsewhere).
string(REPLACE ";" " " _tsr_bench_flags "${TESSERA_MPIEXEC_FLAGS}")
foreach(_sc direct staged servers_staged)
  add_test(NAME mpi.bench.close_error.${_sc}.np3
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/close_error.sh ${TESSERA_MPIEXEC} "${_tsr_bench_flags}"
      $<TARGET_FILE:tessera-bench> ${_sc})
  set_tests_properties(mpi.bench.close_error.${_sc}.np3 PROPERTIES PROCESSORS 3 TIMEOUT 60
    SKIP_RETURN_CODE 77 ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1")
endforeach()

# Define cost linear in the number of variables: tessera-define-bench is a
# benchmark (apps/define_bench/README.md has the figures), run here once,
# small, only to see that it runs; no time is asserted on a shared machine.
tsr_add_mpi_test(define_bench_smoke COMMAND $<TARGET_FILE:tessera-define-bench>
  --counts 100,1000 --dir ${TSR_BENCH_SCRATCH} NP 2 TIMEOUT 60)
