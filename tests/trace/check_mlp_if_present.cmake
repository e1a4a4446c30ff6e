# cmake -DMLP=mlp_train -DBACKEND=opencl:pocl -P check_mlp_if_present.cmake
# mlp_train on BACKEND under the environment's ACCEL_CHECK; SKIPPED when the
# backend has no device here (an OpenCL implementation not installed, CUDA
# without a GPU).
execute_process(COMMAND ${MLP} --backends ${BACKEND} --epochs 2 --format json OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 AND err MATCHES "cannot be used|no platform|matches no|not installed|no OpenCL")
  message("SKIPPED: ${BACKEND} is not available here:\n${err}")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlp_train --backends ${BACKEND} exited ${rc} under ACCEL_CHECK:\n${out}\n${err}")
endif()
