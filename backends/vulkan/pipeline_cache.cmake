# cmake -DCONFORMANCE=accel-conformance -DWORK=dir -P pipeline_cache.cmake
# The Vulkan pipeline cache file (ACCEL_CACHE_DIR/vulkan-pipelines-*.bin):
# written when a device closes, and a damaged one (truncated, garbage of the
# same size, a header claiming 4.6 EB) is never trusted: the next run passes
# and writes an intact file again. Prints SKIPPED when there is no Vulkan
# device; fails on any message of the validation layer when it is enabled.
cmake_minimum_required(VERSION 3.25)
set(cache ${WORK}/cache)
file(REMOVE_RECURSE ${cache})
function(run_add label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_CACHE_DIR=${cache} ACCEL_BACKEND=vulkan:0
                          ${CONFORMANCE} "--test-case=add matches the reference*"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(rc EQUAL 77)
    message("SKIPPED: ${out}")
    return()
  endif()
  if(NOT rc EQUAL 0 OR "${out}${err}" MATCHES "accel vulkan validation:")
    message(FATAL_ERROR "${label}: accel-conformance exited ${rc}\n${out}${err}")
  endif()
  file(GLOB files ${cache}/vulkan-pipelines-*.bin)
  list(LENGTH files n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "${label}: expected one pipeline cache file in ${cache}, found ${n}")
  endif()
  file(SIZE ${files} size)
  file(READ ${files} magic LIMIT 8)
  if(size LESS 56 OR NOT magic STREQUAL "accelPC1")
    message(FATAL_ERROR "${label}: ${files} is not an intact cache file (${size} bytes, starts '${magic}')")
  endif()
  set(cache_file ${files} PARENT_SCOPE)
  message(STATUS "${label}: passed; ${files}: ${size} bytes")
endfunction()

run_add("first run")
if(NOT cache_file)
  return()  # skipped
endif()
set(damages "truncated" "garbage" "huge")
foreach(damage IN LISTS damages)
  file(SIZE ${cache_file} size)
  if(damage STREQUAL "truncated")
    file(READ ${cache_file} head LIMIT 10)
    file(WRITE ${cache_file} "${head}")
  elseif(damage STREQUAL "garbage")
    string(REPEAT "x" ${size} junk)
    file(WRITE ${cache_file} "${junk}")
  else()
    # Our magic, then a byte count of 0x4040404040404040 ("@" × 8) and no data.
    file(WRITE ${cache_file} "accelPC1@@@@@@@@")
  endif()
  run_add("after a ${damage} file")
endforeach()
