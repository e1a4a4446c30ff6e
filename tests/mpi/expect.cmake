# cmake -DMPIRUN="mpirun|--oversubscribe" -DCOMMAND="-n|2|prog|args" -DEXPECT_RC=0|nonzero
#       -DMATCH="regex|regex" [-DWITHIN=seconds] -DWORK=dir -P expect.cmake
# Runs MPIRUN COMMAND and checks its exit status, that its output (stdout
# and stderr) matches every regex of MATCH and, with WITHIN, that it ended
# within that many seconds.
string(REPLACE "|" ";" mpirun "${MPIRUN}")
string(REPLACE "|" ";" command "${COMMAND}")
string(REPLACE "|" ";" match "${MATCH}")
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${mpirun} ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
message("${out}${err}")
if(DEFINED WITHIN AND took GREATER WITHIN)
  message(FATAL_ERROR "the job took ${took} s, more than the ${WITHIN} s allowed")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)
expect_run("${rc}" "${out}${err}" "${EXPECT_RC}" ${match})
list(LENGTH match n)
message(STATUS "exit status ${rc} as expected after ${took} s; all ${n} pattern(s) found")
