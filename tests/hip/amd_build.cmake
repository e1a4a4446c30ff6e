# hip.amd-build: the AMD build of the HIP plugin.
#   1. Every target of ACCEL_HIP_ARCHS has its code object in the plugin (an
#      offload bundle entry "hipv4-amdgcn-amd-amdhsa--<target>").
#   2. The plugin loads; accel-info then lists `hip` as available (a machine
#      with an AMD GPU) or unavailable with the HIP runtime's reason (a hip*
#      call and its hipError* code, or the missing /dev/kfd of a machine
#      without the amdgpu driver), never as a plugin that failed to load.
# -DPLUGIN=... -DARCHS="gfx908;..." -DINFO=<accel-info>
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)
file(STRINGS "${PLUGIN}" bundles REGEX "hipv4-amdgcn-amd-amdhsa--")
foreach(arch IN LISTS ARCHS)
  set(found FALSE)
  foreach(entry IN LISTS bundles)
    if(entry MATCHES "hipv4-amdgcn-amd-amdhsa--${arch}([^0-9a-z]|$)")
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${PLUGIN} has no code object for ${arch} (bundle entries: ${bundles})")
  endif()
endforeach()
execute_process(COMMAND ${INFO} --wide RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "\nhip: [^\n]*" line "\n${out}")
message(STATUS "accel-info:${line}")
expect_run(${rc} "${line}" 0 "hip: (available|unavailable — hip[A-Za-z]+ failed: hipError[A-Za-z]+ \\([0-9]+\\)|unavailable — no usable HIP device: |unavailable — no AMD GPU driver is loaded \\(/dev/kfd is absent)")
