# example.<name>.backends: an example's --backends option.
#   1. `--quick --backends ${OTHER}` runs the host backend (the baseline) and
#      the named backend, and no other: the selectors in its table.
#   2. A mistyped backend ("hots") exits non-zero with the closest name.
# -DEXE=<example> -DOTHER=<a backend built here besides host, e.g. kokkos>
#   -DABSENT=<a backend whose devices must not appear, e.g. vulkan>
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)
execute_process(COMMAND ${EXE} --quick --backends ${OTHER} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_run(${rc} "${out}${err}" 0 "host" "${OTHER}")
if("${out}" MATCHES "${ABSENT}:")
  message(FATAL_ERROR "--backends ${OTHER} ran a ${ABSENT} device as well:\n${out}")
endif()
execute_process(COMMAND ${EXE} --quick --backends hots RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_run(${rc} "${out}${err}" nonzero "did you mean host\\?")
