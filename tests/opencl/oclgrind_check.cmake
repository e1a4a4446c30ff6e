# Runs COMMAND (a ;-list) under Oclgrind with its diagnostics sent to LOG, and
# judges the run by them:
#  - EXPECT_REPORTS=0: fails when Oclgrind reported anything (out-of-bounds
#    access, data race, API misuse, barrier divergence, ...) or COMMAND failed;
#  - EXPECT_REPORTS=1: the known-false-positive check; fails when Oclgrind no
#    longer reports, saying which check can be turned back on (TURN_ON).
# Prints "SKIPPED" (the test's SKIP_REGULAR_EXPRESSION) when COMMAND exits 77.
file(REMOVE "${LOG}")
set(ENV{OCLGRIND_LOG} "${LOG}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc)
if(rc EQUAL 77)
  message("SKIPPED: no Oclgrind device registered")
  return()
endif()
set(reports "")
if(EXISTS "${LOG}")
  file(READ "${LOG}" reports)
  string(STRIP "${reports}" reports)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}\n${reports}")
endif()
if(EXPECT_REPORTS AND reports STREQUAL "")
  message(FATAL_ERROR "Oclgrind no longer reports this false positive: turn ${TURN_ON} back on for "
                      "conformance.opencl.oclgrind (tests/CMakeLists.txt) and remove this test")
elseif(NOT EXPECT_REPORTS AND NOT reports STREQUAL "")
  message(FATAL_ERROR "Oclgrind reported:\n${reports}")
endif()
