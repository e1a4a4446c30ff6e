# cmake -DPROGRAM=<executable> [-DCOMMAND=<subcommand>] -DNAME=<name in messages> -DCHECK=help|usage -P cli.cmake
# help:  `PROGRAM [COMMAND] --help` and `-h` print the help on stdout (it names
#        the usage) and exit 0; no line of it is over 100 columns (UTF-8
#        code points; COLUMNS unset and stdout not a terminal: the default).
# usage: `PROGRAM [COMMAND] --frob` exits 2 with exactly one line on stderr,
#        "NAME: unknown option '--frob'; see NAME --help", and nothing on stdout;
#        a mistyped one, `--hepl`, gets the closest: "... '--hepl' (did you
#        mean '--help'?); see NAME --help".
if(CHECK STREQUAL "help")
  foreach(flag --help -h)
    execute_process(COMMAND ${PROGRAM} ${COMMAND} ${flag} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "Usage: ${NAME}")
      message(FATAL_ERROR "${NAME} ${flag} exited '${rc}' (expected 0) and printed:\n${out}${err}")
    endif()
    string(ASCII 128 continuation_lo)
    string(ASCII 191 continuation_hi)
    string(REGEX REPLACE "[${continuation_lo}-${continuation_hi}]" "" narrow "${out}")
    string(REPLACE ";" "," narrow "${narrow}")
    string(REPLACE "\n" ";" lines "${narrow}")
    foreach(line IN LISTS lines)
      string(LENGTH "${line}" columns)
      if(columns GREATER 100)
        message(FATAL_ERROR "${NAME} ${flag}: a help line of ${columns} columns (at most 100):\n${line}")
      endif()
    endforeach()
  endforeach()
  message(STATUS "${NAME} --help and -h: help, exit 0")
elseif(CHECK STREQUAL "usage")
  execute_process(COMMAND ${PROGRAM} ${COMMAND} --frob RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(want "${NAME}: unknown option '--frob'; see ${NAME} --help\n")
  if(NOT rc EQUAL 2 OR NOT err STREQUAL want OR NOT out STREQUAL "")
    message(FATAL_ERROR "${NAME} --frob exited '${rc}' (expected 2) with stdout:\n${out}\nstderr:\n${err}\n"
                        "expected only this line on stderr:\n${want}")
  endif()
  execute_process(COMMAND ${PROGRAM} ${COMMAND} --hepl RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(want "${NAME}: unknown option '--hepl' (did you mean '--help'?); see ${NAME} --help\n")
  if(NOT rc EQUAL 2 OR NOT err STREQUAL want)
    message(FATAL_ERROR "${NAME} --hepl exited '${rc}' (expected 2) with stderr:\n${err}\nexpected:\n${want}")
  endif()
  message(STATUS "${NAME} --frob, --hepl: one line naming the option (and the closest) and --help, exit 2")
else()
  message(FATAL_ERROR "CHECK must be help or usage, not '${CHECK}'")
endif()
