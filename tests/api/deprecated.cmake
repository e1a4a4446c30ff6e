# api.deprecated: compiles deprecated_api.cpp (accel 0.1's calls) and checks
# that it compiles and that each deprecated use is warned with its
# replacement. cmake -DCXX=<c++> -DINCLUDES=<dirs> -DSOURCE=<file> -P deprecated.cmake
set(args -std=c++17 -fsyntax-only -Wdeprecated-declarations)
foreach(dir IN LISTS INCLUDES)
  list(APPEND args -I${dir})
endforeach()
execute_process(COMMAND ${CXX} ${args} ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a program using accel 0.1's API no longer compiles (${rc}):\n${out}")
endif()
foreach(expect "use device.kernel_table[(][)].supports[(]op, path[)]"
               "use device.kernel_table[(][)].supports[(]op, dtype, path[)]"
               "name the object: native_object[(]backend, .context.[)]"
               "use code[[].opencl.[]]")
  if(NOT out MATCHES "deprecated: ${expect}")
    message(FATAL_ERROR "no deprecation warning naming the replacement (${expect}):\n${out}")
  endif()
endforeach()
message(STATUS "accel 0.1's calls compile, each warned with its replacement")
