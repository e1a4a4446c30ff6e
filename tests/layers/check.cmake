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
#      registered functions only);
#   6. a backend's name (cuda, hip, opencl, vulkan, kokkos: a whole lowercase
#      word, an identifier or in a string) in the code of core/, ops/ or
#      internal/, comments aside: a backend is its folder, and libaccel learns
#      of it from its plugin alone.
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
# 6. backend names in libaccel's code. Exempt: accel 0.1's deprecated API (a
# [[deprecated]] declaration, and the code between `#pragma GCC diagnostic
# ignored "-Wdeprecated-declarations"` and its pop that moves its fields).
# "host" is not checked: core means the CPU side by it (host memory, host
# callables, a machine's host name), not only the host backend.
file(GLOB_RECURSE layer_sources ${SOURCE_DIR}/core/* ${SOURCE_DIR}/ops/* ${SOURCE_DIR}/internal/*)
list(FILTER layer_sources INCLUDE REGEX "\\.(cpp|hpp|h)$")
foreach(f IN LISTS layer_sources)
  file(READ ${f} text)
  # Lines as a CMake list: the characters that would split or join its
  # elements (; [ ] \) become others first.
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  set(deprecated_block FALSE)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"")
      set(deprecated_block TRUE)
    elseif(line MATCHES "#pragma GCC diagnostic pop")
      set(deprecated_block FALSE)
    endif()
    if(deprecated_block OR line MATCHES "\\(\\(deprecated")
      continue()
    endif()
    string(REGEX REPLACE "//.*$" "" code "${line}")
    if(code MATCHES "^[ \t]*/?\\*")
      continue()  # a block comment's line
    endif()
    if(code MATCHES "(^|[^A-Za-z0-9_])(cuda|hip|opencl|vulkan|kokkos)([^A-Za-z0-9_]|$)")
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
      string(STRIP "${line}" shown)
      string(APPEND problems "\n  ${rel}:${number}: names the backend '${CMAKE_MATCH_2}' (libaccel names no backend "
                             "in its code; a backend's facts come from its plugin): ${shown}")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "the layer line is crossed:${problems}")
endif()
list(LENGTH sources n)
list(LENGTH layer_sources m)
message(STATUS "layers: ${n} files, no include across the line; ${m} files of libaccel, no backend named in code")
