# cmake -DPROGRAM=<executable> [-DCOMMAND=<subcommand>] -DNAME=<name in messages> -DCHECK=help|usage -P cli.cmake
# help:  `PROGRAM [COMMAND] --help` and `-h` print the help on stdout (it names
#        the usage) and exit 0.
# usage: `PROGRAM [COMMAND] --frob` exits 2 with exactly one line on stderr,
#        "NAME: unknown option '--frob'; see NAME --help", and nothing on stdout.
if(CHECK STREQUAL "help")
  foreach(flag --help -h)
    execute_process(COMMAND ${PROGRAM} ${COMMAND} ${flag} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "Usage: ${NAME}")
      message(FATAL_ERROR "${NAME} ${flag} exited '${rc}' (expected 0) and printed:\n${out}${err}")
    endif()
  endforeach()
  message(STATUS "${NAME} --help and -h: help, exit 0")
elseif(CHECK STREQUAL "usage")
  execute_process(COMMAND ${PROGRAM} ${COMMAND} --frob RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(want "${NAME}: unknown option '--frob'; see ${NAME} --help\n")
  if(NOT rc EQUAL 2 OR NOT err STREQUAL want OR NOT out STREQUAL "")
    message(FATAL_ERROR "${NAME} --frob exited '${rc}' (expected 2) with stdout:\n${out}\nstderr:\n${err}\n"
                        "expected only this line on stderr:\n${want}")
  endif()
  message(STATUS "${NAME} --frob: one line naming the option and --help, exit 2")
else()
  message(FATAL_ERROR "CHECK must be help or usage, not '${CHECK}'")
endif()
