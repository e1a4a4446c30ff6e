# cmake -DINFO=<accel-info> -DPLUGIN_DIR=<folder> -DBACKEND=<name> -DBUILT=<a,b,...> -DREASON=<text> -DRC=<status>
#       -P accel_info.cmake
# Runs accel-info with a malformed plugin of BACKEND found first in PLUGIN_DIR:
# it must exit with RC (no crash), list every backend found (those of this
# build, BUILT, and BACKEND), and give one line that names the plugin file and
# contains REASON.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_PLUGIN_PATH=${PLUGIN_DIR} ACCEL_BACKEND=auto ${INFO} --wide
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "accel-info exited with '${rc}', expected ${RC}")
endif()
string(REPLACE "," ";" built "${BUILT}")
foreach(name ${built} ${BACKEND})
  if(NOT out MATCHES "(^|\n)${name}: (available|unavailable)")
    message(FATAL_ERROR "accel-info lists no status line for ${name}")
  endif()
endforeach()
set(file "${PLUGIN_DIR}/libaccel-backend-${BACKEND}.so")
string(REGEX MATCHALL "[^\n]*${BACKEND}[^\n]*" lines "${out}")
foreach(line IN LISTS lines)
  string(FIND "${line}" "${file}" has_file)
  string(FIND "${line}" "${REASON}" has_reason)
  if(has_file GREATER -1 AND has_reason GREATER -1)
    return()
  endif()
endforeach()
message(FATAL_ERROR "no line of accel-info's output names ${file} and says '${REASON}'")
