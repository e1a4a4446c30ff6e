# The CUDA kernels' PTX (compute_90, what newer GPUs JIT-compile) assembles
# for sm_100 and sm_120 with no spills and no local memory.
#   cmake -DNVCC=<nvcc> -DSOURCES=<a.cu;b.cu> -DINCLUDE=<accel's core/include> -DWORK=<dir> -P ptx.cmake
get_filename_component(bin ${NVCC} DIRECTORY)
set(PTXAS ${bin}/ptxas)
file(MAKE_DIRECTORY ${WORK})
foreach(src ${SOURCES})
  get_filename_component(name ${src} NAME_WE)
  execute_process(COMMAND ${NVCC} -ptx -arch=compute_90 -std=c++17 -Werror=all-warnings -I${INCLUDE} ${src} -o ${WORK}/${name}.ptx
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "nvcc -ptx ${src} failed:\n${err}")
  endif()
  foreach(sm sm_100 sm_120)
    execute_process(COMMAND ${PTXAS} -arch=${sm} -warn-spills -warn-lmem-usage --warning-as-error
                            ${WORK}/${name}.ptx -o ${WORK}/${name}.${sm}.cubin
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(rc)
      message(FATAL_ERROR "ptxas -arch=${sm} ${name}.ptx failed:\n${err}")
    endif()
    message(STATUS "${name}: the compute_90 PTX assembles for ${sm}")
  endforeach()
endforeach()
