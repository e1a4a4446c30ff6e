# cmake -DMPIRUN="mpirun|--oversubscribe" -DCOMMAND="-n|2|prog|args" -DEXPECT_RC=0|nonzero
#       -DMATCH="regex|regex" -DWORK=dir -P expect.cmake
# Runs MPIRUN COMMAND and checks its exit status and that its output (stdout
# and stderr) matches every regex of MATCH.
string(REPLACE "|" ";" mpirun "${MPIRUN}")
string(REPLACE "|" ";" command "${COMMAND}")
string(REPLACE "|" ";" match "${MATCH}")
execute_process(COMMAND ${mpirun} ${command} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(EXPECT_RC STREQUAL "nonzero")
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected a non-zero exit status, got 0")
  endif()
elseif(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "expected exit status ${EXPECT_RC}, got ${rc}")
endif()
foreach(re IN LISTS match)
  if(NOT "${out}${err}" MATCHES "${re}")
    message(FATAL_ERROR "the output lacks a match for: ${re}")
  endif()
endforeach()
list(LENGTH match n)
message(STATUS "exit status ${rc} as expected; all ${n} pattern(s) found")
