# cmake -DBUILD_DIR=... -DWORK=... -DEXTRACT=... "-DDOCS=a.md;b.md" "-DBACKENDS=host;opencl"
#       [-DFLAGS=... -DLINK_FLAGS=...] -P run.cmake
# The docs as tests: installs accel from BUILD_DIR into WORK/prefix; turns
# every C++ block of DOCS into a program of one outside project (EXTRACT,
# tests/docs/extract_snippets.cpp, which also checks that every ACCEL_
# variable the docs name is in docs/environment.md's table), builds it against the
# install with find_package(accel) and the docs' own CMake lines, runs each
# program on each of BACKENDS (ACCEL_BACKEND) and on a mistyped one (a
# clear error, not an abort), and checks that every --flag the docs give an
# installed tool is in that tool's --help (or a subcommand's).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/project)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc})")
endif()
execute_process(COMMAND ${EXTRACT} ${WORK}/project ${DOCS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the docs do not hold (see above)")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/project -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix
                "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the docs' programs with find_package(accel) failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a C++ block of the docs does not compile against the install (see above; "
                      "each program's first line names its file and line)")
endif()
file(STRINGS ${WORK}/project/programs.txt programs)
foreach(p ${programs})
  file(STRINGS ${WORK}/project/${p}.cpp origin LIMIT_COUNT 1)
  foreach(backend ${BACKENDS})
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_BACKEND=${backend} ${WORK}/build/${p}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${origin}: the program exits ${rc} on ${backend}:\n${out}${err}")
    endif()
    message(STATUS "${origin}: runs on ${backend}")
  endforeach()
  # A mistyped ACCEL_BACKEND: the program reports accel's error and exits,
  # it does not abort with an uncaught exception.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_BACKEND=no-such-backend ${WORK}/build/${p}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$" OR rc GREATER 125 OR NOT err MATCHES "no-such-backend")
    message(FATAL_ERROR "${origin}: with ACCEL_BACKEND=no-such-backend the program should print accel's error "
                        "naming it and exit with a small status; it exits '${rc}':\n${out}${err}")
  endif()
endforeach()
file(STRINGS ${WORK}/project/flags.txt flag_lines)
set(failed "")
foreach(line ${flag_lines})
  separate_arguments(parts UNIX_COMMAND "${line}")
  list(GET parts 0 tool)
  list(GET parts 1 flag)
  list(GET parts 2 where)
  if(NOT DEFINED help_${tool})
    set(help "")
    foreach(sub "" compare plot fleet mlp tune)
      execute_process(COMMAND ${WORK}/prefix/bin/${tool} ${sub} --help OUTPUT_VARIABLE out ERROR_QUIET RESULT_VARIABLE rc)
      if(rc EQUAL 0)
        string(APPEND help "${out}")
      endif()
    endforeach()
    set(help_${tool} "${help}")
  endif()
  string(FIND "${help_${tool}}" "${flag}" at)
  if(at EQUAL -1)
    string(APPEND failed "\n  ${where}: ${tool} ${flag}: not in `${tool} --help`")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "the docs name options the tools do not have:${failed}")
endif()
