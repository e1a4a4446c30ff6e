# layers: the line between libaccel's two layers, core (core/: the device
# interface, tensors, the op table, the registry) below ops (ops/: the op
# front-end, the float64 oracle, the shadow check). Fails, naming the file
# and line, on:
#   1. a file of core/ that includes a header of ops/include (core knows
#      nothing of ops; accel/accel.hpp, the users' one include, lives in ops/);
#   2. any file that includes another folder's src/ ("core/src/...",
#      "../src/...", "ops/src/...");
#   3. a header of internal/ (what core/src and ops/src share, never
#      installed) included from anywhere but core/src, ops/src and internal/;
#   4. a friend declaration in core/include;
#   5. with NM, CORE_OBJECTS and OPS_OBJECTS (the object files of the two
#      layers, '|'-separated): a symbol a core object needs that an ops
#      object defines (core calls ops through accel_internal/ops_layer.hpp's
#      registered functions only).
# cmake -DSOURCE_DIR=<repository> [-DNM=<nm> -DCORE_OBJECTS=<a.o|b.o> -DOPS_OBJECTS=<c.o|d.o>] -P check.cmake
cmake_minimum_required(VERSION 3.20)
file(GLOB ops_headers RELATIVE ${SOURCE_DIR}/ops/include/accel ${SOURCE_DIR}/ops/include/accel/*.hpp)
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/core/* ${SOURCE_DIR}/ops/* ${SOURCE_DIR}/internal/* ${SOURCE_DIR}/backends/*
     ${SOURCE_DIR}/tools/* ${SOURCE_DIR}/python/src/* ${SOURCE_DIR}/mpi/* ${SOURCE_DIR}/examples/*)
list(FILTER sources INCLUDE REGEX "\\.(cpp|hpp|h|cu|cuh|cl|comp)$")
set(problems "")
foreach(rel IN LISTS sources)
  file(STRINGS ${SOURCE_DIR}/${rel} lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
      continue()
    endif()
    set(target ${CMAKE_MATCH_1})
    if(rel MATCHES "^core/")
      foreach(h IN LISTS ops_headers)
        if(target STREQUAL "accel/${h}")
          string(APPEND problems "\n  ${rel}: includes <${target}>, a header of ops/ (core knows nothing of ops)")
        endif()
      endforeach()
    endif()
    if(target MATCHES "(^|/)(core|ops)/src/" OR target MATCHES "^\\.\\./src/")
      string(APPEND problems "\n  ${rel}: includes \"${target}\", another folder's src/")
    endif()
    if(target MATCHES "^accel_internal/" AND NOT rel MATCHES "^(core/src|ops/src|internal)/")
      string(APPEND problems "\n  ${rel}: includes <${target}>, internal to libaccel (core/src, ops/src only)")
    endif()
  endforeach()
endforeach()
# Core's public classes keep no friends: what ops needs of a device is public
# (Device::kernel_table(), Device::read_handle), so no friend can cross the line.
file(GLOB core_headers ${SOURCE_DIR}/core/include/accel/*.hpp)
foreach(h IN LISTS core_headers)
  file(STRINGS ${h} friends REGEX "^[ \t]*friend[ \t]")
  foreach(f IN LISTS friends)
    string(STRIP "${f}" f)
    string(APPEND problems "\n  ${h}: declares '${f}' (core's public classes have no friends)")
  endforeach()
endforeach()
# 5. what core's objects need of ops' (the linker's view of the line).
if(NM AND CORE_OBJECTS AND OPS_OBJECTS)
  string(REPLACE "|" ";" core_objects "${CORE_OBJECTS}")
  string(REPLACE "|" ";" ops_objects "${OPS_OBJECTS}")
  execute_process(COMMAND ${NM} --defined-only --extern-only ${ops_objects} OUTPUT_VARIABLE ops_symbols
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ops' objects (${rc})")
  endif()
  string(REGEX REPLACE "[^\n]* [TDRBVW] ([^\n]+)" "|\\1|" ops_symbols "${ops_symbols}")
  foreach(object IN LISTS core_objects)
    execute_process(COMMAND ${NM} --undefined-only ${object} OUTPUT_VARIABLE needed RESULT_VARIABLE rc)
    string(REGEX MATCHALL "U [^\n]+" needed "${needed}")
    foreach(symbol IN LISTS needed)
      string(SUBSTRING "${symbol}" 2 -1 symbol)
      string(FIND "${ops_symbols}" "|${symbol}|" at)
      if(NOT at EQUAL -1)
        execute_process(COMMAND c++filt ${symbol} OUTPUT_VARIABLE readable OUTPUT_STRIP_TRAILING_WHITESPACE)
        get_filename_component(name ${object} NAME)
        string(APPEND problems "\n  core object ${name} needs ${readable}, which ops defines (call ops through "
                               "accel_internal/ops_layer.hpp's registered functions)")
      endif()
    endforeach()
  endforeach()
endif()
if(problems)
  message(FATAL_ERROR "the layer line is crossed:${problems}")
endif()
list(LENGTH sources n)
message(STATUS "layers: ${n} files, no include across the line")
