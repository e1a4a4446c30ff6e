# cmake -DMPIRUN=... -DBENCH=accel-bench -DFAULT=hang|kill_process -DLOST=timeout|died
#       [-DMPIRUN_ARGS="a|b"] -DWITHIN=seconds -DWORK=dir -P bench_bad_rank.cmake
# mpirun -n 3 accel-bench --backends host,cuda,host where rank 1's emulated
# GPU hangs at a kernel (FAULT=hang) or its process is killed at one
# (FAULT=kill_process): the job ends within WITHIN seconds with a non-zero
# status, the JSON holds ranks 0 and 2's rows and marks rank 1 LOST, and the
# fleet table and the failure lines name rank 1 with its host and device.
string(REPLACE "|" ";" mpirun "${MPIRUN}")
string(REPLACE "|" ";" extra "${MPIRUN_ARGS}")
file(MAKE_DIRECTORY ${WORK})
set(json ${WORK}/fleet-${FAULT}.json)
file(REMOVE ${json})
set(ENV{ACCEL_CUDA_EMULATION_FAULTS} "${FAULT}=40")
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${mpirun} ${extra} -n 3 ${BENCH} --quick --ops add,matmul --add-sizes 1e3,1e4,1e5
                        --matmul-sizes 16,32 --backends host,cuda,host --rank-timeout 10 --json ${json}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
message("${out}${err}")
if(took GREATER WITHIN)
  message(FATAL_ERROR "the job took ${took} s, more than the ${WITHIN} s allowed (rank timeout 10 s)")
endif()
string(TOUPPER "${LOST}" label)
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)
expect_run("${rc}" "${out}${err}" nonzero "accel-bench fleet: 3 device\\(s\\)" "\n1 +[^ ]+ +cuda[^\n]* ${LOST}\n"
           "${label}: rank 1 on host [^ ]+, cuda: " "FAIL: rank 1 on host [^ ]+ \\(cuda\\): ")
if(NOT EXISTS ${json})
  message(FATAL_ERROR "rank 0 wrote no JSON though two ranks finished")
endif()
file(READ ${json} doc)
string(JSON lost ERROR_VARIABLE no_lost GET "${doc}" fleet ranks 1 lost)
if(NOT lost STREQUAL LOST)
  message(FATAL_ERROR "fleet.ranks[1].lost is '${lost}', expected '${LOST}'")
endif()
string(JSON nrows LENGTH "${doc}" rows)
set(per_rank 0 0 0)
math(EXPR last "${nrows} - 1")
foreach(i RANGE ${last})
  string(JSON rank GET "${doc}" rows ${i} rank)
  list(GET per_rank ${rank} n)
  math(EXPR n "${n} + 1")
  list(REMOVE_AT per_rank ${rank})
  list(INSERT per_rank ${rank} ${n})
endforeach()
list(GET per_rank 0 n0)
list(GET per_rank 1 n1)
list(GET per_rank 2 n2)
if(n0 EQUAL 0 OR n2 EQUAL 0 OR NOT n1 EQUAL 0 OR NOT n0 EQUAL n2)
  message(FATAL_ERROR "rows per rank ${n0}, ${n1}, ${n2}: expected ranks 0 and 2 alike and none of rank 1")
endif()
message(STATUS "rank 1 ${LOST}; ${n0} + ${n2} rows of ranks 0 and 2 written; ended after ${took} s with status ${rc}")
