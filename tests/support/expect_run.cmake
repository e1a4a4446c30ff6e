# expect_run(RC OUTPUT EXPECT_RC REGEX...): the checks of a test script that ran
# a command: its exit status RC is EXPECT_RC (or any but 0 for "nonzero") and
# OUTPUT (its stdout and stderr) matches every REGEX; a FATAL_ERROR naming the
# first check that fails. Included by tests/conformance/cli.cmake and
# tests/mpi/expect.cmake.
function(expect_run rc output expect_rc)
  if(expect_rc STREQUAL "nonzero")
    if(rc EQUAL 0)
      message(FATAL_ERROR "expected a non-zero exit status, got 0")
    endif()
  elseif(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "expected exit status ${expect_rc}, got ${rc}")
  endif()
  foreach(re IN LISTS ARGN)
    if(NOT output MATCHES "${re}")
      message(FATAL_ERROR "the output lacks a match for: ${re}")
    endif()
  endforeach()
endfunction()
