# cmake -DFILES="a;b;c" -P check.cmake
# Fails when any of FILES lists a GPU runtime (libcudart, libcublas, libcuda,
# libOpenCL, Kokkos) among its NEEDED entries: only the plugins may.
find_program(READELF readelf REQUIRED)
foreach(f IN LISTS FILES)
  execute_process(COMMAND ${READELF} -d ${f} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${f} failed")
  endif()
  string(REGEX MATCHALL "NEEDED[^\n]*\\[[^]]*\\]" needed "${out}")
  foreach(n IN LISTS needed)
    if(n MATCHES "libcudart|libcublas|libcuda\\.|libOpenCL|kokkos|clblast")
      message(FATAL_ERROR "${f} links a GPU runtime directly: ${n}")
    endif()
  endforeach()
  message(STATUS "${f}: no GPU runtime among its NEEDED entries")
endforeach()
